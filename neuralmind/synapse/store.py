"""The synapse store: Hebbian co-activation, decay, LTP, spreading activation, transitions.

(The database itself, its transactions and recovery, is `SynapseDB` in db.py.)

One SQLite file (WAL) per workspace. Weights are stored with the time they were
last written; the decayed ("effective") weight is computed on read by one SQL
expression, `weight * 0.5 ** (age / half_life)`, so decay is lazy, exact and
one-way (a read never writes, a write starts from the decayed value, and a
timestamp never moves backwards). A decay pass deletes what that expression
has taken below the prune threshold.

Every public method is a learning or recall path and fails open: a locked
database logs a warning and returns an empty result; a corrupt one is moved
aside (never deleted) and a new store started.
"""

from __future__ import annotations

import heapq
import json
import logging
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from neuralmind import config
from neuralmind.synapse import sharing, stats
from neuralmind.synapse.db import ACT_EFF, DAY, SYN_EFF, TR_EFF, SynapseDB, fail_open
from neuralmind.synapse.namespaces import SHARED, write_namespaces
from neuralmind.synapse.questions import question_scores, question_tokens
from neuralmind.synapse.schema import SCHEMA_VERSION

log = logging.getLogger("neuralmind.synapse")


class SynapseStore(SynapseDB):
    """Namespaced Hebbian memory in `<state>/synapses.db`: learning, decay, recall."""

    # --- learning -----------------------------------------------------------------------
    @fail_open(lambda: 0)
    def activate(self, node_ids: Iterable[str], namespace: str, now: float | None = None,
                 rate: float = config.LEARNING_RATE, share: bool = False) -> int:
        """Hebbian step: reinforce every pair in the co-activated set (`share`: in `shared`
        too, its event in the outbox in the same transaction); return the pair count."""
        nodes = list(dict.fromkeys(n for n in node_ids if n))
        if len(nodes) > config.ACTIVATE_MAX_NODES:  # keep the first (best-ranked) ones
            log.info("co-activation of %d nodes truncated to %d", len(nodes), config.ACTIVATE_MAX_NODES)
            nodes = nodes[: config.ACTIVATE_MAX_NODES]
        nodes.sort()
        pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:]]
        t = self._now(now)
        with self._write() as db:
            for ns in write_namespaces(namespace, share):
                self._reinforce(db, pairs, ns, t, rate)
                self._touch(db, nodes, ns, t)
            if share:
                sharing.batch(db, pairs, nodes, [], t, rate)
        return len(pairs)

    @fail_open(lambda: 0)
    def reinforce_pairs(self, pairs: Iterable[tuple[str, str]], namespace: str,
                        now: float | None = None, rate: float = config.LEARNING_RATE) -> int:
        """Reinforce chosen pairs only (a question's hits with the files it led to)."""
        canon = sorted({(min(a, b), max(a, b)) for a, b in pairs if a and b and a != b})
        with self._write() as db:
            self._reinforce(db, canon, namespace, self._now(now), rate)
        return len(canon)

    @fail_open(lambda: 0)
    def learn_batch(self, pairs: Iterable[tuple[str, str]], touched: Sequence[str],
                    transitions: Sequence[tuple[str, str]], namespace: str,
                    now: float | None = None, rate: float = config.LEARNING_RATE,
                    share: bool = False) -> int:
        """One editing batch in one transaction (`share`: in `shared` too, its event in the
        outbox): pairs reinforced once per occurrence, files counted, transitions recorded."""
        canon = [(min(a, b), max(a, b)) for a, b in pairs if a and b and a != b]
        nodes, t = [n for n in touched if n], self._now(now)
        steps = [(a, b) for a, b in transitions if a and b and a != b]
        with self._write() as db:
            for ns in write_namespaces(namespace, share):
                self._reinforce(db, canon, ns, t, rate)
                self._touch(db, nodes, ns, t)
                self._transitions(db, steps, ns, t)
            if share:
                sharing.batch(db, canon, nodes, steps, t, rate)
        return len(canon)

    @staticmethod
    def _reinforce(db: sqlite3.Connection, pairs: list[tuple[str, str]], namespace: str,
                   now: float, rate: float) -> None:
        cap = config.WEIGHT_CAP
        db.executemany(
            "INSERT INTO synapses(a, b, namespace, weight, count, updated) "
            "VALUES (:a, :b, :ns, min(:cap, :rate * :cap), 1, :now) "
            "ON CONFLICT(a, b, namespace) DO UPDATE SET "
            f"weight = min(:cap, {SYN_EFF} + :rate * (:cap - {SYN_EFF})), "
            "count = count + 1, updated = max(updated, :now)",
            [{"a": a, "b": b, "ns": namespace, "now": now, "rate": rate, "cap": cap}
             for a, b in pairs])

    @staticmethod
    def _touch(db: sqlite3.Connection, nodes: list[str], namespace: str, now: float) -> None:
        db.executemany(
            "INSERT INTO activations(node, namespace, level, count, updated) "
            "VALUES (:n, :ns, 1.0, 1, :now) ON CONFLICT(node, namespace) DO UPDATE SET "
            f"level = {ACT_EFF} + 1.0, count = count + 1, updated = max(updated, :now)",
            [{"n": n, "ns": namespace, "now": now} for n in nodes])

    @fail_open(lambda: 0)
    def record_transitions(self, pairs: Iterable[tuple[str, str]], namespace: str,
                           now: float | None = None) -> int:
        """Directional A -> B observations; weights accumulate (uncapped) and decay slowly."""
        rows = [(a, b) for a, b in pairs if a and b and a != b]
        with self._write() as db:
            self._transitions(db, rows, namespace, self._now(now))
        return len(rows)

    @staticmethod
    def _transitions(db: sqlite3.Connection, rows: list[tuple[str, str]], namespace: str,
                     now: float) -> None:
        db.executemany(
            "INSERT INTO transitions(src, dst, namespace, weight, count, updated) "
            "VALUES (:a, :b, :ns, 1.0, 1, :now) ON CONFLICT(src, dst, namespace) DO UPDATE SET "
            f"weight = {TR_EFF} + 1.0, count = count + 1, updated = max(updated, :now)",
            [{"a": a, "b": b, "ns": namespace, "now": now} for a, b in rows])

    @fail_open(lambda: 0)
    def seed_pairs(self, weights: dict[tuple[str, str], float], namespace: str,
                   now: float | None = None, counts: dict[tuple[str, str], int] | None = None,
                   share: bool = False) -> int:
        """MAX semantics: weight = max(effective, seeded), count = max(count, given); idempotent.
        `share` (namespace `shared`): the seeds the team lacks go to the outbox.

        Returns how many pairs were new.
        """
        t = self._now(now)
        rows = []
        for (a, b), w in weights.items():
            if not a or not b or a == b:
                continue
            lo, hi = min(a, b), max(a, b)
            c = int((counts or {}).get((a, b), 1))
            rows.append({"a": lo, "b": hi, "ns": namespace, "w": min(config.WEIGHT_CAP, float(w)),
                         "c": c, "now": t})
        with self._write() as db:
            if share and namespace == SHARED:
                sharing.seeds(db, t, pairs=[(r["a"], r["b"], r["w"], r["c"]) for r in rows])
            before = db.execute("SELECT count(*) FROM synapses WHERE namespace = ?",
                                (namespace,)).fetchone()[0]
            db.executemany(
                "INSERT INTO synapses(a, b, namespace, weight, count, updated) "
                "VALUES (:a, :b, :ns, :w, :c, :now) ON CONFLICT(a, b, namespace) DO UPDATE SET "
                f"weight = max({SYN_EFF}, :w), count = max(count, :c), updated = max(updated, :now)",
                rows)
            after = db.execute("SELECT count(*) FROM synapses WHERE namespace = ?",
                               (namespace,)).fetchone()[0]
        return after - before

    @fail_open(lambda: 0)
    def seed_activations(self, levels: dict[str, float], namespace: str,
                         now: float | None = None, share: bool = False) -> int:
        """Popularity prior (e.g. commits per file) with MAX semantics (`share`: as seed_pairs)."""
        t = self._now(now)
        with self._write() as db:
            if share and namespace == SHARED:
                sharing.seeds(db, t, levels=[(n, float(v)) for n, v in levels.items()])
            db.executemany(
                "INSERT INTO activations(node, namespace, level, count, updated) "
                "VALUES (:n, :ns, :l, 0, :now) ON CONFLICT(node, namespace) DO UPDATE SET "
                f"level = max({ACT_EFF}, :l), updated = max(updated, :now)",
                [{"n": n, "ns": namespace, "l": float(v), "now": t} for n, v in levels.items()])
        return len(levels)

    @fail_open(lambda: 0)
    def set_structural(self, edges: dict[tuple[str, str], int]) -> int:
        """Replace the stored structural graph (kept for stats and inspection)."""
        with self._write() as db:
            db.execute("DELETE FROM structural_edges")
            db.executemany("INSERT INTO structural_edges(a, b, count) VALUES (?, ?, ?)",
                           [(a, b, c) for (a, b), c in edges.items()])
        return len(edges)

    @fail_open(lambda: 0)
    def weaken_node(self, node_id: str, namespaces: Sequence[str], factor: float,
                    now: float | None = None, share: bool = False) -> int:
        """Negative feedback: scale a node's edges by `factor`; LTP edges keep their floor
        (`share`: the scaling of its `shared` edges goes to the outbox too).

        Non-LTP edges that fall below the prune threshold are deleted; LTP edges never are.
        """
        ns_marks, ns_params = self._ns_clause(dict.fromkeys(namespaces, 1.0))
        params = {"n": node_id, "f": factor, "now": self._now(now),
                  "th": config.PRUNE_THRESHOLD, **ns_params}
        with self._write() as db:
            if share and SHARED in namespaces:
                sharing.weaken(db, node_id, factor, params["now"])
            cur = db.execute(
                "UPDATE synapses SET "
                f"weight = CASE WHEN count >= {config.LTP_THRESHOLD} "
                f"THEN max({config.LTP_FLOOR!r}, {SYN_EFF} * :f) ELSE {SYN_EFF} * :f END, "
                "updated = max(updated, :now) "
                f"WHERE (a = :n OR b = :n) AND namespace IN ({ns_marks})", params)
            db.execute("DELETE FROM synapses WHERE (a = :n OR b = :n) AND weight < :th "
                       f"AND count < {config.LTP_THRESHOLD}", params)
        return cur.rowcount

    @fail_open(lambda: None)
    def record_question(self, namespace: str, session: str, query: str, hits: Sequence[str],
                        files: Sequence[str], now: float | None = None,
                        unused: Sequence[str] = (), share: bool = False) -> None:
        """Remember which files a question led to (the strongest learning signal measured),
        and which files its answer returned that the work after it did not use (`share`:
        its words and files go to the outbox too, in the same transaction)."""
        tokens = question_tokens(query)
        ts = self._now(now)
        with self._write() as db:
            db.execute(
                "INSERT INTO questions(namespace, session, query, tokens, hits, files, ts, unused) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (namespace, session, query, " ".join(tokens), json.dumps(list(hits)),
                 json.dumps(list(files)), ts, json.dumps(list(unused))))
            if share:
                sharing.question(db, tokens, files, unused, ts)

    # --- maintenance --------------------------------------------------------------------
    def decay_pass(self, now: float | None = None) -> dict[str, int]:
        """Delete everything decay has taken below the prune threshold.

        Weights are never rewritten: the effective weight is always computed from the stored
        weight and its timestamp, so a pass cannot drift or re-inflate anything, and it only
        scans (a 1M-synapse store in about a second) instead of rewriting every row.
        """
        return self.prune(now)

    @fail_open(dict)
    def prune(self, now: float | None = None, older_than_days: float | None = None) -> dict[str, int]:
        """Delete edges whose effective weight is below the threshold, and optionally every
        non-LTP edge not reinforced for `older_than_days`."""
        t = self._now(now)
        p = {"now": t, "th": config.PRUNE_THRESHOLD}
        with self._write() as db:
            out = {
                "synapses": db.execute(f"DELETE FROM synapses WHERE {SYN_EFF} < :th", p).rowcount,
                "transitions": db.execute(f"DELETE FROM transitions WHERE {TR_EFF} < :th", p).rowcount,
                "activations": db.execute(f"DELETE FROM activations WHERE {ACT_EFF} < :th", p).rowcount,
            }
            if older_than_days is not None:
                cutoff = t - older_than_days * DAY
                out["synapses"] += db.execute(
                    f"DELETE FROM synapses WHERE updated < ? AND count < {config.LTP_THRESHOLD}",
                    (cutoff,)).rowcount
                out["transitions"] += db.execute("DELETE FROM transitions WHERE updated < ?",
                                                 (cutoff,)).rowcount
        return out

    # --- recall -------------------------------------------------------------------------
    def _ns_clause(self, weights: dict[str, float]) -> tuple[str, dict[str, str]]:
        names = sorted(weights)
        return (",".join(f":ns{i}" for i in range(len(names))),
                {f"ns{i}": ns for i, ns in enumerate(names)})

    @fail_open(dict)
    def edges_of(self, nodes: Sequence[str], weights: dict[str, float],
                 now: float | None = None) -> dict[str, dict[str, float]]:
        """Merged neighbour weights of each node: sum over namespaces of multiplier x effective."""
        edges = self._edges_of(list(nodes), weights, self._now(now))
        return {n: dict(nbrs) for n, nbrs in edges.items()}

    def _edges_of(self, nodes: list[str], weights: dict[str, float], now: float,
                  by_ns: dict[tuple[str, str], dict[str, float]] | None = None,
                  ) -> dict[str, dict[str, float]]:
        """Merged neighbour weights; `by_ns`, when given, receives each edge's per-namespace
        parts (keyed (node, neighbour))."""
        out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        if not nodes or not weights:
            return out
        ns_marks, ns_params = self._ns_clause(weights)
        node_marks = ",".join(f":n{i}" for i in range(len(nodes)))
        params: dict[str, Any] = {"now": now, **ns_params} | {f"n{i}": n for i, n in enumerate(nodes)}
        wanted = set(nodes)
        db = self._db()
        for col in ("a", "b"):
            rows = db.execute(
                f"SELECT a, b, namespace, {SYN_EFF} FROM synapses "
                f"WHERE {col} IN ({node_marks}) AND namespace IN ({ns_marks})", params)
            for a, b, ns, w in rows:
                if w < config.PRUNE_THRESHOLD:
                    continue
                mw = weights[ns] * w
                u, v = (a, b) if col == "a" else (b, a)
                if u in wanted:
                    out[u][v] += mw
                    if by_ns is not None:
                        part = by_ns.setdefault((u, v), {})
                        part[ns] = part.get(ns, 0.0) + mw
        return out

    @fail_open(list)
    def spread(self, seeds: dict[str, float], weights: dict[str, float], depth: int, top_k: int,
               now: float | None = None) -> list[tuple[str, float]]:
        """Spreading activation: energy leaves each frontier node along its edges, decaying
        by SPREAD_DECAY per hop; hubs (degree > HUB_DEGREE) divide what they send by degree.
        Seeds are not returned; ties break by id so results are deterministic."""
        activation = self._spread(seeds, weights, depth, self._now(now), None)
        return heapq.nsmallest(top_k, activation.items(), key=lambda kv: (-kv[1], kv[0]))

    @fail_open(list)
    def spread_detailed(self, seeds: dict[str, float], weights: dict[str, float], depth: int,
                        top_k: int, now: float | None = None,
                        ) -> list[tuple[str, float, dict[str, float]]]:
        """Like `spread`, with each node's energy split by the namespace of the edges that
        delivered it (for --explain: was it my memory, the branch's, or the team's?)."""
        contrib: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        activation = self._spread(seeds, weights, depth, self._now(now), contrib)
        top = heapq.nsmallest(top_k, activation.items(), key=lambda kv: (-kv[1], kv[0]))
        return [(n, e, dict(contrib[n])) for n, e in top]

    def _spread(self, seeds: dict[str, float], weights: dict[str, float], depth: int, now: float,
                contrib: dict[str, dict[str, float]] | None) -> dict[str, float]:
        seed_set = set(seeds)
        activation: dict[str, float] = defaultdict(float)
        frontier = dict(seeds)
        for _ in range(max(0, depth)):
            if not frontier:
                break
            expand = (sorted(frontier) if len(frontier) <= config.SPREAD_FRONTIER_MAX else
                      heapq.nsmallest(config.SPREAD_FRONTIER_MAX, frontier,
                                      key=lambda n: (-frontier[n], n)))
            by_ns: dict[tuple[str, str], dict[str, float]] | None = {} if contrib is not None else None
            edges = self._edges_of(expand, weights, now, by_ns)
            received: dict[str, float] = defaultdict(float)
            for u in expand:
                nbrs = edges.get(u)
                if not nbrs:
                    continue
                norm = len(nbrs) if len(nbrs) > config.HUB_DEGREE else 1
                e = frontier[u] * config.SPREAD_DECAY / norm
                for v, w in nbrs.items():
                    if v in seed_set:
                        continue
                    received[v] += e * w
                    if contrib is not None and by_ns is not None:
                        for ns, part in by_ns[(u, v)].items():
                            contrib[v][ns] += e * part
            for v, e in received.items():
                activation[v] += e
            frontier = dict(received)
        return activation

    @fail_open(dict)
    def transitions_from(self, node: str, weights: dict[str, float],
                         now: float | None = None) -> dict[str, float]:
        ns_marks, ns_params = self._ns_clause(weights)
        out: dict[str, float] = defaultdict(float)
        rows = self._db().execute(
            f"SELECT dst, namespace, {TR_EFF} FROM transitions WHERE src = :src "
            f"AND namespace IN ({ns_marks})", {"src": node, "now": self._now(now), **ns_params})
        for dst, ns, w in rows:
            if w >= config.PRUNE_THRESHOLD:
                out[dst] += weights[ns] * w
        return dict(out)

    @fail_open(dict)
    def popularity(self, weights: dict[str, float], limit: int = 200,
                   now: float | None = None) -> dict[str, float]:
        """Decayed activation levels of the most active nodes (a prior for prediction)."""
        ns_marks, ns_params = self._ns_clause(weights)
        out: dict[str, float] = defaultdict(float)
        rows = self._db().execute(
            f"SELECT node, namespace, {ACT_EFF} AS lvl FROM activations "
            f"WHERE namespace IN ({ns_marks}) ORDER BY lvl DESC LIMIT :lim",
            {"now": self._now(now), "lim": limit * max(1, len(weights)), **ns_params})
        for node, ns, lvl in rows:
            out[node] += weights[ns] * lvl
        return dict(out)

    @fail_open(lambda: (0, {}))
    def cochange_counts(self, node: str, namespaces: Sequence[str]) -> tuple[int, dict[str, int]]:
        """Learning batches that touched `node` in `namespaces`, and per partner how many of
        them reinforced the pair (counts, not decayed weights: "5 of 6 editing sessions")."""
        marks, params = self._ns_clause(dict.fromkeys(namespaces, 1.0))
        ns = f"namespace IN ({marks})"
        db, params = self._db(), {"n": node, **params}
        of = int(db.execute(f"SELECT coalesce(sum(count), 0) FROM activations WHERE node = :n "
                            f"AND {ns}", params).fetchone()[0]) if namespaces else 0
        together: dict[str, int] = defaultdict(int)
        for partner, count in db.execute(f"SELECT b, count FROM synapses WHERE a = :n AND {ns} "
                                         f"UNION ALL SELECT a, count FROM synapses WHERE b = :n "
                                         f"AND {ns}", params) if of else ():
            together[partner] += int(count)
        return of, {p: min(c, of) for p, c in together.items() if c > 0}

    @fail_open(list)
    def question_files(self, query: str, k: int = 10, scan: int = 2000) -> list[tuple[str, float]]:
        """Files that past questions sharing words with `query` led to, scored by set cosine,
        less what their answers returning them unused took off (never below none)."""
        scores = self.question_scores(query, scan)
        return sorted(((f, s) for f, s in scores.items() if s > 0),
                      key=lambda kv: (-kv[1], kv[0]))[:k]

    @fail_open(dict)
    def question_scores(self, query: str, scan: int = 2000) -> dict[str, float]:
        """Per file, what past questions sharing words with `query` say (questions.py)."""
        rows = self._db().execute(
            "SELECT tokens, files, unused FROM questions ORDER BY id DESC LIMIT ?", (scan,))
        return question_scores(query, rows, config.UNUSED_WEIGHT)

    # --- inspection ---------------------------------------------------------------------
    @fail_open(dict)
    def stats(self, now: float | None = None, top: int = 10) -> dict[str, Any]:
        return {"path": str(self.path), **stats.summary(self._db(), self._now(now), top)}

    @fail_open(list)
    def dump(self, namespaces: Sequence[str] | None = None,
             now: float | None = None) -> list[dict[str, Any]]:
        """Every synapse with its effective weight (for bundle export)."""
        where, params = "", {"now": self._now(now)}
        if namespaces:
            marks, nsp = self._ns_clause(dict.fromkeys(namespaces, 1.0))
            where, params = f"WHERE namespace IN ({marks})", params | nsp
        rows = self._db().execute(
            f"SELECT a, b, namespace, {SYN_EFF}, count FROM synapses {where} ORDER BY namespace, a, b",
            params)
        return [{"a": a, "b": b, "namespace": ns, "weight": w, "count": c}
                for a, b, ns, w, c in rows if w >= config.PRUNE_THRESHOLD]

    @fail_open(list)
    def dump_transitions(self, now: float | None = None) -> list[dict[str, Any]]:
        rows = self._db().execute(
            f"SELECT src, dst, namespace, {TR_EFF}, count FROM transitions ORDER BY namespace, src, dst",
            {"now": self._now(now)})
        return [{"src": s, "dst": d, "namespace": ns, "weight": w, "count": c}
                for s, d, ns, w, c in rows if w >= config.PRUNE_THRESHOLD]

    @fail_open(lambda: 0)
    def seed_transitions(self, rows: Iterable[tuple[str, str, float]], namespace: str,
                         now: float | None = None, share: bool = False) -> int:
        """Imported transitions, MAX semantics (idempotent; `share`: as seed_pairs)."""
        t = self._now(now)
        data = [{"a": a, "b": b, "w": float(w), "ns": namespace, "now": t}
                for a, b, w in rows if a and b and a != b]
        with self._write() as db:
            if share and namespace == SHARED:
                sharing.seeds(db, t, transitions=[(d["a"], d["b"], d["w"]) for d in data])
            db.executemany(
                "INSERT INTO transitions(src, dst, namespace, weight, count, updated) "
                "VALUES (:a, :b, :ns, :w, 1, :now) ON CONFLICT(src, dst, namespace) DO UPDATE SET "
                f"weight = max({TR_EFF}, :w), updated = max(updated, :now)", data)
        return len(data)


__all__ = ["SCHEMA_VERSION", "SynapseStore", "question_tokens"]
