"""`team.db`'s tables, their migrations, and folding operations into a state table.

v1 (phase 1): meta, the outbox, the replicated log, the folded shared state, the
overlay of unechoed own events, record versions.
v2: `collected` (events other stores wrote in their own outboxes, waiting to be pushed
under their own author), `dirty` (shared targets whose visible value changed since a
store last materialised them), `dirty_records` (the same for record views) and
`compacted` (per author, the highest seq whose folded log rows were dropped).
v3: `questions` (teammates' questions from answers scored by use, kept whole: questions.py).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable

from neuralmind import outbox
from neuralmind.sqlite_tx import immediate
from neuralmind.team import fold, questions
from neuralmind.team.fold import Op, State

SCHEMA_VERSION = 3

# log.state: OWN (ours, not yet echoed by the store: in the overlay), WAIT (position known,
# not folded yet: a gap before it), DONE (folded into shared), BAD (malformed: kept, skipped)
OWN, WAIT, DONE, BAD = 0, 1, 2, 3

_V1 = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS log (
        author TEXT NOT NULL, seq INTEGER NOT NULL,
        kind TEXT NOT NULL, payload TEXT NOT NULL,
        pos INTEGER,                     -- the store's position; NULL until pushed and seen
        state INTEGER NOT NULL,
        PRIMARY KEY (author, seq)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS log_pos ON log (pos) WHERE pos IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS log_own ON log (seq) WHERE state = 0",
    """CREATE TABLE IF NOT EXISTS shared (
        target TEXT PRIMARY KEY, weight REAL NOT NULL, count INTEGER NOT NULL,
        updated REAL NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS overlay (
        target TEXT PRIMARY KEY, weight REAL NOT NULL, count INTEGER NOT NULL,
        updated REAL NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS records (
        type TEXT NOT NULL, id TEXT NOT NULL, author TEXT NOT NULL, seq INTEGER NOT NULL,
        pos INTEGER, ts REAL NOT NULL, base_author TEXT, base_seq INTEGER,
        payload TEXT NOT NULL,
        PRIMARY KEY (type, id, author, seq)
    ) WITHOUT ROWID""",
)
_V2 = (
    """CREATE TABLE IF NOT EXISTS collected (
        author TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
        payload TEXT NOT NULL, created REAL NOT NULL,
        PRIMARY KEY (author, seq)
    ) WITHOUT ROWID""",
    "CREATE TABLE IF NOT EXISTS dirty (target TEXT PRIMARY KEY, gen INTEGER NOT NULL) "
    "WITHOUT ROWID",
    """CREATE TABLE IF NOT EXISTS dirty_records (
        type TEXT NOT NULL, id TEXT NOT NULL, gen INTEGER NOT NULL, PRIMARY KEY (type, id)
    ) WITHOUT ROWID""",
    "CREATE TABLE IF NOT EXISTS compacted (author TEXT PRIMARY KEY, seq INTEGER NOT NULL) "
    "WITHOUT ROWID",
)


def _version(conn: sqlite3.Connection) -> int:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:
        return 0     # no tables yet
    return int(row[0]) if row else 0


def migrate(conn: sqlite3.Connection) -> str:
    """Bring `team.db` to SCHEMA_VERSION in one IMMEDIATE transaction (refusing a newer
    one) and return the outbox's author. A current file is only read: opening a mirror
    must not queue for its write lock."""
    if _version(conn) == SCHEMA_VERSION:
        return outbox.author(conn)
    with immediate(conn):
        version = _version(conn)
        if version > SCHEMA_VERSION:
            raise sqlite3.OperationalError(
                f"team.db has schema v{version}, newer than this NeuralMind's "
                f"(v{SCHEMA_VERSION})")
        for statement in (*_V1, *_V2, questions.TABLE):
            conn.execute(statement)
        if 0 < version < 2:
            # everything folded so far is new to the stores that show it
            conn.execute("INSERT OR REPLACE INTO dirty SELECT target, 1 FROM shared "
                         "UNION SELECT target, 1 FROM overlay")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                     (str(SCHEMA_VERSION),))
        return outbox.install(conn)


def apply(conn: sqlite3.Connection, table: str, ops: list[Op],
          fallback: str | None = None) -> set[str]:
    """Fold `ops` (in order) into `table`; a target missing there starts from its row in
    `fallback` (the overlay starts from the shared state). Returns the targets."""
    if not ops:
        return set()
    by_target: dict[str, list[Op]] = defaultdict(list)
    for o in ops:
        by_target[o.target].append(o)
    current = rows(conn, table, list(by_target))
    if fallback:
        current = rows(conn, fallback, [t for t in by_target if t not in current]) | current
    out = []
    for tgt, mine in by_target.items():
        cur = current.get(tgt)
        state = fold.fold(fold.kind_of(tgt), mine, State(*cur) if cur else None)
        assert state is not None
        out.append((tgt, state.weight, state.count, state.updated))
    conn.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?, ?, ?, ?)", out)
    return set(by_target)


def rows(conn: sqlite3.Connection, table: str, targets: list[str],
         ) -> dict[str, tuple[float, int, float]]:
    """The stored rows of `targets` in `table`, 500 per query."""
    out: dict[str, tuple[float, int, float]] = {}
    for i in range(0, len(targets), 500):
        chunk = targets[i:i + 500]
        out.update((t, (w, c, u)) for t, w, c, u in conn.execute(
            f"SELECT target, weight, count, updated FROM {table} WHERE target IN "
            f"({','.join('?' * len(chunk))})", chunk))
    return out


def mark_dirty(conn: sqlite3.Connection, targets: Iterable[str],
               records: Iterable[tuple[str, str]] = ()) -> None:
    """Shared targets and records whose visible value changed: a store showing them
    materialises them again. Each mark carries a new generation, so clearing what was
    materialised never clears a newer mark."""
    targets, records = sorted(set(targets)), sorted(set(records))
    if not targets and not records:
        return
    row = conn.execute("SELECT value FROM meta WHERE key = 'dirty_gen'").fetchone()
    gen = (int(row[0]) if row else 1) + 1
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('dirty_gen', ?)", (str(gen),))
    conn.executemany("INSERT OR REPLACE INTO dirty VALUES (?, ?)",
                     [(t, gen) for t in targets])
    conn.executemany("INSERT OR REPLACE INTO dirty_records VALUES (?, ?, ?)",
                     [(t, i, gen) for t, i in records])
