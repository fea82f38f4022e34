"""The local mirror of the team store: `<state>/team.db` (SQLite, WAL).

It holds the push queue (its own outbox, and the events collected from the outboxes of
the stores that hold shared state: synapses.db, memory.db), the replicated log
(every event known here, ours and pulled, keyed by `(author, seq)`), the folded shared
state, and the versions of shared records.

Shared state is folded in the store's order (event positions), the same on every
machine. An event that arrives before one of the positions ahead of it waits in the
log until the gap fills. This clone's own events have no position until the store
echoes them back; meanwhile they are folded, in the order they were made, into an
*overlay* on top of the shared state (what this machine shows), which is rebuilt
whenever the shared rows under it change and is empty once everything is pushed and
pulled. Every target whose visible value changes is marked dirty (`views.py`), so the
stores showing it write it again.

A local write to shared state is one IMMEDIATE transaction: queue entry, log entry and
overlay together. An ingest of pulled events is one transaction too and moves the
pulled position in it: a process killed anywhere re-fetches and re-applies exactly what
it had not committed, and nothing twice (an event already in the log, or behind its
author's compacted seq, is never folded again).
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
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from neuralmind import config, outbox
from neuralmind.sqlite_tx import immediate
from neuralmind.team import events as ev
from neuralmind.team import fold, questions, records, tables
from neuralmind.team.fold import Op, State
from neuralmind.team.remote import OutEvent, RemoteEvent
from neuralmind.team.tables import BAD, DONE, OWN, WAIT

log = logging.getLogger("neuralmind.team")

DB_NAME = "team.db"
BUSY_TIMEOUT_MS = 15_000
INGEST_CHUNK = 250   # events folded per transaction: a local write never waits long for it

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
                self._author = tables.migrate(conn)
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

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
            with immediate(self.connection()) as conn:
                yield conn

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One write transaction of the mirror, in turn with this process's other writers."""
        return self._write()

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
            keys = []
            if kind == ev.RECORD:
                records.insert(conn, [(self.author, seq, None, payload)])
                keys.append((payload["type"], payload["id"]))
            elif kind == ev.QUESTION:
                questions.insert(conn, [(self.author, seq, None, payload)])
            tables.mark_dirty(conn, tables.apply(conn, "overlay", ops, fallback="shared"), keys)
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

    # --- events other stores wrote in their own outboxes ----------------------------------
    def collect(self, author: str, entries: Sequence[outbox.OutboxEntry]) -> int:
        """Take events a store wrote in its own outbox (in the transaction of its local
        change) under that outbox's `author`: into the log as ours, onto the overlay, and
        queued for the push. Idempotent: an event known here is skipped, so the store
        deletes its entries after this commits and a kill in between only repeats this.
        A malformed entry is kept in the log, neither shown nor pushed. Returns how many
        were queued."""
        if not entries:
            return 0
        with self._write() as conn:
            known = self._known(conn, [(author, e.seq) for e in entries])
            logged, queued, recs, ops = [], [], [], []
            asked: list[tuple[str, int, int | None, Any]] = []
            for e in entries:
                if (author, e.seq) in known:
                    continue
                try:
                    payload = json.loads(e.payload)
                    ops.extend(ev.operations(e.kind, payload))
                except (ValueError, ev.BadEvent) as bad:
                    log.warning("local team event %s/%d (%s) is malformed and kept unsent: %s",
                                author, e.seq, e.kind, bad)
                    logged.append((author, e.seq, e.kind, e.payload, None, BAD))
                    continue
                logged.append((author, e.seq, e.kind, e.payload, None, OWN))
                queued.append((author, e.seq, e.kind, e.payload, e.created))
                if e.kind == ev.RECORD:
                    recs.append((author, e.seq, None, payload))
                elif e.kind == ev.QUESTION:
                    asked.append((author, e.seq, None, payload))
            conn.executemany("INSERT INTO log VALUES (?, ?, ?, ?, ?, ?)", logged)
            conn.executemany("INSERT OR IGNORE INTO collected VALUES (?, ?, ?, ?, ?)", queued)
            records.insert(conn, recs)
            questions.insert(conn, asked)
            tables.mark_dirty(conn, tables.apply(conn, "overlay", ops, fallback="shared"),
                              [(p["type"], p["id"]) for *_, p in recs])
        return len(queued)

    # --- the push queue: our outbox, then what was collected --------------------------------
    def pending(self, limit: int = config.TEAM_PUSH_BATCH) -> list[OutEvent]:
        conn = self.connection()
        out = [OutEvent(self.author, e.seq, e.kind, e.payload)
               for e in outbox.pending(conn, limit)]
        if len(out) < limit:   # per author in seq order: an author's positions follow its seqs
            out += [OutEvent(a, int(s), k, p) for a, s, k, p in conn.execute(
                "SELECT author, seq, kind, payload FROM collected ORDER BY author, seq "
                "LIMIT ?", (limit - len(out),))]
        return out

    def pending_count(self) -> int:
        conn = self.connection()
        return outbox.count(conn) + int(
            conn.execute("SELECT count(*) FROM collected").fetchone()[0])

    def acknowledge(self, pushed: Sequence[OutEvent]) -> int:
        """Forget events the server holds; how many."""
        own = [e.seq for e in pushed if e.author == self.author]
        with self._write() as conn:
            n = outbox.acknowledge(conn, max(own)) if own else 0
            return n + conn.executemany(
                "DELETE FROM collected WHERE author = ? AND seq = ?",
                [(e.author, e.seq) for e in pushed if e.author != self.author]).rowcount

    # --- pulled events -------------------------------------------------------------------
    def pulled(self, store_key: str) -> int:
        """The last position folded here (everything up to it is folded)."""
        row = self.connection().execute("SELECT value FROM meta WHERE key = ?",
                                        (f"pulled:{store_key}",)).fetchone()
        return int(row[0]) if row else 0

    def reset_pulled(self, store_key: str) -> None:
        """Pull again from the start (the store was rebuilt: its positions are new). Known
        events are recognised by (author, seq) and only move the position; events not
        folded yet are fetched again."""
        with self._write() as conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (f"pulled:{store_key}",))
            _forget_positions(conn)

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
        source = conn.execute("SELECT value FROM meta WHERE key = 'positions_of'").fetchone()
        if source is None or source[0] != store_key:
            # another store (connected elsewhere, a new store_id); a mirror older than this
            # mark: its positions are this store's only when it has pulled from it
            ours = source is None and conn.execute(
                "SELECT 1 FROM meta WHERE key = ?", (key,)).fetchone() is not None
            if not ours:
                _forget_positions(conn)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('positions_of', ?)", (store_key,))
        mark = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        done = int(mark[0]) if mark else 0
        todo = [e for e in chunk if e.pos > done]
        known = self._known(conn, [(e.author, e.seq) for e in todo])
        # (author, seq, kind, payload, where it comes from): "new", "own" echo, "log"
        # (arrived earlier, waiting for a gap before it) or "seen" (folded before: it only
        # moves the position)
        seq_by_pos: dict[int, tuple[str, int, str, str, str]] = {
            pos: (a, s, k, p, "log" if st == WAIT else "seen") for pos, a, s, k, p, st in
            conn.execute("SELECT pos, author, seq, kind, payload, state FROM log "
                         "WHERE pos > ? AND state != ?", (done, OWN))}
        for e in todo:
            state = known.get((e.author, e.seq))
            if state is None:
                seq_by_pos[e.pos] = (e.author, e.seq, e.kind, e.payload, "new")
                known[(e.author, e.seq)] = WAIT
            elif state == OWN:           # our own event, back with its position
                seq_by_pos[e.pos] = (e.author, e.seq, e.kind, e.payload, "own")
            elif state in (DONE, BAD):
                seq_by_pos.setdefault(e.pos, (e.author, e.seq, e.kind, e.payload, "seen"))
        fresh, moved, seen, ops = [], [], [], []
        recs: list[tuple[str, int, int | None, Any]] = []
        asked: list[tuple[str, int, int | None, Any]] = []
        record_keys: set[tuple[str, str]] = set()
        echoed = False
        for pos in sorted(seq_by_pos):
            author, seq, kind, text, origin = seq_by_pos[pos]
            if origin == "seen":
                if pos == done + 1:
                    done = pos
                else:                    # ahead of a gap: remembered at its position
                    seen.append((author, seq, kind, text, pos, DONE))
                continue
            state = WAIT
            if pos == done + 1:          # contiguous: fold it now, in position order
                done = pos
                try:
                    payload = json.loads(text)
                    ops.extend(ev.operations(kind, payload))
                    state = DONE
                    if kind == ev.RECORD:
                        record_keys.add((payload["type"], payload["id"]))
                        if origin != "own":
                            recs.append((author, seq, pos, payload))
                    elif kind == ev.QUESTION and origin != "own":
                        asked.append((author, seq, pos, payload))
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
        conn.executemany("INSERT OR REPLACE INTO log VALUES (?, ?, ?, ?, ?, ?)", seen)
        conn.executemany("UPDATE log SET pos = ?, state = ? WHERE author = ? AND seq = ?", moved)
        if echoed:
            placed = [(pos, a, sq) for pos, _, a, sq in moved]
            conn.executemany("UPDATE records SET pos = ? WHERE author = ? AND seq = ?", placed)
            questions.placed(conn, placed)
        records.insert(conn, recs)
        questions.insert(conn, asked)
        touched = tables.apply(conn, "shared", ops)
        overlay = self._overlay_targets(conn)
        if echoed or touched & overlay:
            self._rebuild_overlay(conn)
            touched |= overlay | self._overlay_targets(conn)
        tables.mark_dirty(conn, touched, record_keys)
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(done)))
        return len(fresh)

    @staticmethod
    def _known(conn: sqlite3.Connection, keys: Sequence[tuple[str, int]],
               ) -> dict[tuple[str, int], int]:
        """The log state of the known ones of `keys`; an event whose folded log row was
        compacted away counts as DONE. A few queries whatever the number of authors (a
        pull from 50 developers asked two per author, most of a small pull's cost)."""
        out: dict[tuple[str, int], int] = {}
        if not keys:
            return out
        authors = sorted({a for a, _ in keys})
        compacted: dict[str, int] = {}
        for i in range(0, len(authors), 500):
            chunk = authors[i:i + 500]
            compacted.update((str(a), int(s)) for a, s in conn.execute(
                f"SELECT author, seq FROM compacted WHERE author IN "
                f"({','.join('?' * len(chunk))})", chunk))
        for i in range(0, len(keys), 400):
            chunk = keys[i:i + 400]
            rows = conn.execute(       # a join: a row-value IN would scan the log
                f"SELECT l.author, l.seq, l.state FROM (VALUES "
                f"{','.join(['(?, ?)'] * len(chunk))}) AS k CROSS JOIN log AS l "
                f"ON l.author = k.column1 AND l.seq = k.column2",
                [x for key in chunk for x in key])
            out.update(((str(a), int(s)), int(st)) for a, s, st in rows)
        for author, seq in keys:
            top = compacted.get(author)
            if top is not None and seq <= top:
                out.setdefault((author, seq), DONE)
        return out

    @staticmethod
    def _overlay_targets(conn: sqlite3.Connection) -> set[str]:
        return {r[0] for r in conn.execute("SELECT target FROM overlay")}

    @staticmethod
    def _rebuild_overlay(conn: sqlite3.Connection) -> None:
        """Our unechoed events on top of the shared state, in the order they were made
        (their timestamps; authors and seqs break ties: several stores write ours)."""
        conn.execute("DELETE FROM overlay")
        own = []
        for author, seq, kind, text in conn.execute(
                "SELECT author, seq, kind, payload FROM log WHERE state = ?", (OWN,)):
            payload = json.loads(text)
            own.append((float(payload["ts"]), author, seq, kind, payload))
        ops: list[Op] = []
        for *_, kind, payload in sorted(own, key=lambda o: o[:3]):
            ops.extend(ev.operations(kind, payload))
        tables.apply(conn, "overlay", ops, fallback="shared")

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
        conn = self.connection()
        for r in conn.execute("SELECT type, id FROM records GROUP BY type, id ORDER BY type, id"
                              ).fetchall():
            cur = records.current(conn, r[0], r[1], pending=False)
            h.update(repr((r[0], r[1], cur and (cur["author"], cur["seq"]))).encode("utf-8"))
        h.update(repr(questions.keys(conn)).encode("utf-8"))
        return h.hexdigest()

    # --- records -------------------------------------------------------------------------
    def record_current(self, rtype: str, rid: str, pending: bool = True) -> dict[str, Any] | None:
        """The version the current view shows: this machine's unpushed edit when it has one
        (`pending`), else the one latest in event order (the server's position)."""
        return records.current(self.connection(), rtype, rid, pending)

    def record_history(self, rtype: str, rid: str) -> list[dict[str, Any]]:
        """Every version, oldest first in event order (unpushed ones last)."""
        return records.history(self.connection(), rtype, rid)

    def records(self, rtype: str) -> list[dict[str, Any]]:
        """The current version of every record of a type."""
        conn = self.connection()
        return [v for v in (records.current(conn, rtype, i) for i in records.ids(conn, rtype))
                if v]

    def record_keys(self) -> list[tuple[str, str]]:
        """(type, id) of every record with a version here."""
        return [(str(t), str(i)) for t, i in self.connection().execute(
            "SELECT DISTINCT type, id FROM records ORDER BY type, id")]

    def conflicts(self, rtype: str | None = None) -> list[dict[str, Any]]:
        """Records edited concurrently (see `records.conflicts`)."""
        return records.conflicts(self.connection(), rtype)

    def questions_after(self, n: int, limit: int) -> list[tuple[int, str, float, str, str, str]]:
        """Questions known here after number `n` (questions.after)."""
        return questions.after(self.connection(), n, limit)

    def questions_top(self) -> int:
        """The number of the last question known here (0: none)."""
        return int(self.connection().execute("SELECT coalesce(max(n), 0) FROM questions")
                   .fetchone()[0])

    # --- status --------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        conn = self.connection()
        by_state = dict(conn.execute("SELECT state, count(*) FROM log GROUP BY state").fetchall())
        compacted = conn.execute("SELECT value FROM meta WHERE key = 'compacted_events'"
                                 ).fetchone()
        dropped = int(compacted[0]) if compacted else 0
        return {
            "events": sum(by_state.values()) + dropped,
            "compacted": dropped,
            "unpushed": self.pending_count(),
            "unechoed": by_state.get(OWN, 0),
            "waiting": by_state.get(WAIT, 0),
            "malformed": by_state.get(BAD, 0),
            "shared_rows": int(conn.execute("SELECT count(*) FROM shared").fetchone()[0]),
            "records": int(conn.execute("SELECT count(DISTINCT type || ':' || id) FROM records")
                           .fetchone()[0]),
        }


def _forget_positions(conn: sqlite3.Connection) -> None:
    """The log's positions are another store's numbering: folded events keep only their
    (author, seq), so they are recognised and not applied twice; events waiting for a gap
    are dropped, to be fetched again (left in place, the old numbers would count as folded
    positions of the new store and skip its events there)."""
    conn.execute("DELETE FROM log WHERE state = ?", (WAIT,))
    conn.execute("UPDATE log SET pos = NULL WHERE state IN (?, ?)", (DONE, BAD))
