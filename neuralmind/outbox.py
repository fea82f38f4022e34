"""The local transactional outbox: changes to team-shared state waiting to be pushed.

Each store that holds shared state (the synapse store's `shared` namespace, the memory
store's team-visible records) keeps an outbox in its own database, and `append` runs
inside the caller's SQLite transaction, on the connection of the local write it
accompanies: the local change and its outbox entry land together or not at all. The
team component collects the entries into its mirror and pushes them (a foundation
module, so a store below the team component can write its events without importing it).

Entries are numbered by AUTOINCREMENT (never reused, even after deletion): `(author,
seq)` names an event forever, so pushing one twice (a process killed after the server
committed and before `acknowledge`) is recognised by the server and ignored. The author
is generated once per outbox: two clones of one person, or two stores of one clone, are
two authors, so their numbers never collide.

The event kinds are named here, where producers and the team component both see them;
`neuralmind.team.events` documents and checks their payloads.
"""

from __future__ import annotations

import getpass
import json
import sqlite3
import uuid
from dataclasses import dataclass
from typing import Any

BATCH, SEED, WEAKEN, RECORD, QUESTION = (
    "synapse.batch", "synapse.seed", "synapse.weaken", "record.put", "retrieval.question")

TABLES = (
    """CREATE TABLE IF NOT EXISTS team_outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        created REAL NOT NULL
    )""",
    "CREATE TABLE IF NOT EXISTS team_outbox_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    seq: int
    kind: str
    payload: str     # JSON text
    created: float   # epoch seconds of the local write


def installed(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                        "name = 'team_outbox_meta'").fetchone() is not None


def install(conn: sqlite3.Connection) -> str:
    """Create the outbox tables if needed (inside the caller's transaction or schema
    migration); return this outbox's author id."""
    for statement in TABLES:
        conn.execute(statement)
    row = conn.execute("SELECT value FROM team_outbox_meta WHERE key = 'author'").fetchone()
    if row:
        return str(row[0])
    author = f"{_user()}@{uuid.uuid4().hex[:12]}"
    conn.execute("INSERT INTO team_outbox_meta VALUES ('author', ?)", (author,))
    return author


def author(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM team_outbox_meta WHERE key = 'author'").fetchone()
    if not row:
        raise sqlite3.OperationalError("the team outbox is not installed")
    return str(row[0])


def encode(payload: dict[str, Any]) -> str:
    """Canonical JSON: the same payload is the same text on every machine."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def append(conn: sqlite3.Connection, kind: str, payload: dict[str, Any], created: float) -> int:
    """Queue one event inside the caller's transaction; its seq."""
    cur = conn.execute("INSERT INTO team_outbox (kind, payload, created) VALUES (?, ?, ?)",
                       (kind, encode(payload), created))
    return int(cur.lastrowid or 0)


def pending(conn: sqlite3.Connection, limit: int) -> list[OutboxEntry]:
    if not installed(conn):
        return []
    rows = conn.execute("SELECT seq, kind, payload, created FROM team_outbox ORDER BY seq "
                        "LIMIT ?", (limit,)).fetchall()
    return [OutboxEntry(int(s), k, p, float(c)) for s, k, p, c in rows]


def count(conn: sqlite3.Connection) -> int:
    if not installed(conn):
        return 0
    return int(conn.execute("SELECT count(*) FROM team_outbox").fetchone()[0])


def acknowledge(conn: sqlite3.Connection, up_to: int) -> int:
    """Forget entries the server holds (seq <= up_to); how many."""
    return conn.execute("DELETE FROM team_outbox WHERE seq <= ?", (up_to,)).rowcount


def carry(old: sqlite3.Connection, fresh: sqlite3.Connection) -> bool:
    """Install the outbox of a store being salvaged into `fresh` (inside its transaction,
    before the readable entries are copied) with `old`'s author and numbering, when the
    old counter is readable: a new event must never reuse an (author, seq) the server
    already has (it would be taken for a re-sent one and dropped). Otherwise the outbox
    gets a new author (at worst one batch pushed but not acknowledged counts twice).
    Returns whether the identity was kept."""
    try:
        author = old.execute("SELECT value FROM team_outbox_meta WHERE key = 'author'").fetchone()
        counter = old.execute("SELECT seq FROM sqlite_sequence WHERE name = 'team_outbox'"
                              ).fetchone()
    except sqlite3.DatabaseError:
        author = counter = None
    for statement in TABLES:
        fresh.execute(statement)
    if author and counter:
        fresh.execute("INSERT OR IGNORE INTO team_outbox_meta VALUES ('author', ?)", author)
        fresh.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'team_outbox'",
                      counter)
        fresh.execute("INSERT INTO sqlite_sequence (name, seq) SELECT 'team_outbox', ? WHERE "
                      "NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'team_outbox')",
                      counter)
    install(fresh)
    return bool(author and counter)


def _user() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = "someone"
    return "".join(ch for ch in name if ch.isalnum() or ch in "-_.")[:32] or "someone"


class OutboxView:
    """A store's side of the team exchange, inside one of its transactions: its outbox, and
    which team mirror its shared rows show (kept in its `meta` table under `view_key`).
    The synapse and memory stores' views share this; each adds how a version is applied."""

    view_key = ""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def author(self) -> str | None:
        return author(self.conn) if installed(self.conn) else None

    def pending(self, limit: int) -> list[OutboxEntry]:
        return pending(self.conn, limit)

    def acknowledge(self, up_to: int) -> None:
        acknowledge(self.conn, up_to)

    def unsent(self) -> int:
        """Shared events in this store's outbox (not yet taken by the team sync)."""
        return count(self.conn)

    def shows(self) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (self.view_key,)).fetchone()
        return str(row[0]) if row else None

    def set_shows(self, mirror: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (self.view_key, mirror))

    def exchange_needed(self, mirror: str) -> bool:
        """Whether the team sync has something to collect here, or this store shows another
        mirror: a read, so the rounds with neither (most) take no write transaction."""
        return bool(self.unsent()) or self.shows() != mirror
