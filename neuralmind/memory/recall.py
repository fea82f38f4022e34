"""Recall: the memories a question needs, ranked, within a token budget.

    score = (gate * lexical + RECALL_ALPHA * max(semantic, RECALL_CODE_WEIGHT * code)) * sway(rank)

- lexical: FTS5 bm25 over label, hubs and text with field weights (RECALL_FIELD_WEIGHTS),
  plus RECALL_HUB_BONUS for an atom in a hub the question names (synonyms included),
  scaled by the gate: the IDF-weighted share of the question the best keyword match covers
  (with vectors; keyword-only recall has no meaning to weigh keywords against);
- semantic: cosine of the question with the atom's vector (the engine's embedder);
- code: how strongly the code search for the same question retrieved what the atom is
  `about` (a symbol itself, or RECALL_FILE_FACTOR of its file's best hit);
each min-max normalised over the candidates (what any signal proposed), so the weights
mean the same whatever the scale of bm25 or of the embedding model. Rank then moves the
score by at most +-RANK_SWAY. Forgotten atoms (ignored, archived, rejected) and superseded
ones are never candidates. Without the model recall is keyword-only and says so.

The answer is the best memories, one line each, until the o200k budget is spent (never
the whole store). For an agent session, every atom returned registers as pending
feedback (pending.py), and an overdue session gets the unrated list instead of results.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from neuralmind import config
from neuralmind.context.tokens import count_tokens
from neuralmind.errors import InvalidArgument
from neuralmind.memory import atoms, hubs, pending, rank
from neuralmind.memory.atoms import Atom
from neuralmind.memory.search import like_ranking
from neuralmind.memory.terms import fts_match, search_terms, words
from neuralmind.memory.vectors import RECALL_SCOPE

if TYPE_CHECKING:
    import sqlite3

    from neuralmind.memory.db import MemoryDB

log = logging.getLogger("neuralmind.memory")


@dataclass(frozen=True, slots=True)
class CodeHit:
    """One hit of the engine's code search for the same question."""

    node: str       # node id: a file path, or path::Qualified.name
    file: str
    score: float


@dataclass
class Recalled:
    atom: Atom
    score: float
    why: dict[str, float]
    status: str | None = None        # a decision's ACTIVE / STALE / INVALIDATED
    text: str = ""                   # the text as the answer shows it (clipped)

    def to_json(self) -> dict[str, Any]:
        a = self.atom
        out: dict[str, Any] = {
            "id": a.id, "type": a.type, "label": a.label, "text": self.text,
            "truncated": len(self.text) < len(a.text), "state": a.state, "hubs": a.hubs,
            "about": a.about, "score": round(self.score, 4),
            "why": {k: round(v, 4) for k, v in self.why.items()}}
        if self.status:
            out["status"] = self.status
        return out


@dataclass
class RecallResult:
    question: str
    mode: str                          # hybrid, or keyword without the model
    hits: list[Recalled] = field(default_factory=list)
    context: str = ""
    tokens: int = 0
    budget: int = 0
    candidates: int = 0
    notice: str = ""
    unrated: list[dict[str, str]] = field(default_factory=list)   # set: the results are withheld

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "question": self.question, "mode": self.mode, "context": self.context,
            "tokens": self.tokens, "budget": self.budget, "candidates": self.candidates,
            "atoms": [h.to_json() for h in self.hits]}
        if self.notice:
            out["notice"] = self.notice
        if self.unrated:
            out["unrated"] = self.unrated
        return out


def check_question(question: str) -> str:
    q = (question or "").strip()
    if not q:
        raise InvalidArgument("the question is empty")
    if len(q) > config.MAX_QUESTION_CHARS:
        raise InvalidArgument(f"the question is {len(q):,} characters; the limit is "
                              f"{config.MAX_QUESTION_CHARS:,}")
    return q


def check_budget(budget: int | None) -> int:
    b = config.RECALL_BUDGET if budget is None else budget
    if not isinstance(b, int) or isinstance(b, bool) or not config.MIN_BUDGET <= b <= config.MAX_BUDGET:
        raise InvalidArgument(f"budget must be an integer between {config.MIN_BUDGET} and "
                              f"{config.MAX_BUDGET}")
    return b


def recall(store: MemoryDB, question: str, budget: int | None = None,
           code_hits: list[CodeHit] | None = None, session: str | None = None,
           record: bool = True) -> RecallResult:
    """The best memories for `question` within `budget` tokens (see the module docstring).

    `session` names the agent session the answer goes to (None: a person, no pending
    feedback); `record` False changes nothing in the store (a read-only server)."""
    q = check_question(question)
    budget = check_budget(budget)
    now = store.clock.now()
    if session and record:
        overdue = pending.overdue(store, session, now)
        if overdue:
            return RecallResult(q, "withheld", budget=budget, unrated=overdue,
                                notice=pending.notice(overdue))
    conn = store.connection()
    cache = store.vectors
    cache.refresh(conn, store.write, store.generation())
    mode = "keyword" if cache.unavailable else "hybrid"
    notice = (f"keyword-only recall: the embedding model is unavailable ({cache.unavailable})"
              if cache.unavailable else "")
    scored = _score(store, conn, q, code_hits or [], now)
    result = RecallResult(q, mode, budget=budget, candidates=len(scored), notice=notice)
    atoms.attach_edges(conn, [h.atom for h in scored[:config.RECALL_MAX_K]])
    _render(result, scored, budget)
    if record and result.hits:
        with store.write() as wconn:
            if session:
                pending.register(store, wconn, session, [h.atom.id for h in result.hits], now)
    return result


def _score(store: MemoryDB, conn: sqlite3.Connection, question: str,
           code_hits: list[CodeHit], now: float) -> list[Recalled]:
    depth = config.RECALL_DEPTH
    lexical = _lexical(store, conn, question, depth)
    named = hubs.named(store.hub_list(), question)
    in_hub = _hub_members(store, conn, named, depth)
    cosine, semantic = _semantic(store, question, depth)
    code = _code(conn, code_hits, depth)
    seqs = sorted(set(lexical) | in_hub | set(semantic) | set(code))
    if not seqs:
        return []
    loaded = {a.seq: a for a in atoms.load(
        conn, f"WHERE seq IN ({','.join('?' * len(seqs))})", tuple(seqs), edges=False)}
    seqs = [s for s in seqs if s in loaded]
    edges = atoms.edge_counts(conn, [loaded[s].id for s in seqs])
    statuses = _statuses(conn, [loaded[s].id for s in seqs if loaded[s].type == "decision"])
    cos = {s: cosine(s) for s in seqs}
    lex_raw = {s: lexical.get(s, 0.0) for s in seqs}
    top_lex = max(lex_raw.values(), default=0.0)
    lex = {s: (lex_raw[s] / top_lex if top_lex > 0 else 0.0)
           + (config.RECALL_HUB_BONUS if s in in_hub else 0.0) for s in seqs}
    lex_n, sem_n, code_n = _minmax(lex), _minmax(cos), _minmax(code, seqs)
    # the gate weighs keywords against meaning: keyword-only recall keeps them whole (gated
    # there, the code term crowded exact answers out: exact R@5 0.891 -> 0.836)
    best_lex = sorted((s for s in seqs if lex[s] > 0), key=lambda s: (-lex[s], s))
    gate = (1.0 if store.vectors.unavailable else
            _lexical_gate(store, conn, question,
                          [loaded[s] for s in best_lex[:config.RECALL_GATE_CANDIDATES]]))
    out: list[Recalled] = []
    forgotten: list[tuple[Atom, str]] = []
    for s in seqs:
        a = loaded[s]
        if lex[s] <= 0 and cos[s] < config.RECALL_SIM_FLOOR and code.get(s, 0.0) <= 0:
            continue                      # nothing relevant proposed it: noise
        r = rank.rank(a, edges.get(a.id, 0), now)
        state = rank.state_for(a, r)
        if state != a.state:
            forgotten.append((a, state))
            continue
        base = combine(gate * lex_n[s], sem_n[s], code_n[s])
        why = {"lexical": gate * lex_n[s], "semantic": sem_n[s], "code": code_n[s], "rank": r}
        out.append(Recalled(a, base * rank.sway(r), why, statuses.get(a.id)))
    if forgotten:
        store.apply_states(forgotten)
    out.sort(key=lambda h: (-h.score, h.atom.seq))
    return out


def combine(lexical: float, semantic: float, code: float) -> float:
    """The relevance of one candidate from its normalised signals (before rank). Code and
    meaning are two ways to the same atom, so they compete (max) instead of adding: added, a
    code hit lifted atoms the question does not mean over the one it does (the eval's
    paraphrases, BENCHMARKS.md "Memory")."""
    return lexical + config.RECALL_ALPHA * max(semantic, config.RECALL_CODE_WEIGHT * code)


def _lexical_gate(store: MemoryDB, conn: sqlite3.Connection, question: str,
                  matched: list[Atom]) -> float:
    """How much of the question the best keyword match covers: the IDF-weighted share of the
    question's search terms that one candidate's label, hubs (with synonyms) or text holds.

    The lexical term is min-max normalised, so its best candidate scores 1 whether it shares
    every rare word of the question or one common word; scaled by this share, a paraphrase's
    stray word match no longer outweighs the meaning (eval dev half: BENCHMARKS.md)."""
    terms = search_terms(question)
    if not terms or not matched:
        return 0.0
    idf = _idf(store, conn, terms)
    total = sum(idf)
    synonyms = {h.name: " ".join(h.synonyms) for h in store.hub_list()}
    best = 0.0
    for a in matched:
        fields = " ".join([a.label, a.text, *a.hubs, *(synonyms.get(h, "") for h in a.hubs)])
        have = set(words(fields))
        got = sum(w for t, w in zip(terms, idf, strict=True)
                  if t in have or any(x.startswith(t) for x in have))
        best = max(best, got / total)
    return best


def _idf(store: MemoryDB, conn: sqlite3.Connection, terms: list[str]) -> list[float]:
    """log((N + 1) / (df + 0.5)) per term over every atom (df by prefix, as the search
    matches; counted once per term until the store changes); without FTS5 every term
    weighs 1."""
    if not store.use_fts:
        return [1.0] * len(terms)
    generation = store.generation()
    if store.term_df[0] != generation:
        store.term_df = (generation, {})
    df = store.term_df[1]
    if "" not in df:
        df[""] = conn.execute("SELECT count(*) FROM atoms").fetchone()[0]
    for t in terms:
        if t not in df:
            df[t] = conn.execute("SELECT count(*) FROM atoms_fts WHERE atoms_fts MATCH ?",
                                 (fts_match([t]),)).fetchone()[0]
    return [math.log((df[""] + 1) / (df[t] + 0.5)) for t in terms]


def _lexical(store: MemoryDB, conn: sqlite3.Connection, question: str,
             depth: int) -> dict[int, float]:
    terms = search_terms(question)
    if not terms:
        return {}
    if store.use_fts:
        # the full-text index alone ranks (joining every match to its atom to filter first
        # doubled the cost at 10k atoms); the best 2 x depth are then filtered to recallable
        w = config.RECALL_FIELD_WEIGHTS
        rows = conn.execute(
            f"SELECT rowid, -bm25(atoms_fts, {w[0]}, {w[1]}, {w[2]}) AS score FROM atoms_fts "
            "WHERE atoms_fts MATCH ? ORDER BY score DESC, rowid LIMIT ?",
            (fts_match(terms), 2 * depth)).fetchall()
        if not rows:
            return {}
        scores = {int(s): max(0.0, float(v)) for s, v in rows}
        keep = {int(r[0]) for r in conn.execute(
            f"SELECT a.seq FROM atoms a WHERE a.seq IN ({','.join('?' * len(scores))}) "
            f"AND {RECALL_SCOPE}", list(scores))}
        return dict(sorted(((s, v) for s, v in scores.items() if s in keep),
                           key=lambda sv: (-sv[1], sv[0]))[:depth])
    return dict(like_ranking(conn, terms, RECALL_SCOPE, (), depth))


def _hub_members(store: MemoryDB, conn: sqlite3.Connection, named: list[str],
                 depth: int) -> set[int]:
    """The newest `depth` recallable atoms of each named hub (kept until the store changes:
    a busy hub's members are a sort of hundreds of rows)."""
    generation = store.generation()
    if store.hub_seqs[0] != generation:
        store.hub_seqs = (generation, {})
    cached = store.hub_seqs[1]
    out: set[int] = set()
    for hub in named:
        if hub not in cached:
            cached[hub] = {int(r[0]) for r in conn.execute(
                "SELECT a.seq FROM atom_hubs h JOIN atoms a ON a.id = h.atom_id "
                f"WHERE h.hub = ? AND {RECALL_SCOPE} ORDER BY a.seq DESC LIMIT ?", (hub, depth))}
        out |= cached[hub]
    return out


def _semantic(store: MemoryDB, question: str, depth: int
              ) -> tuple[Callable[[int], float], dict[int, float]]:
    """(seq -> cosine over every cached atom, the top `depth` above the floor)."""
    cache = store.vectors
    if cache.unavailable or not len(cache.seqs):
        return (lambda seq: 0.0), {}
    sims = cache.similarities(question)
    if len(sims) > depth:                  # the top `depth` without sorting 10k cosines
        top_rows = np.argpartition(-sims, depth)[:depth]
        order = top_rows[np.argsort(-sims[top_rows], kind="stable")]
    else:
        order = np.argsort(-sims, kind="stable")
    top = {int(cache.seqs[i]): float(sims[i]) for i in order
           if sims[i] >= config.RECALL_SIM_FLOOR}

    def cosine(seq: int) -> float:
        row = cache.index.get(seq)
        return 0.0 if row is None else float(sims[row])

    return cosine, top


def _code(conn: sqlite3.Connection, code_hits: list[CodeHit], depth: int) -> dict[int, float]:
    """seq -> code relevance of the atoms `about` what the code search retrieved."""
    hits = code_hits[:config.RECALL_CODE_HITS]
    best = max((h.score for h in hits), default=0.0)
    if best <= 0:
        return {}
    node_score: dict[str, float] = {}
    file_score: dict[str, float] = {}
    for h in hits:
        node_score[h.node] = max(node_score.get(h.node, 0.0), h.score / best)
        file_score[h.file] = max(file_score.get(h.file, 0.0), h.score / best)
    found: dict[str, float] = {}

    def offer(src: str, value: float) -> None:
        found[src] = max(found.get(src, 0.0), value)

    targets = list(set(node_score) | set(file_score))
    for i in range(0, len(targets), 500):
        chunk = targets[i:i + 500]
        for src, dst in conn.execute(
                "SELECT src, dst FROM edges WHERE kind = 'about' AND dst_type != 'atom' AND dst IN "
                f"({','.join('?' * len(chunk))})", chunk):
            offer(src, node_score.get(dst, 0.0) or config.RECALL_FILE_FACTOR * file_score.get(dst, 0.0))
    for f, value in file_score.items():      # symbols of a retrieved file
        for src, _ in conn.execute(
                "SELECT src, dst FROM edges WHERE kind = 'about' AND dst_type = 'symbol' "
                "AND dst >= ? AND dst < ?", (f + "::", f + ":;")):
            offer(src, config.RECALL_FILE_FACTOR * value)
    if not found:
        return {}
    ids = sorted(found, key=lambda x: (-found[x], x))[:depth]
    rows = conn.execute(f"SELECT a.seq, a.id FROM atoms a WHERE a.id IN ({','.join('?' * len(ids))}) "
                        f"AND {RECALL_SCOPE}", ids).fetchall()
    return {int(s): found[i] for s, i in rows}


def _statuses(conn: sqlite3.Connection, ids: list[str]) -> dict[str, str]:
    if not ids:
        return {}
    return dict(conn.execute(f"SELECT atom_id, status FROM decision_records WHERE atom_id IN "
                             f"({','.join('?' * len(ids))})", ids).fetchall())


def _minmax(values: dict[int, float], keys: list[int] | None = None) -> dict[int, float]:
    """Each value stretched to 0..1 over the candidates (all equal and positive: 1)."""
    keys = list(values) if keys is None else keys
    vals = [values.get(k, 0.0) for k in keys]
    if not vals:
        return {}
    lo, hi = min(vals), max(vals)
    if hi <= lo:
        return {k: (1.0 if hi > 0 else 0.0) for k in keys}
    return {k: (values.get(k, 0.0) - lo) / (hi - lo) for k in keys}


def line(h: Recalled) -> str:
    a = h.atom
    tag = a.type if a.state == "active" else f"{a.type}, {a.state}"
    if h.status and h.status != "ACTIVE":
        tag += f", {h.status}"
    same = " ".join(a.text.split()).startswith(a.label.rstrip("…"))
    body = h.text if same else f"{a.label}: {h.text}"
    return f"- [{tag}] {body} (id {a.id})"


def _render(result: RecallResult, scored: list[Recalled], budget: int) -> None:
    """Best first, one line each, until the budget or RECALL_MAX_K is reached."""
    lines: list[str] = []
    spent = 0
    for h in scored[:config.RECALL_MAX_K]:
        h.text = _clip(h.atom.text, config.RECALL_TEXT_CHARS)
        text = line(h)
        cost = count_tokens(text + "\n")
        if spent + cost > budget:
            if lines:
                break
            continue                  # the best one alone is too long: try the next
        lines.append(text)
        spent += cost
        result.hits.append(h)
    result.context = "\n".join(lines)
    result.tokens = count_tokens(result.context) if lines else 0


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"
