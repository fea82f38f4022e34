"""The local mirror of the team store: `<state>/team.db` (SQLite, WAL).

It holds the outbox (this clone's events not yet pushed), the replicated log (every
event known here, ours and pulled, keyed by `(author, seq)`), the operations each
event made on shared rows, the folded shared state, and the versions of shared
records. A local write to shared state is one IMMEDIATE transaction: outbox entry,
log entry and folded state together. An ingest of pulled events is one transaction
too, and it moves the pulled position in it: a process killed anywhere re-fetches
and re-applies exactly what it had not committed, and nothing twice (an event
already in the log is never folded again).
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

_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS log (
        author TEXT NOT NULL, seq INTEGER NOT NULL,
        kind TEXT NOT NULL, payload TEXT NOT NULL, ts REAL NOT NULL,
        pos INTEGER,                     -- the server's position; NULL until pushed and seen
        applied INTEGER NOT NULL,        -- 0: malformed, kept but not folded
        PRIMARY KEY (author, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS ops (
        target TEXT NOT NULL, ts REAL NOT NULL, author TEXT NOT NULL, seq INTEGER NOT NULL,
        idx INTEGER NOT NULL, op TEXT NOT NULL, x REAL NOT NULL, n INTEGER NOT NULL,
        PRIMARY KEY (target, ts, author, seq, idx)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS shared (
        target TEXT PRIMARY KEY, weight REAL NOT NULL, count INTEGER NOT NULL,
        updated REAL NOT NULL,
        last_ts REAL NOT NULL, last_author TEXT NOT NULL, last_seq INTEGER NOT NULL,
        last_idx INTEGER NOT NULL        -- the last operation folded (event order)
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
        """Create the tables in one IMMEDIATE transaction; refuse a newer schema."""
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

    # --- local writes (outbox + log + fold, one transaction) -------------------------------
    def write(self, kind: str, payload: dict[str, Any]) -> int:
        """Record a change to shared state made here; its seq. ValueError when malformed."""
        try:
            ev.operations(kind, payload, self.author, 0)   # validate before writing anything
        except ev.BadEvent as e:
            raise ValueError(f"{kind}: {e}") from None
        text = outbox.encode(payload)
        with self._write() as conn:
            seq = outbox.append(conn, kind, payload, self.clock())
            self._ingest_one(conn, self.author, seq, kind, text, None, payload)
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
        row = self.connection().execute("SELECT value FROM meta WHERE key = ?",
                                        (f"pulled:{store_key}",)).fetchone()
        return int(row[0]) if row else 0

    def reset_pulled(self, store_key: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (f"pulled:{store_key}",))

    def ingest(self, store_key: str, batch: Sequence[RemoteEvent]) -> int:
        """Apply pulled events (in position order) and move the pulled position, in one
        transaction. Returns how many were new here."""
        if not batch:
            return 0
        new = 0
        with self._write() as conn:
            mark = conn.execute("SELECT value FROM meta WHERE key = ?",
                                (f"pulled:{store_key}",)).fetchone()
            done = int(mark[0]) if mark else 0
            todo = [e for e in batch if e.pos > done]
            known = self._known(conn, todo)
            fresh: list[tuple[RemoteEvent, Any]] = []
            for e in todo:
                if (e.author, e.seq) in known:
                    conn.execute("UPDATE log SET pos = ? WHERE author = ? AND seq = ?",
                                 (e.pos, e.author, e.seq))
                    conn.execute("UPDATE records SET pos = ? WHERE author = ? AND seq = ?",
                                 (e.pos, e.author, e.seq))
                    continue
                known.add((e.author, e.seq))
                try:
                    payload = json.loads(e.payload)
                except ValueError:
                    payload = None
                fresh.append((e, payload))
            if fresh:
                self._ingest_many(conn, fresh)
                new = len(fresh)
            if todo:
                conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                             (f"pulled:{store_key}", str(max(e.pos for e in todo))))
        return new

    @staticmethod
    def _known(conn: sqlite3.Connection, batch: Sequence[RemoteEvent]) -> set[tuple[str, int]]:
        out: set[tuple[str, int]] = set()
        by_author: dict[str, list[int]] = defaultdict(list)
        for e in batch:
            by_author[e.author].append(e.seq)
        for author, seqs in by_author.items():
            for i in range(0, len(seqs), 500):
                chunk = seqs[i:i + 500]
                rows = conn.execute(
                    f"SELECT seq FROM log WHERE author = ? AND seq IN ({','.join('?' * len(chunk))})",
                    (author, *chunk))
                out.update((author, int(r[0])) for r in rows)
        return out

    def _ingest_one(self, conn: sqlite3.Connection, author: str, seq: int, kind: str,
                    text: str, pos: int | None, payload: Any) -> None:
        self._ingest_many(conn, [(RemoteEvent(pos or 0, author, seq, kind, text), payload)],
                          own=True)

    def _ingest_many(self, conn: sqlite3.Connection,
                     batch: Sequence[tuple[RemoteEvent, Any]], own: bool = False) -> None:
        """Log, then fold, a batch of events new to this machine."""
        all_ops: list[Op] = []
        log_rows, record_rows = [], []
        for e, payload in batch:
            ts, applied = 0.0, 1
            try:
                ops = ev.operations(e.kind, payload, e.author, e.seq)
                ts = float(payload["ts"])
            except ev.BadEvent as bad:
                log.warning("team event %s/%d (%s) is malformed and kept unapplied: %s",
                            e.author, e.seq, e.kind, bad)
                ops, applied = [], 0
            pos = None if own else e.pos
            log_rows.append((e.author, e.seq, e.kind, e.payload, ts, pos, applied))
            if applied and e.kind == ev.RECORD:
                base = payload.get("base") or (None, None)
                record_rows.append((payload["type"], payload["id"], e.author, e.seq, pos, ts,
                                    base[0], base[1], e.payload))
            all_ops.extend(ops)
        conn.executemany("INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?)", log_rows)
        conn.executemany("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", record_rows)
        if all_ops:
            self._fold(conn, all_ops)

    @staticmethod
    def _fold(conn: sqlite3.Connection, ops: list[Op]) -> None:
        conn.executemany("INSERT OR IGNORE INTO ops VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         [(o.target, *o.key, o.op, o.x, o.n) for o in ops])
        by_target: dict[str, list[Op]] = defaultdict(list)
        for o in ops:
            by_target[o.target].append(o)
        rows = []
        for tgt, mine in by_target.items():
            mine.sort(key=lambda o: o.key)
            kind = fold.kind_of(tgt)
            cur = conn.execute("SELECT weight, count, updated, last_ts, last_author, last_seq, "
                               "last_idx FROM shared WHERE target = ?", (tgt,)).fetchone()
            if cur is not None and mine[0].key > (cur[3], cur[4], cur[5], cur[6]):
                state = fold.fold(kind, mine, State(cur[0], cur[1], cur[2]))
                last = mine[-1].key
            else:   # new target, or a late operation: fold every operation in order again
                every = [Op(tgt, (r[0], r[1], r[2], r[3]), r[4], r[5], r[6]) for r in conn.execute(
                    "SELECT ts, author, seq, idx, op, x, n FROM ops WHERE target = ? "
                    "ORDER BY ts, author, seq, idx", (tgt,))]
                state = fold.fold(kind, every)
                last = every[-1].key
            assert state is not None
            rows.append((tgt, state.weight, state.count, state.updated, *last))
        conn.executemany("INSERT OR REPLACE INTO shared VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    # --- reading shared state ------------------------------------------------------------
    def shared_rows(self, kind: str | None = None) -> list[tuple[str, float, int, float]]:
        """(target, stored weight, count, updated) of every shared row, by target."""
        sql = "SELECT target, weight, count, updated FROM shared"
        params: tuple[Any, ...] = ()
        if kind:
            sql += " WHERE target >= ? AND target < ?"
            params = (kind + fold.SEP, kind + chr(ord(fold.SEP) + 1))
        return [tuple(r) for r in self.connection().execute(sql + " ORDER BY target", params)]

    def synapse_weights(self, now: float | None = None) -> dict[tuple[str, str], float]:
        """Effective shared synapse weights at `now` (pairs with a < b)."""
        t = self._ts(now)
        out = {}
        for tgt, w, c, u in self.shared_rows(fold.SYNAPSE):
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
        return {
            "events": int(conn.execute("SELECT count(*) FROM log").fetchone()[0]),
            "unpushed": outbox.count(conn),
            "malformed": int(conn.execute("SELECT count(*) FROM log WHERE applied = 0")
                             .fetchone()[0]),
            "shared_rows": int(conn.execute("SELECT count(*) FROM shared").fetchone()[0]),
            "records": int(conn.execute("SELECT count(DISTINCT type || ':' || id) FROM records")
                           .fetchone()[0]),
        }


def _version(row: Sequence[Any]) -> dict[str, Any]:
    author, seq, pos, ts, ba, bs, payload = row
    body = json.loads(payload)
    return {"author": author, "seq": int(seq), "pos": pos, "ts": ts,
            "base": [ba, bs] if ba else None, "record": body.get("record", {})}
