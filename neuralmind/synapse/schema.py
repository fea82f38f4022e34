"""The synapse database schema and its migrations.

The schema version lives in the `meta` table. Migrations run in one IMMEDIATE
transaction: either the store reaches the new version or nothing changed, so a
migration bug never corrupts learned memory.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from neuralmind.sqlite_tx import immediate

Migration = tuple[int, Callable[[sqlite3.Connection], None]]


V1_STATEMENTS = (
    """CREATE TABLE synapses (
        a TEXT NOT NULL, b TEXT NOT NULL, namespace TEXT NOT NULL,
        weight REAL NOT NULL, count INTEGER NOT NULL, updated REAL NOT NULL,
        PRIMARY KEY (a, b, namespace), CHECK (a < b)
    ) WITHOUT ROWID""",
    # covering: spread reads every edge of a frontier node from either end without a PK lookup
    "CREATE INDEX synapses_b ON synapses (b, namespace, weight, count, updated)",
    """CREATE TABLE transitions (
        src TEXT NOT NULL, dst TEXT NOT NULL, namespace TEXT NOT NULL,
        weight REAL NOT NULL, count INTEGER NOT NULL, updated REAL NOT NULL,
        PRIMARY KEY (src, dst, namespace)
    ) WITHOUT ROWID""",
    """CREATE TABLE activations (
        node TEXT NOT NULL, namespace TEXT NOT NULL,
        level REAL NOT NULL, count INTEGER NOT NULL, updated REAL NOT NULL,
        PRIMARY KEY (node, namespace)
    ) WITHOUT ROWID""",
    """CREATE TABLE structural_edges (
        a TEXT NOT NULL, b TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (a, b)
    ) WITHOUT ROWID""",
    """CREATE TABLE questions (
        id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, session TEXT NOT NULL,
        query TEXT NOT NULL, tokens TEXT NOT NULL, hits TEXT NOT NULL,
        files TEXT NOT NULL, ts REAL NOT NULL
    )""",
)


def _v1(conn: sqlite3.Connection) -> None:
    """Namespaced synapses, transitions, activations, structural edges and questions."""
    for statement in V1_STATEMENTS:
        conn.execute(statement)


MIGRATIONS: Sequence[Migration] = ((1, _v1),)
SCHEMA_VERSION = MIGRATIONS[-1][0]


def read_version(conn: sqlite3.Connection) -> int:
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> int:
    """Bring the database to the last migration's version in one transaction; return it.

    Raises on failure after rolling back, leaving the database as it was.
    """
    target = migrations[-1][0] if migrations else 0
    if read_version(conn) >= target:
        return read_version(conn)
    with immediate(conn):
        current = read_version(conn)  # another process may have migrated meanwhile
        for version, step in migrations:
            if version > current:
                step(conn)
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute("INSERT INTO meta(key, value) VALUES('schema_version', ?) "
                             "ON CONFLICT(key) DO UPDATE SET value=excluded.value", (str(version),))
    return read_version(conn)
