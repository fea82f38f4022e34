"""Feedback that cannot be skipped: every atom surfaced to an agent session is pending.

Recall registers what it returns to a session (and counts it served). Past
FEEDBACK_GRACE_SECONDS, that session's next recall gets a notice listing its unrated
atoms instead of results; a verdict (`rate`) clears an atom; past
FEEDBACK_TIMEOUT_SECONDS an unrated atom clears by itself, as exposure with no verdict.
Time is the store's clock, which tests set instead of sleeping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neuralmind import config

if TYPE_CHECKING:
    import sqlite3

    from neuralmind.memory.db import MemoryDB


def register(store: MemoryDB, conn: sqlite3.Connection, session: str, ids: list[str],
             now: float) -> None:
    """Inside a write: `ids` were served to `session` at `now`."""
    count_served(store, conn, ids)
    conn.executemany("INSERT OR IGNORE INTO pending VALUES (?, ?, ?)",   # the first serving counts
                     [(i, session, now) for i in ids])


def count_served(store: MemoryDB, conn: sqlite3.Connection, ids: list[str]) -> None:
    """Inside a write: `ids` were surfaced once more (exposure)."""
    conn.executemany("UPDATE atoms SET served = served + 1 WHERE id = ?", [(i,) for i in ids])
    for i in ids:
        store.note("feedback", i)


def overdue(store: MemoryDB, session: str, now: float) -> list[dict[str, str]]:
    """The session's atoms unrated past the grace window (after clearing the timed-out)."""
    with store.write() as conn:
        conn.execute("DELETE FROM pending WHERE served_at <= ?",
                     (now - config.FEEDBACK_TIMEOUT_SECONDS,))
    rows = store.connection().execute(
        "SELECT a.id, a.label FROM pending p JOIN atoms a ON a.id = p.atom_id "
        "WHERE p.session = ? AND p.served_at <= ? ORDER BY p.served_at, a.seq",
        (session, now - config.FEEDBACK_GRACE_SECONDS)).fetchall()
    return [{"id": r[0], "label": r[1]} for r in rows]


def of_session(store: MemoryDB, session: str) -> list[dict[str, object]]:
    """Everything still pending for `session`, oldest first."""
    rows = store.connection().execute(
        "SELECT a.id, a.label, p.served_at FROM pending p JOIN atoms a ON a.id = p.atom_id "
        "WHERE p.session = ? ORDER BY p.served_at, a.seq", (session,)).fetchall()
    return [{"id": r[0], "label": r[1], "served_at": r[2]} for r in rows]


def notice(unrated: list[dict[str, str]]) -> str:
    ids = ", ".join(u["id"] for u in unrated)
    return (f"{len(unrated)} recalled memories are waiting for your verdict: rate each one "
            f"used, useful or noise (neuralmind_rate / `neuralmind memory rate ID VERDICT`) "
            f"before recalling again: {ids}")
