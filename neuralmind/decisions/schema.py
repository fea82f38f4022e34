"""The memory.db schema, its version, and opening a connection safely.

One SQLite file per project in WAL mode: readers never block the writer, and a
busy timeout makes concurrent writers (the editor's server, a stdio MCP process,
the CLI, a post-commit hook) wait for each other instead of failing.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from neuralmind.statedir import move_aside

log = logging.getLogger("neuralmind.decisions")

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 15_000

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,      -- insertion order, and the FTS rowid
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    rationale TEXT NOT NULL,
    decision_type TEXT NOT NULL,
    status TEXT NOT NULL,
    commit_sha TEXT,
    files_affected TEXT NOT NULL,              -- JSON lists from here on
    symbols_affected TEXT NOT NULL,
    rejected_alternatives TEXT NOT NULL,
    evidence TEXT NOT NULL,
    confidence REAL NOT NULL,
    tags TEXT NOT NULL,
    author TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    anchored_at TEXT NOT NULL,                 -- when the decision was recorded or restored
    depends_on TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS decisions_status ON decisions(status);
CREATE TABLE IF NOT EXISTS decision_fingerprints (
    decision_id TEXT NOT NULL,
    path TEXT NOT NULL,
    blob TEXT NOT NULL,
    PRIMARY KEY (decision_id, path)
);
CREATE TABLE IF NOT EXISTS decision_vectors (
    decision_id TEXT PRIMARY KEY,
    text_hash TEXT NOT NULL,                   -- of the embedded text (refresh only on change)
    vector BLOB NOT NULL                       -- float32, L2-normalised
);
"""
FTS_TABLE = ("CREATE VIRTUAL TABLE IF NOT EXISTS decisions_fts USING fts5("
             "title, rationale, tokenize='unicode61 remove_diacritics 2')")


class StoreError(Exception):
    """The decision store cannot be opened or used; the message says why."""


def fts5_available() -> bool:
    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(a)")
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return False
    return True


def connect(path: Path) -> sqlite3.Connection:
    """An autocommit connection (transactions are explicit) with WAL and a busy timeout."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def initialise(path: Path, use_fts: bool) -> None:
    """Create or check the schema; a file that is not a database is moved aside, never deleted."""
    try:
        conn = connect(path)
    except sqlite3.DatabaseError as e:
        if not _is_damage(e):    # a read-only or full folder: the file itself is fine
            raise StoreError(f"{path} cannot be opened for writing: {e}") from e
        move_aside(path, str(e))
        conn = connect(path)
    try:
        try:
            _create(conn, use_fts)
        except sqlite3.DatabaseError as e:
            if "not a database" not in str(e) and "malformed" not in str(e):
                raise
            conn.close()
            move_aside(path, str(e))
            conn = connect(path)
            _create(conn, use_fts)
    finally:
        conn.close()


def _is_damage(e: sqlite3.DatabaseError) -> bool:
    """Corrupt or not a database (moved aside), as opposed to an unwritable folder or disk."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (11, 26)      # SQLITE_CORRUPT, SQLITE_NOTADB
    return type(e) is sqlite3.DatabaseError


def _create(conn: sqlite3.Connection, use_fts: bool) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _TABLES.split(";"):
            if statement.strip():
                conn.execute(statement)
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif int(row[0]) > SCHEMA_VERSION:
            raise StoreError(f"memory.db has schema version {row[0]}; this NeuralMind knows "
                             f"{SCHEMA_VERSION}: upgrade NeuralMind")
        if use_fts:
            exists = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name='decisions_fts'").fetchone()
            dirty = conn.execute("SELECT value FROM meta WHERE key='fts_dirty'").fetchone()
            conn.execute(FTS_TABLE)
            if not exists or (dirty and dirty[0] == "1"):
                rebuild_fts(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def rebuild_fts(conn: sqlite3.Connection) -> None:
    """Re-index every decision (after writes made by a process without FTS5)."""
    conn.execute("DELETE FROM decisions_fts")
    conn.execute("INSERT INTO decisions_fts(rowid, title, rationale) "
                 "SELECT seq, title, rationale FROM decisions")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('fts_dirty', '0')")
