"""DecisionStore: CRUD, validation, schema, export/import and concurrent use, on real SQLite."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest
from decision_helpers import commit_all, git, write

from neuralmind.memory.decisions.store import DecisionNotFound, DecisionStore
from neuralmind.memory.schema import SCHEMA_VERSION


def test_created_on_first_use_with_wal_and_schema_version(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    assert not (tmp_path / ".neuralmind").exists()          # constructing opens nothing
    store.record("Use WAL", "Readers never block the writer.")
    db = tmp_path / ".neuralmind" / "memory.db"
    assert db.is_file()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"decisions", "decision_fingerprints", "decision_vectors", "meta", "decisions_fts"} <= tables


def test_record_get_and_json_shape(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Pool connections", "Opening a connection costs 40 ms.", files=["./pool.py"],
                     symbols=["pool.py::Pool.acquire"], rejected=["connect per request"],
                     evidence=["bench 2026-01"], confidence=0.9, tags=["perf"], author="ana")
    got = store.get(d.id[:8])                                # unique prefixes resolve
    assert got.to_json() == d.to_json()
    j = got.to_json()
    for key in ("id", "title", "rationale", "decision_type", "status", "commit_sha", "files_affected",
                "symbols_affected", "rejected_alternatives", "evidence", "confidence", "tags",
                "author", "created_at", "updated_at", "depends_on", "fingerprints"):
        assert key in j
    json.dumps(j)
    assert j["status"] == "ACTIVE" and j["files_affected"] == ["pool.py"]
    assert j["commit_sha"] == git(repo, "rev-parse", "HEAD")
    assert j["fingerprints"] == {"pool.py": git(repo, "hash-object", "pool.py")}


def test_symbol_paths_join_the_files(tmp_path: Path) -> None:
    d = DecisionStore(tmp_path).record("T", "R", symbols=["src/a.py::A.f"])
    assert d.files_affected == ["src/a.py"] and d.symbols_affected == ["src/a.py::A.f"]


@pytest.mark.parametrize("kwargs, message", [
    ({"title": " ", "rationale": "r"}, "title"),
    ({"title": "t", "rationale": ""}, "rationale"),
    ({"title": "t", "rationale": "r", "confidence": 1.5}, "confidence"),
    ({"title": "t", "rationale": "r", "symbols": ["no-separator"]}, "path::Qualified.name"),
    ({"title": "t", "rationale": "r", "commit": "0" * 40}, "not in this repository"),
])
def test_bad_input_is_a_clear_value_error(repo: Path, kwargs: dict, message: str) -> None:
    store = DecisionStore(repo)
    with pytest.raises(ValueError, match=message):
        store.record(**kwargs)
    assert store.decisions() == []


def test_unknown_dependency_and_id(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    store.record("t", "r", decision_id="fixedid1")
    with pytest.raises(ValueError, match="already exists"):
        store.record("t2", "r2", decision_id="fixedid1")
    with pytest.raises(DecisionNotFound, match="no decision"):
        store.record("t", "r", depends_on=["nope-nope"])
    with pytest.raises(DecisionNotFound):
        store.get("abcdef")


def test_amend_invalidate_restore(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Pool connections", "Old reason.", files=["pool.py"], evidence=["e1"])
    write(repo, "pool.py", "changed = True\n")
    a = store.amend(d.id, rationale="New reason.", evidence=["e2"], rejected=["r1"], confidence=0.5)
    assert (a.rationale, a.evidence, a.rejected_alternatives, a.confidence) == ("New reason.", ["e1", "e2"], ["r1"], 0.5)
    assert a.fingerprints["pool.py"] == git(repo, "hash-object", "pool.py")   # re-fingerprinted
    i = store.invalidate(d.id, "superseded by the async driver")
    assert i.status == "INVALIDATED" and i.evidence[-1] == "Invalidated: superseded by the async driver"
    with pytest.raises(ValueError):
        store.invalidate(d.id, "  ")
    head = commit_all(repo, "change pool")
    r = store.restore(d.id)
    assert r.status == "ACTIVE" and r.commit_sha == head
    assert r.fingerprints == {"pool.py": git(repo, "rev-parse", "HEAD:pool.py")}
    assert store.get(d.id).to_json() == r.to_json()


def test_statuses_are_case_insensitive_and_validated(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    d = store.record("Alpha decision", "alpha")
    store.invalidate(d.id, "no")
    assert [x.id for x in store.decisions("invalidated")] == [d.id]
    assert store.search("alpha", mode="keyword", status="active").records == []
    assert len(store.search("alpha", mode="keyword", status="All").records) == 1
    with pytest.raises(ValueError, match="unknown status"):
        store.search("alpha", mode="keyword", status="gone")


def test_export_import_round_trip_json_and_md(repo: Path, tmp_path: Path) -> None:
    src = DecisionStore(repo)
    a = src.record("Pool connections", "Costly connects.", files=["pool.py"], rejected=["per request"],
                   symbols=["pool.py::Pool.acquire"], tags=["perf"])
    b = src.record("Readme is short", "Keep it <!-- tricky --> short.", depends_on=[a.id])
    src.invalidate(b.id, "we wrote docs")
    for fmt in ("json", "md"):
        dest = DecisionStore(tmp_path / f"dest-{fmt}")
        text = src.export(fmt)
        first = dest.import_text(text)
        assert sorted(first.imported) == sorted([a.id, b.id]) and not first.errors
        again = dest.import_text(text)                       # idempotent by id
        assert again.imported == [] and sorted(again.skipped) == sorted([a.id, b.id])
        assert [d.to_json() for d in dest.decisions()] == [d.to_json() for d in src.decisions()]
        assert dest.search("connects", mode="keyword").records[0].id == a.id   # indexed on import


def test_import_reports_bad_records_and_keeps_good_ones(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    report = store.import_text(json.dumps([{"id": "x1", "title": "Good", "rationale": "fine"},
                                           {"id": "x2", "title": "", "rationale": "no title"},
                                           {"id": "x3", "title": "T", "rationale": "r", "status": "odd"}]))
    assert report.imported == ["x1"] and len(report.errors) == 2
    with pytest.raises(ValueError, match="JSON"):
        store.import_text("[not json", "json")


def test_damaged_database_is_moved_aside_not_deleted(tmp_path: Path) -> None:
    state = tmp_path / ".neuralmind"
    state.mkdir()
    (state / "memory.db").write_bytes(b"this is not sqlite" * 100)
    store = DecisionStore(tmp_path)
    store.record("After damage", "works")
    assert [p.name for p in state.iterdir() if ".corrupt-" in p.name]
    assert len(store.decisions()) == 1


def test_ten_threads_record_and_query_at_once_nothing_lost(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    other = DecisionStore(tmp_path)                          # a second handle, like another process
    errors: list[BaseException] = []
    per_thread = 15

    def work(n: int) -> None:
        try:
            s = store if n % 2 else other
            for i in range(per_thread):
                s.record(f"Thread {n} decision {i}", f"rationale about widgets number{n}x{i}")
                found = s.search(f"number{n}x{i}", mode="keyword", limit=5).records
                assert any(d.title == f"Thread {n} decision {i}" for d in found)
        except BaseException as e:  # reported below, with the thread's failure
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    titles = {d.title for d in DecisionStore(tmp_path).decisions()}
    assert len(titles) == 10 * per_thread
    assert len(store.search("widgets", mode="keyword", limit=1000).records) == 10 * per_thread
