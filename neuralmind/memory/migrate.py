"""Upgrading memory.db from schema 1 (decisions only) to schema 2 (atoms), in one transaction.

Schema 1 held decisions in a `decisions` table with their files, symbols and tags as JSON
lists. Schema 2 makes each decision an atom of type `decision`: its title and rationale
become the atom's label and text, its files and symbols `about` edges (in their order),
its tags hubs, and the rest a `decision_records` row; fingerprints keep their table, and
the cached vectors move to `atom_vectors` (same text, same hash: nothing is re-embedded).
`seq` is kept, so recording order and the timeline do not change. The caller holds the
IMMEDIATE transaction: if any step fails, the rollback leaves the schema-1 file exactly
as it was, and nothing is lost.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from typing import Any

from neuralmind.memory.tables import TABLES, V1_TABLES

log = logging.getLogger("neuralmind.memory")

V1_SALVAGED = ("meta", "decisions", "decision_fingerprints", "decision_vectors")
MIGRATED_SOURCE = "decisions"     # the atoms' `source`: recorded as decisions before schema 2


def create_v1(conn: sqlite3.Connection) -> None:
    """The schema-1 tables (salvaging a damaged schema-1 file keeps its layout)."""
    for statement in V1_TABLES.split(";"):
        if statement.strip():
            conn.execute(statement)
    if conn.execute("SELECT 1 FROM meta WHERE key='schema_version'").fetchone() is None:
        conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")


def version_of(conn: sqlite3.Connection) -> int | None:
    """The stored schema version; None for an empty file (nothing to read or migrate)."""
    tables = {r[0]: r[1] for r in conn.execute("SELECT name, type FROM sqlite_master")}
    if "meta" in tables:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is not None:
            return int(row[0])
    if tables.get("decisions") == "table":
        return 1
    if "atoms" in tables:
        return 2
    return None


def _list(raw: Any, what: str, decision_id: str) -> list[str]:
    """A schema-1 JSON list column; text that is not one is kept as a one-item list."""
    try:
        value = json.loads(raw) if raw else []
    except (TypeError, ValueError):
        log.warning("decision %s: %s was not a JSON list; kept as one item", decision_id, what)
        return [str(raw)]
    if not isinstance(value, list):
        return [str(value)]
    return [str(v) for v in value]


def migrate_v1(conn: sqlite3.Connection) -> int:
    """Turn every schema-1 decision into an atom, inside the caller's transaction; returns
    how many were migrated. The schema-2 tables are created here (the caller creates the
    rest of schema 2 afterwards, in the same transaction)."""
    for statement in TABLES.split(";"):
        if statement.strip() and "CREATE VIEW" not in statement:
            conn.execute(statement)
    rows = conn.execute("SELECT * FROM decisions ORDER BY seq").fetchall()
    names = [d[0] for d in conn.execute("SELECT * FROM decisions LIMIT 0").description]
    for values in rows:
        r = dict(zip(names, values, strict=True))
        did = r["id"]
        conn.execute(
            "INSERT INTO atoms (seq, id, type, label, text, state, pinned, author, source, "
            "created_at, updated_at) VALUES (?, ?, 'decision', ?, ?, 'active', 0, ?, ?, ?, ?)",
            (r["seq"], did, r["title"], r["rationale"], r["author"], MIGRATED_SOURCE,
             r["created_at"], r["updated_at"]))
        conn.execute(
            "INSERT INTO decision_records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (did, r["decision_type"], r["status"], r["commit_sha"],
             json.dumps(_list(r["rejected_alternatives"], "rejected_alternatives", did)),
             json.dumps(_list(r["evidence"], "evidence", did)), r["confidence"],
             r["anchored_at"], json.dumps(_list(r["depends_on"], "depends_on", did))))
        targets = ([("file", f) for f in _list(r["files_affected"], "files_affected", did)]
                   + [("symbol", s) for s in _list(r["symbols_affected"], "symbols_affected",
                                                   did)])
        conn.executemany(
            "INSERT OR IGNORE INTO edges VALUES (?, 'about', ?, ?, ?, 'user', ?)",
            [(did, kind, dst, i, r["created_at"]) for i, (kind, dst) in enumerate(targets)])
        tags = list(dict.fromkeys(_list(r["tags"], "tags", did)))
        conn.executemany("INSERT OR IGNORE INTO hubs (name, created_at) VALUES (?, ?)",
                         [(t, r["created_at"]) for t in tags])
        conn.executemany("INSERT INTO atom_hubs VALUES (?, ?, ?)",
                         [(did, t, i) for i, t in enumerate(tags)])
    conn.execute("INSERT OR REPLACE INTO atom_vectors SELECT decision_id, text_hash, vector "
                 "FROM decision_vectors")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'decisions_fts'").fetchone():
        conn.execute("DROP TABLE decisions_fts")
    conn.execute("DROP TABLE decision_vectors")
    conn.execute("DROP INDEX IF EXISTS decisions_status")
    conn.execute("DROP TABLE decisions")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('fts_dirty', '1')")   # atoms_fts: rebuild
    log.info("memory.db upgraded to schema 2: %d decisions are now atoms", len(rows))
    return len(rows)
