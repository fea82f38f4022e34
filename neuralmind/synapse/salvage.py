"""Rows still readable in a damaged synapses.db, copied into a new one before it replaces it.

Learned memory takes weeks to build, so a damaged file is not simply recreated empty. SQLite
stops a scan at the first unreadable page, and the tables are WITHOUT ROWID (no rowid ranges
to jump over), so each table is read along every b-tree that holds its rows (the primary
key, and for `synapses` the covering index `synapses_b`), forwards and backwards: a damaged
stretch in the middle is read up to from both sides, and a page one tree lost another tree
may still hold. After an unreadable page a scan seeks past it to the next key some other
scan has already seen. Uses only the stdlib sqlite3 (the `sqlite3 .recover` command-line
tool is not always installed).
"""

from __future__ import annotations

import logging
import sqlite3
from bisect import bisect_left, bisect_right
from pathlib import Path
from urllib.parse import quote

from neuralmind import outbox
from neuralmind.sqlite_tx import immediate

log = logging.getLogger("neuralmind.synapse")

# table -> (columns, primary key, other orders that a covering index can serve)
TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, ...], ...]]] = {
    "synapses": (("a", "b", "namespace", "weight", "count", "updated"), ("a", "b", "namespace"),
                 (("b", "namespace", "weight", "count", "updated", "a"),)),
    "transitions": (("src", "dst", "namespace", "weight", "count", "updated"),
                    ("src", "dst", "namespace"), ()),
    "activations": (("node", "namespace", "level", "count", "updated"), ("node", "namespace"), ()),
    "structural_edges": (("a", "b", "count"), ("a", "b"), ()),
    "questions": (("id", "namespace", "session", "query", "tokens", "hits", "files", "ts"),
                  ("id",), ()),
}
MAX_SEEKS = 500          # per scan: seeks past unreadable pages before giving up on that scan


def salvage_into(damaged: Path, fresh: sqlite3.Connection) -> dict[str, int]:
    """Copy every row of `damaged` that SQLite can still read into `fresh` (schema created,
    empty); the damaged file is only read (a copy of it is what SQLite opens). Returns rows
    copied per table."""
    copy = damaged.with_name(f".{damaged.name}.salvage-src")
    try:
        _readable_copy(damaged, copy)
        return _salvage(copy, fresh)
    finally:
        for p in (copy, *(copy.with_name(copy.name + s) for s in ("-wal", "-shm"))):
            p.unlink(missing_ok=True)


def _readable_copy(damaged: Path, copy: Path) -> None:
    """Copy the file (and its write-ahead log) so SQLite can open what is left of it: a
    truncated file still claims its old page count in the header, and SQLite then refuses
    even the schema; the copy claims only the pages it has."""
    data = bytearray(damaged.read_bytes())
    if len(data) >= 100 and data[:16] == b"SQLite format 3\x00":
        size = int.from_bytes(data[16:18], "big")
        page_size = 65536 if size == 1 else size
        pages = len(data) // page_size if page_size >= 512 else 0
        if pages and int.from_bytes(data[28:32], "big") > pages:
            data[28:32] = pages.to_bytes(4, "big")
    copy.write_bytes(bytes(data))
    wal = damaged.with_name(damaged.name + "-wal")
    if wal.is_file():
        copy.with_name(copy.name + "-wal").write_bytes(wal.read_bytes())


def _salvage(path: Path, fresh: sqlite3.Connection) -> dict[str, int]:
    try:
        old = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, isolation_level=None)
        present = {r[0] for r in old.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as e:
        log.info("nothing salvageable in %s: %s", path.name, e)
        return {}
    copied: dict[str, int] = {}
    try:
        with immediate(fresh):
            for table, (columns, key, orders) in TABLES.items():
                if table not in present:
                    continue
                rows = _readable_rows(old, table, columns, key, orders)
                fresh.executemany(f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) "
                                  f"VALUES ({', '.join('?' * len(columns))})", rows.values())
                copied[table] = len(rows)
            if "team_outbox" in present:
                copied["team_outbox"] = _salvage_outbox(old, fresh)
    finally:
        old.close()
    return copied


def _salvage_outbox(old: sqlite3.Connection, fresh: sqlite3.Connection) -> int:
    """The team events not pushed yet, under the old author and numbering when the old
    counter is readable (`outbox.carry`)."""
    rows = _readable_rows(old, "team_outbox", ("seq", "kind", "payload", "created"), ("seq",), ())
    outbox.carry(old, fresh)
    fresh.executemany("INSERT OR IGNORE INTO team_outbox VALUES (?, ?, ?, ?)", rows.values())
    return len(rows)


def _readable_rows(old: sqlite3.Connection, table: str, columns: tuple[str, ...],
                   key: tuple[str, ...], orders: tuple[tuple[str, ...], ...],
                   ) -> dict[tuple, tuple]:
    rows: dict[tuple, tuple] = {}
    position = {c: i for i, c in enumerate(columns)}
    for _ in range(2):          # a second round seeks with every key the first one found
        damaged = False
        for order in (key, *orders):
            for descending in (False, True):
                damaged |= _scan(old, table, columns, order, descending, rows,
                                 [position[c] for c in order], [position[c] for c in key])
        if not damaged:
            break
    return rows


def _scan(old: sqlite3.Connection, table: str, columns: tuple[str, ...], order: tuple[str, ...],
          descending: bool, rows: dict[tuple, tuple], order_at: list[int], key_at: list[int],
          ) -> bool:
    """Read `table` in `order` into `rows` (by primary key), seeking past unreadable pages
    to the next key an earlier scan has read (rows this scan reads all lie behind it).
    Returns whether a page could not be read."""
    cols, by = ", ".join(columns), ", ".join(order)
    direction, beyond = ("DESC", "<") if descending else ("ASC", ">")
    first = f"SELECT {cols} FROM {table} ORDER BY {by} {direction}"
    after = (f"SELECT {cols} FROM {table} WHERE ({by}) {beyond} ({', '.join('?' * len(order))}) "
             f"ORDER BY {by} {direction}")
    known: list[tuple] | None = None
    last: tuple | None = None
    for _ in range(MAX_SEEKS):
        try:
            for row in old.execute(first) if last is None else old.execute(after, last):
                rows[tuple(row[i] for i in key_at)] = row
                last = tuple(row[i] for i in order_at)
            return known is not None
        except sqlite3.DatabaseError:
            if known is None:
                known = sorted(tuple(r[i] for i in order_at) for r in rows.values())
            last = _next_known(known, last, descending)
            if last is None:
                return True
    return True


def _next_known(known: list[tuple], last: tuple | None, descending: bool) -> tuple | None:
    """The first known key beyond `last` in scan order (None: none). Seeking past it skips
    the page that failed; if it lies in that page too, the next call moves on."""
    if descending:
        i = len(known) if last is None else bisect_left(known, last)
        return known[i - 1] if i > 0 else None
    i = 0 if last is None else bisect_right(known, last)
    return known[i] if i < len(known) else None
