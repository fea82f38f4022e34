"""A process killed between committing a graph and writing the search index: the next
reader answers from the graph it finds, not from the older index, and says so.

Real processes killed with SIGKILL (no mocks): a server's save path (`open_for_serving`,
`update_files`, the index write deferred as a server defers it) and a build killed right
after its graph commit (`NEURALMIND_TEST_KILL_AT=after_save`)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from neuralmind.config import load_workspace_config
from neuralmind.engine.workspace import Workspace
from neuralmind.graph.store import stored_token
from neuralmind.index import generation
from neuralmind.index.save_journal import SaveJournal
from neuralmind.index.state_files import BM25_FILE, JOURNAL_FILE

SAVE_AND_DIE = """
import os, signal, sys
from pathlib import Path
from neuralmind.config import load_workspace_config
from neuralmind.engine.workspace import Workspace
root = Path(sys.argv[1])
ws = Workspace.open_for_serving(root, load_workspace_config(root))
for rel in sys.argv[2:]:
    ws.update_files([rel])          # searchable in this process; the index write deferred
hits = ws.search("settle_refund")[0]
assert hits[0].node.name == "settle_refund", [h.node.name for h in hits]
os.kill(os.getpid(), signal.SIGKILL)
"""

BUILD = "import sys; from neuralmind.engine.workspace import Workspace; " \
        "Workspace(sys.argv[1]).build(embed=False)"


def _repo(root: Path, n: int = 12) -> Path:
    (root / "shop").mkdir(parents=True)
    for i in range(n):
        (root / "shop" / f"orders{i}.py").write_text(
            f'"""Orders, part {i}."""\n\n\ndef place_order_{i}(cart):\n'
            f'    """Turn cart {i} into an order."""\n    return list(cart)\n', encoding="utf-8")
    Workspace(root).build(embed=False)
    return root


def _add_refund(root: Path, rel: str) -> None:
    p = root / rel
    p.write_text(p.read_text(encoding="utf-8") + '\n\ndef settle_refund(order):\n'
                 '    """Pay the quokkaberry refund back."""\n    return order\n', encoding="utf-8")


def _run(code: str, *args: str, env: dict[str, str] | None = None) -> int:
    return subprocess.run([sys.executable, "-c", code, *args], env={**os.environ, **(env or {})},
                          capture_output=True, timeout=120).returncode


def _top(ws: Workspace, question: str) -> str:
    return ws.search(question)[0][0].node.name


def test_a_server_killed_before_its_index_write_loses_no_save(tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture,
                                                              ) -> None:
    root = _repo(tmp_path / "ws")
    state = root / ".neuralmind"
    _add_refund(root, "shop/orders3.py")
    _add_refund(root, "shop/orders7.py")
    bm25_before = (state / BM25_FILE).stat().st_mtime_ns
    assert _run(SAVE_AND_DIE, str(root), "shop/orders3.py", "shop/orders7.py") == -signal.SIGKILL
    # the graph is committed, the index is not: the journal says which files
    assert (state / BM25_FILE).stat().st_mtime_ns == bm25_before
    assert SaveJournal(state).paths() == ["shop/orders3.py", "shop/orders7.py"]

    with caplog.at_level(logging.INFO, logger="neuralmind.index"):
        ws = Workspace(root)
        assert _top(ws, "settle_refund") == "settle_refund"
        assert _top(ws, "quokkaberry refund") == "settle_refund"
    assert "behind the graph" in caplog.text
    assert {h.node.file for h in ws.search("settle_refund", k=10)[0][:2]} == {
        "shop/orders3.py", "shop/orders7.py"}
    # a reader catches up in memory only: nothing written, the journal kept for the writer
    assert (state / BM25_FILE).stat().st_mtime_ns == bm25_before
    assert (state / JOURNAL_FILE).exists()
    # it looked at the journal's files' nodes, not the whole index
    fresh = Workspace(root)
    looked = generation.catch_up(fresh._open_index(catch_up=False), stored_token(state),
                                 lambda: fresh.graph)
    assert 0 < looked < len(fresh.graph.nodes) / 2

    # the next writer writes it and empties the journal; readers then have nothing to do
    Workspace(root).build(embed=False)
    assert not (state / JOURNAL_FILE).exists()
    after = Workspace(root)
    assert generation.catch_up(after._open_index(catch_up=False), stored_token(state),
                               lambda: after.graph) == 0
    assert _top(after, "settle_refund") == "settle_refund"


def test_a_build_killed_after_its_graph_commit_is_caught_up_node_by_node(tmp_path: Path) -> None:
    root = _repo(tmp_path / "ws")
    state = root / ".neuralmind"
    _add_refund(root, "shop/orders5.py")
    rc = _run(BUILD, str(root), env={"NEURALMIND_TEST_KILL_AT": "after_save"})
    assert rc == -signal.SIGKILL
    assert not (state / JOURNAL_FILE).exists()      # a build keeps no journal
    ws = Workspace(root)
    index = ws._open_index(catch_up=False)
    assert index.graph_token != stored_token(state)     # behind, and it can tell
    assert generation.catch_up(index, stored_token(state), lambda: ws.graph) == len(ws.graph.nodes)
    assert _top(Workspace(root), "settle_refund") == "settle_refund"


def test_a_current_index_costs_a_reader_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path / "ws")
    ws = Workspace(root)
    loaded: list[bool] = []
    index = ws._open_index(catch_up=False)
    assert index.graph_token == stored_token(root / ".neuralmind")
    assert generation.catch_up(index, stored_token(root / ".neuralmind"),
                               lambda: loaded.append(True) or ws.graph) == 0
    assert loaded == []         # the graph is not even loaded for the check


def test_a_serving_save_journals_and_the_flush_trims(tmp_path: Path) -> None:
    root = _repo(tmp_path / "ws")
    state = root / ".neuralmind"
    ws = Workspace.open_for_serving(root, load_workspace_config(root))
    _add_refund(root, "shop/orders1.py")
    ws.update_files(["shop/orders1.py"])
    assert SaveJournal(state).paths() == ["shop/orders1.py"]
    job = ws.begin_flush()              # a snapshot: the save above is in it
    assert job is not None
    _add_refund(root, "shop/orders2.py")
    ws.update_files(["shop/orders2.py"])        # made while the write runs
    job.run()
    ws.end_flush(job)
    assert SaveJournal(state).paths() == ["shop/orders2.py"]   # only what the write lacks
    ws.flush_index()
    assert not (state / JOURNAL_FILE).exists()
    assert Workspace(root).index.graph_token == stored_token(state)


def test_the_journal_keeps_newer_lines_and_skips_a_torn_one(tmp_path: Path) -> None:
    journal = SaveJournal(tmp_path)
    journal.append(["a.py", "b.py"])
    seq = journal.last
    journal.append(["c.py"])
    with open(tmp_path / JOURNAL_FILE, "ab") as f:
        f.write(b'[4, "d.p')                     # a kill mid-append
    assert SaveJournal(tmp_path).paths() == ["a.py", "b.py", "c.py"]
    assert SaveJournal(tmp_path).last == 3       # a new process numbers on from the last line
    journal.drop_through(seq)
    journal.drop_through(seq - 1)                # a write that ended late: drops nothing newer
    assert SaveJournal(tmp_path).paths() == ["c.py"]
    journal.drop_through(journal.last)
    assert not (tmp_path / JOURNAL_FILE).exists()
