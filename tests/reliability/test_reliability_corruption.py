"""Damaged state files: detected at open, moved aside with a warning naming them (never
deleted), indexes rebuilt, learned memory recreated empty, and `neuralmind doctor` says so."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest
from reliability_support import cli, store_path

from neuralmind import outbox
from neuralmind.doctor import ERROR, OK, run_doctor
from neuralmind.engine import Workspace
from neuralmind.memory.sharing import share
from neuralmind.memory.store import MemoryStore

STORES = {  # file -> (doctor check, how a command opens it)
    "graph.db": "graph store",
    "bm25.bin": "keyword index",
    "vectors.npz": "vector index",
    "synapses.db": "synapse store",
    "memory.db": "decision memory",
}


def _damage(path: Path, how: str) -> bytes:
    data = path.read_bytes()
    if how == "truncate":
        bad = data[: len(data) // 2]
    elif how == "garbage":
        bad = bytes((b * 7 + 13) % 256 for b in data[:4096]) * (len(data) // 4096 + 1)
    else:  # one page in the middle overwritten
        mid = (len(data) // 2) & ~4095
        bad = data[:mid] + b"\xa5" * 4096 + data[mid + 4096:]
    path.write_bytes(bad)
    return bad


def _open_everything(root: Path) -> Workspace:
    """What the first command after the damage does: load graph and index, learn, consult."""
    ws = Workspace(root)
    ws.ensure_built()
    ws.query("normalise an invoice value before it is stored")
    ws.decisions.search("invoices rule", mode="keyword")
    return ws


@pytest.mark.parametrize("name", list(STORES))
@pytest.mark.parametrize("how", ["truncate", "garbage"])
def test_damaged_store_is_moved_aside_and_recreated(small_repo: Path, name: str, how: str,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    path = store_path(small_repo, name)
    state = path.parent
    bad = _damage(path, how)

    checks = {c.name: c for c in run_doctor(small_repo, model=False)}
    assert checks[STORES[name]].status == ERROR, checks[STORES[name]]
    assert name in checks[STORES[name]].message and checks[STORES[name]].fix

    with caplog.at_level(logging.WARNING):
        ws = _open_everything(small_repo)
    sides = list(state.glob(f"{name}.corrupt-*"))        # its -wal/-shm may go along
    assert len(sides) == 1, sorted(p.name for p in state.iterdir())
    assert sides[0].read_bytes() == bad                        # kept exactly, never deleted
    assert any(name in r.getMessage() and "moved aside" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]

    ws.build()                                                 # the index is whole again
    result = ws.query("normalise an invoice value before it is stored")
    assert result.mode == "hybrid" and result.hits
    if name == "memory.db":            # rebuilt from what was readable (nothing, for garbage)
        kept = ws.decisions.search("invoices rule", mode="keyword").to_json()["results"]
        assert {d["title"] for d in kept} <= {"Invoices rule 0 stays", "Invoices rule 1 stays"}
        assert how == "truncate" or kept == []
        ws.decisions.record("New rule", "Works again.", files=["pkg/mod003.py"])
    if name == "synapses.db":
        ws.feedback("pkg/mod001.py::helper_1", True, ["pkg/mod004.py"])
        assert ws.synapses.stats()["synapses"] >= 1
    ws.synapses.close()

    after = run_doctor(small_repo, model=False)
    assert [c for c in after if c.status == ERROR] == []
    assert all(c.status == OK for c in after if c.name == STORES[name])
    moved = [c for c in after if c.name == "moved aside"]
    assert moved and all(c.fix and name in c.message for c in moved), moved
    assert any(sides[0].name in c.message for c in moved)


def test_doctor_command_reports_damage_and_exits_1(small_repo: Path) -> None:
    _damage(store_path(small_repo, "synapses.db"), "garbage")
    done = cli("doctor", str(small_repo), "--no-model")
    assert done.returncode == 1
    assert "synapses.db is damaged" in done.stdout and "fix: " in done.stdout
    report = json.loads(cli("doctor", str(small_repo), "--no-model", "--json").stdout)
    assert report["status"] == "error"
    assert cli("synapse", "stats", str(small_repo)).returncode == 0    # moves it aside
    after = cli("doctor", str(small_repo), "--no-model")
    assert after.returncode == 0, after.stdout            # warnings only: it was recreated
    assert "a damaged synapses.db was moved aside" in after.stdout


def test_decision_memory_with_one_bad_page_keeps_its_readable_decisions(small_repo: Path) -> None:
    """A damaged page must not make every later decisions command fail, nor lose the rows
    SQLite can still read."""
    from neuralmind.memory.decisions.store import DecisionStore

    store = DecisionStore(small_repo)
    for i in range(150):
        store.record(f"Decision {i} about invoices", "because " * 40, files=["pkg/mod001.py"])
    path = store.path
    del store
    _damage(path, "page")

    fresh = DecisionStore(small_repo)
    found = fresh.search("invoices", mode="keyword", status="ALL", limit=100).to_json()["results"]
    assert len(found) >= 50                               # the readable decisions are kept
    fresh.record("After the damage", "Still works.", files=["pkg/mod002.py"])
    assert list(path.parent.glob("memory.db.corrupt-*"))  # the damaged file is kept aside


def test_a_rebuilt_memory_db_keeps_its_unpushed_team_writes(small_repo: Path) -> None:
    """#20: the team outbox lives in memory.db; a salvage carries its unpushed events, its
    author and its numbering (a reused seq would be dropped by the server as a duplicate)
    and the versions this machine shows, so no team write is silently lost."""
    store = MemoryStore(small_repo)
    share(store)
    for i in range(120):
        store.record(f"Decision {i} about invoices", "because " * 40, files=["pkg/mod001.py"])
    path = store.path
    del store
    conn = sqlite3.connect(path)
    outbox.acknowledge(conn, 80)                 # pushed: the server holds 1..80
    conn.commit()
    before = (outbox.author(conn), outbox.pending(conn, 1000),
              conn.execute("SELECT * FROM team_records ORDER BY id").fetchall())
    # one page of the atoms table, in the middle of the file
    pages = [p for (p,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'atoms' "
                                        "AND pagetype = 'leaf' ORDER BY pageno")]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    page = pages[len(pages) // 2]
    data[(page - 1) * 4096:page * 4096] = b"\xa5" * 4096
    path.write_bytes(bytes(data))

    fresh = MemoryStore(small_repo)
    share(fresh)
    assert fresh.search("invoices", mode="keyword", status="ALL", limit=10).to_json()["results"]
    assert list(path.parent.glob("memory.db.corrupt-*"))
    conn = sqlite3.connect(path)
    assert (outbox.author(conn), outbox.pending(conn, 1000),
            conn.execute("SELECT * FROM team_records ORDER BY id").fetchall()) == before
    conn.close()
    fresh.record("After the damage", "Still shared.", files=["pkg/mod002.py"])
    conn = sqlite3.connect(path)
    assert outbox.pending(conn, 1000)[-1].seq == 121      # numbered after, never reused
    conn.close()
