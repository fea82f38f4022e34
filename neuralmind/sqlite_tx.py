"""One SQLite write transaction: BEGIN IMMEDIATE ... COMMIT, ROLLBACK on any error.

IMMEDIATE takes the write lock up front, so two processes' read-modify-write steps
serialise (the second waits in the busy handler) instead of losing an update or
failing with SQLITE_BUSY at its first write, which a deferred transaction that has
already read cannot wait out. Every store's writes go through `immediate`, so the
rule (and the rollback when anything goes wrong, a kill point or KeyboardInterrupt
included) lives in one place.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator


@contextlib.contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """`conn` (opened with isolation_level=None) inside one IMMEDIATE transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
