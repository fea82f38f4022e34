"""Versions of shared records (decisions, team-visible memory atoms) in `team.db`.

Every `record.put` event is one version, kept forever (the full history). The current
view of a record is this machine's own unpushed version when it has one, else the
version latest in event order (the store's position, the same on every machine);
versions made from the same base with different content are concurrent edits, listed
as a conflict with the one the view shows.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from neuralmind import outbox

_COLUMNS = "author, seq, pos, ts, base_author, base_seq, payload"
_ORDER = "ORDER BY pos IS NULL DESC, pos DESC, seq DESC"


def insert(conn: sqlite3.Connection, rows: Sequence[tuple[str, int, int | None, Any]]) -> None:
    """(author, seq, pos or None, checked payload) as versions (known ones are kept)."""
    conn.executemany(
        "INSERT OR IGNORE INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(p["type"], p["id"], author, seq, pos, float(p["ts"]),
          *((p.get("base") or (None, None))[:2]), outbox.encode(p))
         for author, seq, pos, p in rows])


def current(conn: sqlite3.Connection, rtype: str, rid: str, pending: bool = True,
            ) -> dict[str, Any] | None:
    """The version the current view shows (`pending`: this machine's unpushed edit
    first); None when the record has no version."""
    where = "" if pending else " AND pos IS NOT NULL"
    row = conn.execute(f"SELECT {_COLUMNS} FROM records WHERE type = ? AND id = ?{where} "
                       f"{_ORDER} LIMIT 1", (rtype, rid)).fetchone()
    return version(row) if row else None


def history(conn: sqlite3.Connection, rtype: str, rid: str) -> list[dict[str, Any]]:
    """Every version, oldest first in event order (unpushed ones last)."""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM records WHERE type = ? AND id = ? "
                        "ORDER BY pos IS NULL, pos, seq", (rtype, rid)).fetchall()
    return [version(r) for r in rows]


def ids(conn: sqlite3.Connection, rtype: str) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT id FROM records WHERE type = ? ORDER BY id", (rtype,))]


def conflicts(conn: sqlite3.Connection, rtype: str | None = None) -> list[dict[str, Any]]:
    """Records edited concurrently: two or more versions made from the same base. Each
    lists the competing versions and which one the current view shows."""
    sql = ("SELECT type, id, base_author, base_seq FROM records "
           + ("WHERE type = ? " if rtype else "")
           + "GROUP BY type, id, base_author, base_seq HAVING count(*) > 1 ORDER BY type, id")
    out = []
    for t, rid, ba, bs in conn.execute(sql, (rtype,) if rtype else ()).fetchall():
        shown = current(conn, t, rid)
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM records WHERE type = ? AND id = ? AND base_author IS ? "
            "AND base_seq IS ? ORDER BY pos IS NULL, pos, seq", (t, rid, ba, bs)).fetchall()
        versions = [version(r) for r in rows]
        if len({outbox.encode(v["record"]) for v in versions}) < 2:
            continue    # the same change made twice (two machines' scans of one commit)
        for v in versions:
            v["current"] = bool(shown and (v["author"], v["seq"]) ==
                                (shown["author"], shown["seq"]))
        out.append({"type": t, "id": rid, "base": [ba, bs] if ba else None,
                    "versions": versions})
    return out


def version(row: Sequence[Any]) -> dict[str, Any]:
    author, seq, pos, ts, ba, bs, payload = row
    body = json.loads(payload)
    return {"author": author, "seq": int(seq), "pos": pos, "ts": ts,
            "base": [ba, bs] if ba else None, "record": body.get("record", {})}
