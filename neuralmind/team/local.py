"""The local mirror of the team store: `<state>/team.db` (SQLite, WAL).

It holds the outbox (this clone's events not yet pushed), the replicated log (every
event known here, ours and pulled, keyed by `(author, seq)`), the folded shared state,
and the versions of shared records.

Shared state is folded in the store's order (event positions), the same on every
machine. An event that arrives before one of the positions ahead of it waits in the
log until the gap fills. This clone's own events have no position until the store
echoes them back; meanwhile they are folded, in their own order, into an *overlay* on
top of the shared state (what this machine shows), which is rebuilt whenever the shared
rows under it change and is empty once everything is pushed and pulled.

A local write to shared state is one IMMEDIATE transaction: outbox entry, log entry and
overlay together. An ingest of pulled events is one transaction too and moves the
pulled position in it: a process killed anywhere re-fetches and re-applies exactly what
it had not committed, and nothing twice (an event already in the log is never folded
again).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from neuralmind import config
from neuralmind.team import events as ev
from neuralmind.team import fold, outbox
from neuralmind.team.fold import Op, State
from neuralmind.team.remote import RemoteEvent

log = logging.getLogger("neuralmind.team")

DB_NAME = "team.db"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 15_000
INGEST_CHUNK = 250   # events folded per transaction: a local write never waits long for it

# log.state: OWN (ours, not yet echoed by the store: in the overlay), WAIT (position known,
# not folded yet: a gap before it), DONE (folded into shared), BAD (malformed: kept, skipped)
OWN, WAIT, DONE, BAD = 0, 1, 2, 3

_TABLES = (
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


class TeamLocal:
    """The team state of one workspace on this machine."""

    def __init__(self, state_dir: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(state_dir) / DB_NAME
        self.clock = clock
        self._local = threading.local()
        self._init_lock = threading.Lock()
        self._author: str | None = None
        self._tx_lock = threading.Lock()     # one write transaction of this process at a time
        self._turn_lock = threading.Lock()
        self._waiting = 0                    # writers queued on _tx_lock

    # --- connections ---------------------------------------------------------------------
    def connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                   isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            with self._init_lock:
                self._author = self._migrate(conn)
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    @staticmethod
    def _migrate(conn: sqlite3.Connection) -> str:
        """Create the tables in one IMMEDIATE transaction; refuse a newer schema. A current
        file is only read: opening a mirror must not queue for its write lock."""
        try:
            version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'"
                                   ).fetchone()
            if version and int(version[0]) == SCHEMA_VERSION:
                return outbox.author(conn)
        except sqlite3.OperationalError:
            pass   # no tables yet
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _TABLES:
                conn.execute(statement)
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row and int(row[0]) > SCHEMA_VERSION:
                raise sqlite3.OperationalError(
                    f"team.db has schema v{row[0]}, newer than this NeuralMind's "
                    f"(v{SCHEMA_VERSION})")
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                         (str(SCHEMA_VERSION),))
            author = outbox.install(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return author

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction, taken in turn with this process's other writers.

        SQLite's busy handler re-tries a waiting writer only every few to 100 ms, so a
        sync ingesting a backlog chunk after chunk would starve the editor's own writes
        (seen: 15 s busy timeouts after a 60 s outage at load 60). A process-local lock
        wakes the waiter at once, and `ingest` lets waiting writers go between chunks."""
        with self._turn_lock:
            self._waiting += 1
        with self._tx_lock:
            with self._turn_lock:
                self._waiting -= 1
            with self._immediate() as conn:
                yield conn

    @contextlib.contextmanager
    def _immediate(self) -> Iterator[sqlite3.Connection]:
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @property
    def author(self) -> str:
        self.connection()
        assert self._author is not None
        return self._author

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # --- local writes (outbox + log + overlay, one transaction) ----------------------------
    def write(self, kind: str, payload: dict[str, Any]) -> int:
        """Record a change to shared state made here; its seq. ValueError when malformed."""
        try:
            ops = ev.operations(kind, payload)   # checked before anything is written
        except ev.BadEvent as e:
            raise ValueError(f"{kind}: {e}") from None
        with self._write() as conn:
            seq = outbox.append(conn, kind, payload, self.clock())
            conn.execute("INSERT INTO log VALUES (?, ?, ?, ?, NULL, ?)",
                         (self.author, seq, kind, outbox.encode(payload), OWN))
            if kind == ev.RECORD:
                self._record_rows(conn, [(self.author, seq, None, payload)])
            _apply(conn, "overlay", ops, fallback="shared")
        return seq

    def learn_batch(self, pairs: Iterable[tuple[str, str]], touched: Sequence[str] = (),
                    transitions: Iterable[tuple[str, str]] = (), ts: float | None = None,
                    rate: float = config.LEARNING_RATE) -> int:
        return self.write(ev.BATCH, {
            "ts": self._ts(ts), "rate": rate, "pairs": [list(p) for p in pairs],
            "touched": list(touched), "transitions": [list(t) for t in transitions]})

    def seed(self, pairs: dict[tuple[str, str], float], activations: dict[str, float] | None = None,
             ts: float | None = None) -> int:
        return self.write(ev.SEED, {
            "ts": self._ts(ts), "pairs": [[a, b, w, 1] for (a, b), w in sorted(pairs.items())],
            "activations": [[n, v] for n, v in sorted((activations or {}).items())]})

    def weaken(self, pairs: Iterable[tuple[str, str]], factor: float,
               ts: float | None = None) -> int:
        return self.write(ev.WEAKEN, {"ts": self._ts(ts), "factor": factor,
                                      "pairs": [list(p) for p in pairs]})

    def used(self, node: str, query: str | None = None, ts: float | None = None) -> int:
        payload: dict[str, Any] = {"ts": self._ts(ts), "node": node}
        if query:
            payload["query"] = query
        return self.write(ev.USED, payload)

    def put_record(self, rtype: str, rid: str, record: dict[str, Any],
                   base: tuple[str, int] | None | bool = True, ts: float | None = None,
                   ) -> tuple[str, int]:
        """A new version of a shared record; `base` defaults to the current version seen
        here (an edit of what this machine shows). Returns the version's (author, seq)."""
        if base is True:
            cur = self.record_current(rtype, rid)
            base = (cur["author"], cur["seq"]) if cur else None
        seq = self.write(ev.RECORD, {"ts": self._ts(ts), "type": rtype, "id": rid,
                                     "record": record, "base": list(base) if base else None})
        return self.author, seq

    def _ts(self, ts: float | None) -> float:
        return self.clock() if ts is None else float(ts)

    # --- the outbox ----------------------------------------------------------------------
    def pending(self, limit: int = config.TEAM_PUSH_BATCH) -> list[outbox.OutboxEntry]:
        return outbox.pending(self.connection(), limit)

    def pending_count(self) -> int:
        return outbox.count(self.connection())

    def acknowledge(self, up_to: int) -> int:
        with self._write() as conn:
            return outbox.acknowledge(conn, up_to)

    # --- pulled events -------------------------------------------------------------------
    def pulled(self, store_key: str) -> int:
        """The last position folded here (everything up to it is folded)."""
        row = self.connection().execute("SELECT value FROM meta WHERE key = ?",
                                        (f"pulled:{store_key}",)).fetchone()
        return int(row[0]) if row else 0

    def reset_pulled(self, store_key: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (f"pulled:{store_key}",))

    def ingest(self, store_key: str, batch: Sequence[RemoteEvent]) -> int:
        """Take pulled events (any order) and fold everything that is now contiguous after
        the pulled position, a chunk per transaction. Returns how many were new here."""
        new = 0
        for i in range(0, len(batch), INGEST_CHUNK):
            deadline = time.monotonic() + 1.0
            while self._waiting and time.monotonic() < deadline:
                time.sleep(0.001)        # a local write is queued: it goes first
            with self._write() as conn:
                new += self._ingest_chunk(conn, store_key, batch[i:i + INGEST_CHUNK])
        return new

    def _ingest_chunk(self, conn: sqlite3.Connection, store_key: str,
                      chunk: Sequence[RemoteEvent]) -> int:
        key = f"pulled:{store_key}"
        mark = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        done = int(mark[0]) if mark else 0
        todo = [e for e in chunk if e.pos > done]
        known = self._known(conn, todo)
        # (author, seq, kind, payload, where it comes from): "new", "own" echo, or "log"
        # (arrived earlier, waiting for a gap before it)
        seq_by_pos: dict[int, tuple[str, int, str, str, str]] = {
            pos: (a, s, k, p, "log") for pos, a, s, k, p in conn.execute(
                "SELECT pos, author, seq, kind, payload FROM log WHERE pos > ? AND state = ?",
                (done, WAIT))}
        for e in todo:
            state = known.get((e.author, e.seq))
            if state is None:
                seq_by_pos[e.pos] = (e.author, e.seq, e.kind, e.payload, "new")
                known[(e.author, e.seq)] = WAIT
            elif state == OWN:           # our own event, back with its position
                seq_by_pos[e.pos] = (e.author, e.seq, e.kind, e.payload, "own")
        fresh, moved, ops = [], [], []
        records: list[tuple[str, int, int | None, Any]] = []
        echoed = False
        for pos in sorted(seq_by_pos):
            author, seq, kind, text, origin = seq_by_pos[pos]
            state = WAIT
            if pos == done + 1:          # contiguous: fold it now, in position order
                done = pos
                try:
                    payload = json.loads(text)
                    ops.extend(ev.operations(kind, payload))
                    state = DONE
                    if kind == ev.RECORD and origin != "own":
                        records.append((author, seq, pos, payload))
                except (ValueError, ev.BadEvent) as bad:
                    log.warning("team event %s/%d (%s) is malformed and kept unapplied: %s",
                                author, seq, kind, bad)
                    state = BAD
            if origin == "new":
                fresh.append((author, seq, kind, text, pos, state))
            else:
                moved.append((pos, state, author, seq))
                echoed = echoed or origin == "own"
        conn.executemany("INSERT INTO log VALUES (?, ?, ?, ?, ?, ?)", fresh)
        conn.executemany("UPDATE log SET pos = ?, state = ? WHERE author = ? AND seq = ?", moved)
        if echoed:
            conn.executemany("UPDATE records SET pos = ? WHERE author = ? AND seq = ?",
                             [(pos, a, sq) for pos, _, a, sq in moved])
        self._record_rows(conn, records)
        touched = _apply(conn, "shared", ops)
        if echoed or touched & self._overlay_targets(conn):
            self._rebuild_overlay(conn)
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(done)))
        return len(fresh)

    @staticmethod
    def _known(conn: sqlite3.Connection, batch: Sequence[RemoteEvent]
               ) -> dict[tuple[str, int], int]:
        out: dict[tuple[str, int], int] = {}
        by_author: dict[str, list[int]] = defaultdict(list)
        for e in batch:
            by_author[e.author].append(e.seq)
        for author, seqs in by_author.items():
            for i in range(0, len(seqs), 500):
                chunk = seqs[i:i + 500]
                rows = conn.execute(
                    f"SELECT seq, state FROM log WHERE author = ? AND seq IN "
                    f"({','.join('?' * len(chunk))})", (author, *chunk))
                out.update(((author, int(s)), int(st)) for s, st in rows)
        return out

    @staticmethod
    def _overlay_targets(conn: sqlite3.Connection) -> set[str]:
        return {r[0] for r in conn.execute("SELECT target FROM overlay")}

    def _rebuild_overlay(self, conn: sqlite3.Connection) -> None:
        """Our unechoed events, in their order, on top of the shared state."""
        conn.execute("DELETE FROM overlay")
        ops: list[Op] = []
        for kind, text in conn.execute("SELECT kind, payload FROM log WHERE state = ? "
                                       "ORDER BY seq", (OWN,)):
            ops.extend(ev.operations(kind, json.loads(text)))
        _apply(conn, "overlay", ops, fallback="shared")

    @staticmethod
    def _record_rows(conn: sqlite3.Connection,
                     rows: Sequence[tuple[str, int, int | None, Any]]) -> None:
        conn.executemany(
            "INSERT OR IGNORE INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(p["type"], p["id"], author, seq, pos, float(p["ts"]),
              *((p.get("base") or (None, None))[:2]), outbox.encode(p))
             for author, seq, pos, p in rows])

    # --- reading shared state ------------------------------------------------------------
    def shared_rows(self, kind: str | None = None, visible: bool = False,
                    ) -> list[tuple[str, float, int, float]]:
        """(target, stored weight, count, updated) of every shared row, by target: the
        store's fold (what every machine agrees on), or with `visible` this machine's
        view (its unechoed events on top)."""
        where, params = "", ()
        if kind:
            where = " WHERE target >= ? AND target < ?"
            params = (kind + fold.SEP, kind + chr(ord(fold.SEP) + 1))
        if visible:
            sql = (f"SELECT target, weight, count, updated FROM overlay{where} UNION ALL "
                   f"SELECT target, weight, count, updated FROM shared{where}"
                   f"{' AND' if where else ' WHERE'} target NOT IN (SELECT target FROM overlay)")
            params = params * 2
        else:
            sql = f"SELECT target, weight, count, updated FROM shared{where}"
        return sorted(tuple(r) for r in self.connection().execute(sql, params))

    def synapse_weights(self, now: float | None = None) -> dict[tuple[str, str], float]:
        """Effective shared synapse weights at `now` as this machine sees them (a < b)."""
        t = self._ts(now)
        out = {}
        for tgt, w, c, u in self.shared_rows(fold.SYNAPSE, visible=True):
            _, a, b = tgt.split(fold.SEP)
            out[(a, b)] = fold.effective(fold.SYNAPSE, State(w, c, u), t)
        return out

    def state_hash(self) -> str:
        """A digest of the folded shared state and the current record versions: equal on
        two machines exactly when their shared state is."""
        h = hashlib.sha256()
        for row in self.shared_rows():
            h.update(repr(row).encode("utf-8"))
        for r in self.connection().execute(
                "SELECT type, id FROM records GROUP BY type, id ORDER BY type, id"):
            cur = self.record_current(r[0], r[1], pending=False)
            h.update(repr((r[0], r[1], cur and (cur["author"], cur["seq"]))).encode("utf-8"))
        return h.hexdigest()

    # --- records -------------------------------------------------------------------------
    _ORDER = "ORDER BY pos IS NULL DESC, pos DESC, seq DESC"

    def record_current(self, rtype: str, rid: str, pending: bool = True) -> dict[str, Any] | None:
        """The version the current view shows: this machine's unpushed edit when it has one
        (`pending`), else the one latest in event order (the server's position)."""
        where = "" if pending else " AND pos IS NOT NULL"
        row = self.connection().execute(
            "SELECT author, seq, pos, ts, base_author, base_seq, payload FROM records "
            f"WHERE type = ? AND id = ?{where} {self._ORDER} LIMIT 1", (rtype, rid)).fetchone()
        return _version(row) if row else None

    def record_history(self, rtype: str, rid: str) -> list[dict[str, Any]]:
        """Every version, oldest first in event order (unpushed ones last)."""
        rows = self.connection().execute(
            "SELECT author, seq, pos, ts, base_author, base_seq, payload FROM records "
            "WHERE type = ? AND id = ? ORDER BY pos IS NULL, pos, seq", (rtype, rid)).fetchall()
        return [_version(r) for r in rows]

    def records(self, rtype: str) -> list[dict[str, Any]]:
        """The current version of every record of a type."""
        ids = [r[0] for r in self.connection().execute(
            "SELECT DISTINCT id FROM records WHERE type = ? ORDER BY id", (rtype,))]
        return [v for v in (self.record_current(rtype, i) for i in ids) if v]

    def conflicts(self, rtype: str | None = None) -> list[dict[str, Any]]:
        """Records edited concurrently: two or more versions made from the same base.
        Each lists the competing versions and which one the current view shows."""
        sql = ("SELECT type, id, base_author, base_seq FROM records "
               + ("WHERE type = ? " if rtype else "")
               + "GROUP BY type, id, base_author, base_seq HAVING count(*) > 1 ORDER BY type, id")
        out = []
        conn = self.connection()
        for t, rid, ba, bs in conn.execute(sql, (rtype,) if rtype else ()).fetchall():
            current = self.record_current(t, rid)
            rows = conn.execute(
                "SELECT author, seq, pos, ts, base_author, base_seq, payload FROM records "
                "WHERE type = ? AND id = ? AND base_author IS ? AND base_seq IS ? "
                "ORDER BY pos IS NULL, pos, seq", (t, rid, ba, bs)).fetchall()
            versions = [_version(r) for r in rows]
            for v in versions:
                v["current"] = bool(current and (v["author"], v["seq"]) ==
                                    (current["author"], current["seq"]))
            out.append({"type": t, "id": rid, "base": [ba, bs] if ba else None,
                        "versions": versions})
        return out

    # --- status --------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        conn = self.connection()
        by_state = dict(conn.execute("SELECT state, count(*) FROM log GROUP BY state").fetchall())
        return {
            "events": sum(by_state.values()),
            "unpushed": outbox.count(conn),
            "unechoed": by_state.get(OWN, 0),
            "waiting": by_state.get(WAIT, 0),
            "malformed": by_state.get(BAD, 0),
            "shared_rows": int(conn.execute("SELECT count(*) FROM shared").fetchone()[0]),
            "records": int(conn.execute("SELECT count(DISTINCT type || ':' || id) FROM records")
                           .fetchone()[0]),
        }


def _version(row: Sequence[Any]) -> dict[str, Any]:
    author, seq, pos, ts, ba, bs, payload = row
    body = json.loads(payload)
    return {"author": author, "seq": int(seq), "pos": pos, "ts": ts,
            "base": [ba, bs] if ba else None, "record": body.get("record", {})}


def _apply(conn: sqlite3.Connection, table: str, ops: list[Op],
           fallback: str | None = None) -> set[str]:
    """Fold `ops` (in order) into `table`; a target missing there starts from its row in
    `fallback` (the overlay starts from the shared state). Returns the targets."""
    if not ops:
        return set()
    by_target: dict[str, list[Op]] = defaultdict(list)
    for o in ops:
        by_target[o.target].append(o)
    current = _rows(conn, table, list(by_target))
    if fallback:
        current = _rows(conn, fallback, [t for t in by_target if t not in current]) | current
    rows = []
    for tgt, mine in by_target.items():
        cur = current.get(tgt)
        state = fold.fold(fold.kind_of(tgt), mine, State(*cur) if cur else None)
        assert state is not None
        rows.append((tgt, state.weight, state.count, state.updated))
    conn.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?, ?, ?, ?)", rows)
    return set(by_target)


def _rows(conn: sqlite3.Connection, table: str, targets: list[str],
          ) -> dict[str, tuple[float, int, float]]:
    """The stored rows of `targets` in `table`, 500 per query."""
    out: dict[str, tuple[float, int, float]] = {}
    for i in range(0, len(targets), 500):
        chunk = targets[i:i + 500]
        out.update((t, (w, c, u)) for t, w, c, u in conn.execute(
            f"SELECT target, weight, count, updated FROM {table} WHERE target IN "
            f"({','.join('?' * len(chunk))})", chunk))
    return out
