"""Keeping `team.db` bounded: folded log rows are dropped once they are behind the pulled
position.

The folded state and every record version stay. What a folded log row still did was
recognise its event when it comes again (re-sent after a crash, or pulled again from a
rebuilt store). An author's events reach the store in seq order (its outbox pushes
oldest first, and the store numbers a push in order), so the highest dropped seq per
author (`compacted`) recognises them all (`TeamLocal._known`). Malformed, waiting and
unechoed rows are kept.
"""

from __future__ import annotations

from neuralmind import config
from neuralmind.team.local import TeamLocal
from neuralmind.team.tables import DONE


def compact(local: TeamLocal, store_key: str, limit: int = config.TEAM_COMPACT_BATCH) -> int:
    """Drop up to `limit` folded log rows at or before the pulled position, in one
    transaction; how many."""
    with local.transaction() as conn:
        done = local.pulled(store_key)
        rows = conn.execute("SELECT author, seq FROM log WHERE state = ? AND pos <= ? "
                            "ORDER BY pos LIMIT ?", (DONE, done, limit)).fetchall()
        if not rows:
            return 0
        top: dict[str, int] = {}
        for author, seq in rows:
            top[author] = max(top.get(author, 0), int(seq))
        conn.executemany("INSERT INTO compacted VALUES (?, ?) ON CONFLICT (author) "
                         "DO UPDATE SET seq = max(seq, excluded.seq)", top.items())
        conn.executemany("DELETE FROM log WHERE author = ? AND seq = ?", rows)
        total = conn.execute("SELECT value FROM meta WHERE key = 'compacted_events'").fetchone()
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('compacted_events', ?)",
                     (str((int(total[0]) if total else 0) + len(rows)),))
        return len(rows)


def compact_all(local: TeamLocal, store_key: str) -> int:
    """Drop every folded row behind the pulled position, a batch per transaction."""
    total = 0
    while n := compact(local, store_key):
        total += n
    return total
