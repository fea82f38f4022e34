"""The store never loses learned memory: schema versions, failed migrations, corrupt and
locked databases, and two processes writing at once."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from synapse_testkit import T0

from neuralmind.synapse.db import is_corruption
from neuralmind.synapse.layer import SynapseLayer
from neuralmind.synapse.schema import MIGRATIONS, SCHEMA_VERSION, read_version
from neuralmind.synapse.store import SynapseStore


def test_new_store_is_wal_with_explicit_schema_version(tmp_path):
    store = SynapseStore(tmp_path / "s.db")
    assert store.schema_version == SCHEMA_VERSION
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    conn.close()
    store.close()


def test_failing_migration_rolls_back_and_keeps_memory(tmp_path, caplog):
    path = tmp_path / "s.db"
    store = SynapseStore(path)
    store.activate(["a.py", "b.py"], "personal", now=T0)
    store.close()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE new_stuff (x INTEGER)")
        conn.execute("UPDATE synapses SET weight = 0")  # would destroy memory if committed
        raise RuntimeError("bug in the next migration")

    newer = SynapseStore(path, migrations=[*MIGRATIONS, (SCHEMA_VERSION + 1, broken)])
    with caplog.at_level(logging.WARNING, logger="neuralmind.synapse"):
        assert newer.activate(["a.py", "c.py"], "personal", now=T0) == 0  # fails open
    assert "rolled back" in caplog.text
    assert newer.disabled
    newer.close()

    conn = sqlite3.connect(path)
    assert read_version(conn) == SCHEMA_VERSION
    assert conn.execute("SELECT name FROM sqlite_master WHERE name='new_stuff'").fetchone() is None
    assert conn.execute("SELECT a, b, weight FROM synapses").fetchall() == [("a.py", "b.py", 0.3)]
    conn.close()
    again = SynapseStore(path)  # the current version still opens and learns
    assert again.activate(["a.py", "c.py"], "personal", now=T0) == 1
    again.close()


def test_successful_migration_reaches_the_new_version(tmp_path):
    path = tmp_path / "s.db"
    SynapseStore(path).activate(["a.py", "b.py"], "personal", now=T0)

    def add_column(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE synapses ADD COLUMN note TEXT")

    store = SynapseStore(path, migrations=[*MIGRATIONS, (SCHEMA_VERSION + 1, add_column)])
    assert store.schema_version == SCHEMA_VERSION + 1
    assert store.activate(["a.py", "b.py"], "personal", now=T0) == 1
    store.close()


def test_newer_schema_is_left_alone(tmp_path):
    path = tmp_path / "s.db"
    SynapseStore(path).activate(["a.py", "b.py"], "personal", now=T0)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    store = SynapseStore(path)
    assert store.activate(["a.py", "c.py"], "personal", now=T0) == 0
    assert "newer" in (store.disabled or "")
    store.close()


def test_corrupt_database_is_moved_aside_and_a_new_one_started(tmp_path):
    state = tmp_path / ".neuralmind"
    state.mkdir()
    garbage = b"this is not a database" * 100
    (state / "synapses.db").write_bytes(garbage)
    layer = SynapseLayer(state, tmp_path)
    assert layer.activate(["a.py", "b.py"], now=T0) == 1
    kept = [p for p in state.iterdir() if p.name.startswith("synapses.db.corrupt-")]
    assert len(kept) == 1 and kept[0].read_bytes() == garbage
    assert layer.neighbors("a.py", now=T0) == [("b.py", pytest.approx(0.3))]
    layer.close()


def test_locked_database_fails_open_quickly(tmp_path, caplog):
    path = tmp_path / "s.db"
    store = SynapseStore(path, busy_timeout_ms=100)
    store.activate(["a.py", "b.py"], "personal", now=T0)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        t0 = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="neuralmind.synapse"):
            assert store.activate(["a.py", "b.py"], "personal", now=T0) == 0
            assert store.record_transitions([("a.py", "b.py")], "personal", now=T0) == 0
        assert time.monotonic() - t0 < 5
        assert "locked" in caplog.text
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.activate(["a.py", "b.py"], "personal", now=T0) == 1  # back to normal
    assert store.edges_of(["a.py"], {"personal": 1.0}, T0)["a.py"]["b.py"] == pytest.approx(0.51)
    store.close()


WORKER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from neuralmind.synapse.store import SynapseStore
    store = SynapseStore(Path(sys.argv[1]), busy_timeout_ms=20000)
    Path(sys.argv[2]).touch()
    while not Path(sys.argv[3]).exists():
        pass
    for i in range(int(sys.argv[4])):
        assert store.record_transitions([("a.py", "b.py")], "personal", now=1.0) == 1
        assert store.activate(["a.py", "b.py", f"w{sys.argv[5]}_{i}.py"], "personal", now=1.0) == 3
    store.close()
""")


def test_two_processes_activating_at_once_lose_no_update(tmp_path):
    db = tmp_path / "s.db"  # fresh: the two processes also race to create it
    go = tmp_path / "go"
    n = 150
    procs, ready = [], []
    for w in range(2):
        flag = tmp_path / f"ready{w}"
        ready.append(flag)
        procs.append(subprocess.Popen([sys.executable, "-c", WORKER, str(db), str(flag), str(go),
                                       str(n), str(w)]))
    deadline = time.monotonic() + 20
    while not all(f.exists() for f in ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT weight, count FROM transitions").fetchall() == [(2.0 * n, 2 * n)]
    assert conn.execute("SELECT count FROM synapses WHERE a='a.py' AND b='b.py'").fetchone()[0] == 2 * n
    assert conn.execute("SELECT count(*) FROM synapses").fetchone()[0] == 1 + 2 * 2 * n
    assert conn.execute("SELECT count FROM activations WHERE node='a.py'").fetchone()[0] == 2 * n
    conn.close()


def test_state_dir_path_is_the_workspace_one(tmp_path):
    layer = SynapseLayer(tmp_path / ".neuralmind", tmp_path)
    layer.activate(["a.py", "b.py"])
    assert Path(layer.stats()["path"]) == tmp_path / ".neuralmind" / "synapses.db"
    layer.close()


def test_only_damage_moves_the_store_aside(tmp_path):
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (a INTEGER CHECK (a > 0))")
    with pytest.raises(sqlite3.IntegrityError) as constraint:
        conn.execute("INSERT INTO t VALUES (-1)")
    assert not is_corruption(constraint.value)  # a bug is skipped, memory stays in place
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"x" * 4096)
    with pytest.raises(sqlite3.DatabaseError) as damaged:
        sqlite3.connect(bad).execute("PRAGMA journal_mode").fetchone()
    assert is_corruption(damaged.value)
