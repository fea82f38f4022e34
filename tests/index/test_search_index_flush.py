"""Deferred search-index writes: a server's per-save updates reach disk at `flush()`."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

from neuralmind.engine import Workspace
from neuralmind.index.keyword_flush import KeywordFlush
from neuralmind.index.postings import FlatPostings
from neuralmind.index.search_index import BM25_FILE, SearchIndex

FILES = {
    "pkg/session.py": "class Session:\n    def send(self, request):\n        return request\n",
    "pkg/retry.py": "def backoff_delay(attempt):\n    return 2 ** attempt\n",
}


def make_workspace(root: Path) -> Workspace:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    ws = Workspace(root)
    ws.build(embed=False)
    return ws


def found(index: SearchIndex, name: str) -> bool:
    return any(h.id.endswith("::" + name) for h in index.search(name, mode="keyword").hits)


def add_function(root: Path, rel: str, name: str) -> None:
    path = root / rel
    path.write_text(path.read_text() + f"\n\ndef {name}(value):\n    return value\n")


def test_deferred_writes_reach_readers_at_flush(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    ws.index.defer_writes = True
    reader = SearchIndex(ws.state, root=ws.root)
    add_function(ws.root, "pkg/retry.py", "jitter_window")
    ws.update_files(["pkg/retry.py"])
    assert found(ws.index, "jitter_window") and ws.index.unsaved
    assert not reader.reload_if_changed() and not found(reader, "jitter_window")
    assert ws.index.flush() and not ws.index.unsaved and not ws.index.flush()
    assert reader.reload_if_changed() and found(reader, "jitter_window")
    docs = FlatPostings.open(ws.state / BM25_FILE).ids
    meta = json.loads((ws.state / "search_meta.json").read_text(encoding="utf-8"))
    assert "pkg/retry.py::jitter_window" in docs
    assert meta["nodes"]["pkg/retry.py::jitter_window"][0] == "jitter_window"
    assert sorted(meta["nodes"]) == sorted(docs)
    assert not ws.index.reload_if_changed()        # its own files: nothing to reload


def test_unsaved_changes_give_way_to_another_writers_generation(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    ws.index.defer_writes = True
    add_function(ws.root, "pkg/session.py", "close_adapters")
    ws.update_files(["pkg/session.py"])
    assert ws.index.unsaved
    other = Workspace(ws.root)                       # e.g. the CLI or the build process
    add_function(ws.root, "pkg/retry.py", "max_attempts")
    other.build(embed=False)
    assert ws.index.reload_if_changed() and not ws.index.unsaved
    assert found(ws.index, "close_adapters") and found(ws.index, "max_attempts")


def test_a_flush_never_overwrites_another_writers_generation(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    ws.index.defer_writes = True
    add_function(ws.root, "pkg/session.py", "close_adapters")
    ws.update_files(["pkg/session.py"])
    add_function(ws.root, "pkg/retry.py", "max_attempts")
    Workspace(ws.root).build(embed=False)            # another process, before our flush
    assert not ws.index.flush() and not ws.index.unsaved
    reader = SearchIndex(ws.state, root=ws.root)
    assert found(reader, "max_attempts") and found(reader, "close_adapters")


def _ranking(index: SearchIndex, query: str) -> list[tuple[str, float]]:
    with index._lock:
        return [(i, round(s, 9)) for i, s in index._bm25.search_terms(query.split(), 50)]


def _flush_begun(tmp_path: Path) -> tuple[Workspace, KeywordFlush]:
    """A workspace whose index writes are deferred, a save made, and its flush snapshotted."""
    ws = make_workspace(tmp_path / "ws")
    ws.index.defer_writes = True
    add_function(ws.root, "pkg/retry.py", "jitter_window")
    ws.update_files(["pkg/retry.py"])
    job = ws.begin_flush()
    assert job is not None
    return ws, job


def test_a_flush_written_off_the_engine_thread_keeps_the_saves_made_meanwhile(
        tmp_path: Path) -> None:
    """`begin_flush` snapshots, `KeywordFlush.run` writes (any thread), `end_flush` serves
    the written base with the saves made between snapshot and write applied again."""
    ws, job = _flush_begun(tmp_path)
    # saves while it is written: a function added, one renamed away
    add_function(ws.root, "pkg/session.py", "close_adapters")
    ws.update_files(["pkg/session.py"])
    path = ws.root / "pkg/retry.py"
    path.write_text(path.read_text().replace("backoff_delay", "backoff_seconds"))
    ws.update_files(["pkg/retry.py"])
    writer = threading.Thread(target=job.run)
    writer.start()
    writer.join()
    ws.end_flush(job)
    assert not ws.index.written_elsewhere()
    # served: every save; on disk: the snapshot (a reader of the files)
    for name in ("jitter_window", "close_adapters", "backoff_seconds"):
        assert found(ws.index, name)
    assert not found(ws.index, "backoff_delay")
    reader = SearchIndex(ws.state, root=ws.root)
    assert found(reader, "jitter_window") and found(reader, "backoff_delay")
    assert not found(reader, "close_adapters")
    # the served index scores as a fresh build of the same files does
    copy = tmp_path / "copy"
    shutil.copytree(ws.root, copy, ignore=shutil.ignore_patterns(".neuralmind"))
    fresh = Workspace(copy)
    fresh.build(embed=False)
    queries = ("backoff seconds attempt", "close adapters", "session send request", "value")
    served = [_ranking(ws.index, q) for q in queries]
    assert all(served) and served == [_ranking(fresh.index, q) for q in queries]
    assert ws.index.unsaved and ws.index.flush()
    assert found(SearchIndex(ws.state, root=ws.root), "close_adapters")


def test_a_flush_job_behind_a_newer_write_writes_nothing(tmp_path: Path) -> None:
    ws, job = _flush_begun(tmp_path)
    add_function(ws.root, "pkg/session.py", "close_adapters")
    ws.update_files(["pkg/session.py"])
    assert ws.index.flush()                      # e.g. before a build: all of it, now
    job.run()
    ws.end_flush(job)
    assert job.written is None and not ws.index.unsaved
    reader = SearchIndex(ws.state, root=ws.root)
    assert found(reader, "jitter_window") and found(reader, "close_adapters")
    assert found(ws.index, "close_adapters")


def test_overlapping_flush_jobs_serve_every_save_and_write_the_latest(tmp_path: Path) -> None:
    """Two flushes in flight (a pause's and the build's end): the older job writes nothing
    once the newer has, and only the newer snapshot's base is taken in."""
    ws = make_workspace(tmp_path / "ws")
    ws.index.defer_writes = True
    add_function(ws.root, "pkg/retry.py", "jitter_window")
    ws.update_files(["pkg/retry.py"])
    older = ws.begin_flush()
    add_function(ws.root, "pkg/session.py", "close_adapters")
    ws.update_files(["pkg/session.py"])
    newer = ws.begin_flush()
    add_function(ws.root, "pkg/retry.py", "max_attempts")
    ws.update_files(["pkg/retry.py"])
    assert older is not None and newer is not None
    newer.run()
    older.run()
    ws.end_flush(older)
    ws.end_flush(newer)
    assert older.written is None and newer.written is not None
    for name in ("jitter_window", "close_adapters", "max_attempts"):
        assert found(ws.index, name)
    reader = SearchIndex(ws.state, root=ws.root)
    assert found(reader, "close_adapters") and not found(reader, "max_attempts")
    assert ws.index.unsaved and ws.index.flush()
    assert found(SearchIndex(ws.state, root=ws.root), "max_attempts")
