"""A schema-1 memory.db (decisions only) becomes schema 2 (atoms) in one transaction:
nothing lost, order kept, vectors carried; a failure rolls everything back."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from neuralmind.memory import migrate, schema
from neuralmind.memory.decisions.store import DecisionStore
from neuralmind.memory.search import atom_text, text_hash
from neuralmind.memory.store import MemoryStore
from neuralmind.memory.tables import V1_FTS

ROWS = [
    {"id": "aaaa000000000001", "title": "Use PostgreSQL for orders",
     "rationale": "Orders need transactions.", "decision_type": "architecture",
     "status": "ACTIVE", "commit_sha": "1" * 40, "files_affected": ["db/engine.py", "db/a.py"],
     "symbols_affected": ["db/engine.py::Engine.connect"], "rejected_alternatives": ["MongoDB"],
     "evidence": ["incident 7"], "confidence": 0.9, "tags": ["storage", "orders"],
     "author": "ana", "created_at": "2025-01-01T00:00:00+00:00",
     "updated_at": "2025-01-02T00:00:00+00:00", "anchored_at": "2025-01-01T00:00:00+00:00",
     "depends_on": []},
    {"id": "aaaa000000000002", "title": "Money as integer cents",
     "rationale": "Floats drift; the ledger must add up.", "decision_type": "api",
     "status": "STALE", "commit_sha": None, "files_affected": [], "symbols_affected": [],
     "rejected_alternatives": [], "evidence": ["Marked STALE: commit abc changed x"],
     "confidence": 0.8, "tags": [], "author": "bo", "created_at": "2025-02-01T00:00:00+00:00",
     "updated_at": "2025-02-01T00:00:00+00:00", "anchored_at": "2025-02-01T00:00:00+00:00",
     "depends_on": ["aaaa000000000001"]},
]
LIST_FIELDS = ("files_affected", "symbols_affected", "rejected_alternatives", "evidence", "tags",
               "depends_on")


def write_v1(root: Path, rows: list[dict], fingerprints: dict[str, dict[str, str]] | None = None,
             vectors: bool = True) -> Path:
    """A memory.db exactly as schema 1 stored decisions (FTS index and cached vectors too)."""
    state = root / ".neuralmind"
    state.mkdir(parents=True, exist_ok=True)
    path = state / "memory.db"
    conn = sqlite3.connect(path)
    migrate.create_v1(conn)
    conn.execute(V1_FTS)
    for r in rows:
        cur = conn.execute(
            "INSERT INTO decisions (id, title, rationale, decision_type, status, commit_sha, "
            "files_affected, symbols_affected, rejected_alternatives, evidence, confidence, tags, "
            "author, created_at, updated_at, anchored_at, depends_on) VALUES "
            "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (r["id"], r["title"], r["rationale"], r["decision_type"], r["status"], r["commit_sha"],
             *(json.dumps(r[f]) for f in LIST_FIELDS[:4]), r["confidence"], json.dumps(r["tags"]),
             r["author"], r["created_at"], r["updated_at"], r["anchored_at"],
             json.dumps(r["depends_on"])))
        conn.execute("INSERT INTO decisions_fts(rowid, title, rationale) VALUES (?, ?, ?)",
                     (cur.lastrowid, r["title"], r["rationale"]))
        if vectors:
            vec = np.full(384, 1 / np.sqrt(384), dtype=np.float32)
            conn.execute("INSERT INTO decision_vectors VALUES (?, ?, ?)",
                         (r["id"], text_hash(atom_text(r["title"], r["rationale"])), vec.tobytes()))
    for did, prints in (fingerprints or {}).items():
        conn.executemany("INSERT INTO decision_fingerprints VALUES (?, ?, ?)",
                         [(did, p, b) for p, b in prints.items()])
    conn.commit()
    conn.close()
    return path


def digest(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def test_v1_decisions_become_atoms_with_nothing_lost(tmp_path: Path) -> None:
    prints = {"aaaa000000000001": {"db/engine.py": "b" * 40}}
    path = write_v1(tmp_path, ROWS, prints)
    store = MemoryStore(tmp_path)
    got = [d.to_json() for d in store.decisions()]
    for want, have in zip(ROWS, got, strict=True):
        assert {k: have[k] for k in want} == want
    assert got[0]["fingerprints"] == prints["aaaa000000000001"]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "2"
    kinds = dict(conn.execute("SELECT name, type FROM sqlite_master WHERE name IN "
                              "('decisions', 'decision_vectors', 'decisions_fts', 'atoms')"))
    assert kinds == {"decisions": "view", "decision_vectors": "view", "decisions_fts": "view",
                     "atoms": "table"}
    assert [r[0] for r in conn.execute("SELECT id FROM atoms ORDER BY seq")] == [r["id"] for r in ROWS]
    assert conn.execute("SELECT count(*) FROM atom_vectors").fetchone()[0] == 2      # carried
    # the schema-1 shape still reads through the views
    assert conn.execute("SELECT title, files_affected, tags FROM decisions WHERE seq = 1").fetchone() \
        == ("Use PostgreSQL for orders", '["db/engine.py","db/a.py"]', '["storage","orders"]')
    conn.close()
    atom = store.atom("aaaa000000000001")
    assert atom.type == "decision" and atom.hubs == ["storage", "orders"]
    assert atom.about == ["db/engine.py", "db/a.py", "db/engine.py::Engine.connect"]
    assert store.search("transactions", mode="keyword").records[0].id == "aaaa000000000001"
    assert store.memory_timeline("aaaa000000000002", before=1)["before"][0]["id"] == ROWS[0]["id"]
    assert MemoryStore(tmp_path).decisions()[1].status == "STALE"       # a second open is a no-op


def test_a_failed_migration_rolls_back_to_the_schema_1_file(tmp_path: Path) -> None:
    rows = [dict(ROWS[0], id=f"bbbb{i:012d}", title=f"Decision {i} " + "word " * 60)
            for i in range(300)]
    path = write_v1(tmp_path, rows)
    conn = schema.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = digest(path)
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 8}")      # the disk fills up mid-way
    with pytest.raises(sqlite3.OperationalError, match="full"):
        schema._create(conn, use_fts=True)
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "1"
    assert conn.execute("SELECT count(*) FROM decisions").fetchone()[0] == 300
    assert conn.execute("SELECT type FROM sqlite_master WHERE name='decisions'").fetchone()[0] == "table"
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name='atoms'").fetchone() is None
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert digest(path) == before                                   # byte for byte
    store = DecisionStore(tmp_path)                                 # room again: it migrates
    assert [d.id for d in store.decisions()] == [r["id"] for r in rows]


def test_read_only_schema_1_store_is_read_through_an_upgraded_copy(tmp_path: Path) -> None:
    path = write_v1(tmp_path, ROWS)
    before = digest(path)
    conn = schema.connect_read_only(path)
    titles = [r[0] for r in conn.execute("SELECT label FROM atoms ORDER BY seq")]
    assert titles == [r["title"] for r in ROWS]
    conn.close()
    assert digest(path) == before


def test_damaged_schema_1_file_is_salvaged_then_migrated(tmp_path: Path) -> None:
    path = write_v1(tmp_path, ROWS)
    copy = tmp_path / "intact.db"
    shutil.copy(path, copy)
    copied = schema.salvage(path, "test damage", use_fts=True)
    assert copied["decisions"] == 2
    assert [d.title for d in DecisionStore(tmp_path).decisions()] == [r["title"] for r in ROWS]
    assert list(path.parent.glob("memory.db.corrupt-*"))          # the original kept aside
