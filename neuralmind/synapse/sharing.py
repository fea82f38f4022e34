"""The synapse store's side of the team brain: events in its outbox, the team's view in.

With a team store configured, learning on the default branch is also written to the
`shared` namespace, and every write to `shared` appends its event to the outbox in
synapses.db in the same transaction (`neuralmind.outbox`; the payloads are those
`neuralmind.team.events` documents and checks). Seeds are shared only where the team's
view has decayed below TEAM_SEED_REFRESH of the seeded value, so a teammate rebuilding
the same history sends nothing.

`SharedView` is what the team component uses to exchange with the store, inside one
IMMEDIATE transaction of it: read the outbox (the team mirror takes the events), drop
what the mirror holds, and write the team's folded state into the `shared` rows, so
every read of `shared` (spread, next-likely, hover) shows what the team learned. The
structural prior this clone computes from its own code is never sent; a shared pair it
covers keeps it as a floor, as a re-seed would.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from neuralmind import config, outbox
from neuralmind.synapse.db import ACT_EFF, SYN_EFF, TR_EFF
from neuralmind.synapse.namespaces import SHARED
from neuralmind.synapse.seeding import structural_weight

_VIEW_KEY = "team_view"   # synapses.db meta: which team mirror the shared rows show
_QUESTIONS_KEY = "team_questions"   # "<mirror> <n>": teammates' questions shown, through n
TEAM_SESSION = "team:"    # the session of a teammate's question: "team:<author>"


def append(conn: sqlite3.Connection, kind: str, payload: dict[str, Any], now: float) -> None:
    """Queue one event in the caller's transaction (the outbox is created on first use:
    a store never connected to a team has none)."""
    outbox.install(conn)
    outbox.append(conn, kind, payload, now)


def batch(conn: sqlite3.Connection, pairs: Sequence[tuple[str, str]], touched: Sequence[str],
          transitions: Sequence[tuple[str, str]], now: float, rate: float) -> None:
    append(conn, outbox.BATCH, {"ts": now, "rate": rate, "pairs": [list(p) for p in pairs],
                                "touched": list(touched),
                                "transitions": [list(t) for t in transitions]}, now)


def weaken(conn: sqlite3.Connection, node: str, factor: float, now: float) -> None:
    """The negative feedback on `node`'s shared edges, as the pairs it scales (before the
    local update, which may delete some)."""
    pairs = conn.execute("SELECT a, b FROM synapses WHERE (a = ? OR b = ?) AND namespace = ? "
                         "ORDER BY a, b", (node, node, SHARED)).fetchall()
    if pairs:
        append(conn, outbox.WEAKEN, {"ts": now, "factor": factor,
                                     "pairs": [list(p) for p in pairs]}, now)


def seeds(conn: sqlite3.Connection, now: float, pairs: Iterable[tuple[str, str, float, int]] = (),
          levels: Iterable[tuple[str, float]] = (),
          transitions: Iterable[tuple[str, str, float]] = ()) -> None:
    """Seeds worth sending (the team's view is below TEAM_SEED_REFRESH of them), as events
    of at most TEAM_SEED_EVENT_ROWS rows."""
    p = {"now": now}
    keep = config.TEAM_SEED_REFRESH
    rows: list[tuple[str, list[Any]]] = []
    for a, b, w, c in pairs:
        cur = conn.execute(f"SELECT {SYN_EFF} FROM synapses WHERE a = :a AND b = :b "
                           "AND namespace = :ns", p | {"a": a, "b": b, "ns": SHARED}).fetchone()
        if cur is None or cur[0] < keep * min(config.WEIGHT_CAP, w):
            rows.append(("pairs", [a, b, w, c]))
    for node, level in levels:
        cur = conn.execute(f"SELECT {ACT_EFF} FROM activations WHERE node = :n "
                           "AND namespace = :ns", p | {"n": node, "ns": SHARED}).fetchone()
        if cur is None or cur[0] < keep * level:
            rows.append(("activations", [node, level]))
    for src, dst, w in transitions:
        cur = conn.execute(f"SELECT {TR_EFF} FROM transitions WHERE src = :a AND dst = :b "
                           "AND namespace = :ns", p | {"a": src, "b": dst, "ns": SHARED}
                           ).fetchone()
        if cur is None or cur[0] < keep * w:
            rows.append(("transitions", [src, dst, w]))
    for i in range(0, len(rows), config.TEAM_SEED_EVENT_ROWS):
        payload: dict[str, Any] = {"ts": now, "pairs": [], "activations": []}
        for key, row in rows[i:i + config.TEAM_SEED_EVENT_ROWS]:
            payload.setdefault(key, []).append(row)
        append(conn, outbox.SEED, payload, now)


def question(conn: sqlite3.Connection, tokens: Sequence[str], files: Sequence[str],
             unused: Sequence[str], now: float) -> None:
    """What an answer's use taught, for the team: the question's words (never its text or
    session), the files kept after it and those its answer returned unused."""
    cap = config.TEAM_QUESTION_MAX_ITEMS
    if tokens and (files or unused):
        append(conn, outbox.QUESTION, {"ts": now, "tokens": list(tokens)[:cap],
                                       "files": list(files)[:cap], "unused": list(unused)[:cap]},
               now)


class SharedView(outbox.OutboxView):
    """The team component's exchange with the store, inside one of its transactions."""

    view_key = _VIEW_KEY

    def __init__(self, conn: sqlite3.Connection, now: float) -> None:
        super().__init__(conn)
        self.now = now

    # --- the team's state into the shared rows ------------------------------------------------
    def write(self, synapses: Sequence[tuple[str, str, float, int, float]] = (),
              transitions: Sequence[tuple[str, str, float, int, float]] = (),
              activations: Sequence[tuple[str, float, int, float]] = ()) -> int:
        """Replace the shared rows of these targets by the team's folded state (weight,
        count, updated); a structural pair keeps its prior as a floor. Returns the rows."""
        db = self.conn
        db.executemany("INSERT OR REPLACE INTO synapses VALUES (?, ?, ?, ?, ?, ?)",
                       [(a, b, SHARED, w, c, u) for a, b, w, c, u in synapses])
        db.executemany("INSERT OR REPLACE INTO transitions VALUES (?, ?, ?, ?, ?, ?)",
                       [(s, d, SHARED, w, c, u) for s, d, w, c, u in transitions])
        db.executemany("INSERT OR REPLACE INTO activations VALUES (?, ?, ?, ?, ?)",
                       [(n, SHARED, w, c, u) for n, w, c, u in activations])
        floors = [{"a": a, "b": b, "ns": SHARED, "now": self.now, "w": structural_weight(c)}
                  for a, b, c in self._structural([(a, b) for a, b, *_ in synapses])]
        db.executemany(f"UPDATE synapses SET weight = max({SYN_EFF}, :w), count = max(count, 1), "
                       "updated = max(updated, :now) WHERE a = :a AND b = :b AND namespace = :ns",
                       floors)
        return len(synapses) + len(transitions) + len(activations)

    def _structural(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str, int]]:
        """(a, b, count) of the structural edges among `pairs`, 400 pairs per query (a
        query per pair was a fifth of writing the team's rows)."""
        out = []
        for i in range(0, len(pairs), 400):
            chunk = pairs[i:i + 400]
            out += [(str(a), str(b), int(c)) for a, b, c in self.conn.execute(
                f"SELECT e.a, e.b, e.count FROM (VALUES {','.join(['(?, ?)'] * len(chunk))}) "
                f"AS k CROSS JOIN structural_edges AS e ON e.a = k.column1 AND e.b = k.column2",
                [x for p in chunk for x in p])]    # a join: a row-value IN would scan
        return out

    # --- teammates' questions (answers scored by use) -----------------------------------------
    def questions_shown(self, mirror: str) -> int:
        """Through which of `mirror`'s questions this store shows teammates' ones; a store
        showing another mirror's (or none) drops them and starts again from 0."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?",
                                (_QUESTIONS_KEY,)).fetchone()
        shown, _, through = (str(row[0]) if row else "").rpartition(" ")
        if row and shown == mirror:
            return int(through)
        self.conn.execute("DELETE FROM questions WHERE session LIKE ?", (TEAM_SESSION + "%",))
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_QUESTIONS_KEY,
                                                                         f"{mirror} 0"))
        return 0

    def show_questions(self, mirror: str, through: int,
                       rows: Sequence[tuple[str, float, str, str, str]]) -> int:
        """Teammates' questions (author, ts, tokens, files JSON, unused JSON) into the
        question memory that ranking reads, as `team:<author>` sessions whose query is
        their words; then the mark. Returns the rows."""
        self.conn.executemany(
            "INSERT INTO questions(namespace, session, query, tokens, hits, files, ts, unused) "
            "VALUES (?, ?, ?, ?, '[]', ?, ?, ?)",
            [(SHARED, TEAM_SESSION + a, t, t, f, ts, u) for a, ts, t, f, u in rows])
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_QUESTIONS_KEY,
                                                                         f"{mirror} {through}"))
        return len(rows)
