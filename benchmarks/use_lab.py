"""Levers for the learned part of retrieval, tried offline on use_bench.py's protocol.

The cold file ranking (file, score) of every history and test row of both history sets is
dumped once (the product path, `Workspace.query` on a fresh index copy: use_bench's
`fresh`); each lever then re-ranks it from what the replayed rows teach (their question
and the files they changed), in pure Python, so a sweep takes seconds instead of the
engine's ten minutes. The replica of what ships (token-cosine question memory at
QUESTION_BOOST plus co-change spread from the top 3 files at SYNAPSE_BOOST) is the first
row; the engine's own figures are use_bench.py's. Chosen on the dev split (60 % of history
replayed, 40 % asked), reported on test, both sets, no per-repository constant.

    python benchmarks/use_lab.py            # dumps /tmp/nm-use-lab/cold.json on first run
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import context_bench as cb
import use_bench as ub

from neuralmind.synapse.questions import question_tokens

DUMP = Path("/tmp/nm-use-lab/cold.json")
Row = dict[str, Any]
Scores = dict[str, float]


def dump() -> dict[str, list[Row]]:
    """Per `set|snapshot`: every history and test row with its cold file ranking."""
    if DUMP.exists():
        return json.loads(DUMP.read_text(encoding="utf-8"))
    cb.WORK = ub.WORK
    out: dict[str, list[Row]] = {}
    for name, (hist, test) in ub.SETS.items():
        hrows, trows = cb.rows_of(hist), cb.rows_of(test)
        for src in dict.fromkeys(r["src"] for r in hrows):
            ws = ub.fresh(src, "lab-cold")
            out[f"{name}|{src}"] = [
                {"q": r["question"], "gold": r["gold"], "split": r["split"],
                 "files": [(f["file"], f["score"]) for f in ws.query(r["question"]).to_json()
                           .get("files", [])]}
                for r in [x for x in hrows + trows if x["src"] == src]]
            ws.synapses.close()
            print(name, src, file=sys.stderr, flush=True)
    DUMP.parent.mkdir(parents=True, exist_ok=True)
    DUMP.write_text(json.dumps(out), encoding="utf-8")
    return out


def split(rows: list[Row], dev: bool) -> tuple[list[Row], list[Row]]:
    hist = [r for r in rows if r["split"] == "history"]
    if dev:
        cut = int(len(hist) * 0.6)
        return hist[:cut], hist[cut:]
    return hist, [r for r in rows if r["split"] == "test"]


def mrr(files: list[str], gold: list[str]) -> float:
    return next((1 / i for i, f in enumerate(files, 1) if f in set(gold)), 0.0)


def normalised(d: Scores) -> Scores:
    top = max(d.values(), default=0.0)
    return {k: v / top for k, v in d.items()} if top > 0 else {}


def boosted(r: Row, learned: Scores, weight: float, new_share: float = 0.5) -> list[str]:
    """The cold ranking plus weight x best score x the normalised learned score (files not
    in the ranking enter at `new_share` of it), as retrieve._boost does."""
    files = dict(r["files"])
    if not files:
        return []
    best = max(files.values())
    for f, v in normalised(learned).items():
        if f in files:
            files[f] += weight * best * v
        elif v > 0:
            files[f] = new_share * weight * best * v
    return [f for f, _ in sorted(files.items(), key=lambda kv: (-kv[1], kv[0]))]


# --- what the replayed rows teach, per lever ---------------------------------------------------
def token_knn(h: list[Row], k: int | None = None, idf: bool = False) -> Callable[[Row], Scores]:
    """Past questions by set cosine of their tokens (optionally IDF-weighted), the k nearest."""
    past = [(set(question_tokens(x["q"])), x["gold"]) for x in h]
    df = Counter(t for toks, _ in past for t in toks)

    def w(t: str) -> float:
        return math.log(1 + len(past) / (1 + df[t])) if idf else 1.0

    def score(r: Row) -> Scores:
        q = set(question_tokens(r["q"]))
        qn = math.sqrt(sum(w(t) ** 2 for t in q))
        sims = []
        for toks, gold in past:
            common = sum(w(t) ** 2 for t in q & toks)
            if common:
                sims.append((common / (qn * math.sqrt(sum(w(t) ** 2 for t in toks))), gold))
        return lend(sims, k)
    return score


def lend(sims: list[tuple[float, list[str]]], k: int | None) -> Scores:
    """The k most similar past rows lend their files their similarity."""
    out: Scores = defaultdict(float)
    for s, gold in sorted(sims, key=lambda s: -s[0])[:k]:
        for f in gold:
            out[f] += s
    return out


def cochange_spread(h: list[Row]) -> Callable[[Row], Scores]:
    """Files that changed with the cold top 3 (the learned sessions' synapses)."""
    co: dict[str, Counter[str]] = defaultdict(Counter)
    for x in h:
        for a in x["gold"]:
            co[a].update(b for b in x["gold"] if b != a)

    def score(r: Row) -> Scores:
        out: Scores = defaultdict(float)
        for seed, _ in r["files"][:3]:
            total = sum(co[seed].values())
            for f, n in co[seed].items():
                out[f] += n / total
        return out
    return score


def file_bm25(h: list[Row], k1: float = 1.2, b: float = 0.75) -> Callable[[Row], Scores]:
    """Each file's past questions as one document, BM25 against the new question."""
    docs: dict[str, Counter[str]] = defaultdict(Counter)
    for x in h:
        for f in x["gold"]:
            docs[f].update(question_tokens(x["q"]))
    df = Counter(t for d in docs.values() for t in d)
    avg = sum(sum(d.values()) for d in docs.values()) / max(len(docs), 1)

    def score(r: Row) -> Scores:
        out: Scores = {}
        for f, d in docs.items():
            length, s = sum(d.values()), 0.0
            for t in question_tokens(r["q"]):
                if d.get(t):
                    idf = math.log(1 + (len(docs) - df[t] + 0.5) / (df[t] + 0.5))
                    s += idf * d[t] * (k1 + 1) / (d[t] + k1 * (1 - b + b * length / avg))
            if s > 0:
                out[f] = s
        return out
    return score


def recency(h: list[Row], tau: float) -> Callable[[Row], Scores]:
    """How often, and how recently, each file changed (exp decay over replayed commits)."""
    prior: Scores = defaultdict(float)
    for i, x in enumerate(h):
        for f in x["gold"]:
            prior[f] += math.exp(-(len(h) - 1 - i) / tau) if tau else 1.0
    return lambda r: prior


def answer_overlap(h: list[Row], k: int = 5) -> Callable[[Row], Scores]:
    """Past answers whose cold top 5 overlap this one's (Jaccard): what they led to."""
    def score(r: Row) -> Scores:
        mine = {f for f, _ in r["files"][:5]}
        return lend([(len(mine & t) / len(mine | t), x["gold"]) for x in h
                     if (t := {f for f, _ in x["files"][:5]}) and mine & t], k)
    return score


def use_rate(h: list[Row]) -> Callable[[Row], Scores]:
    """Per file: kept / returned in the top 5 of past answers, centred on 0.5 (a file often
    returned and never used sinks)."""
    returned, kept = Counter(), Counter()
    for x in h:
        for f, _ in x["files"][:5]:
            returned[f] += 1
            kept[f] += f in x["gold"]
    return lambda r: {f: (kept[f] + 1) / (returned[f] + 2) - 0.5 for f in returned}


def rrf_fused(r: Row, learned: Scores, weight: float, k: int = 10) -> list[str]:
    """The learned list fused with the cold one by reciprocal rank (not a boost)."""
    score: Scores = defaultdict(float)
    for i, (f, _) in enumerate(r["files"], 1):
        score[f] += 1 / (k + i)
    for i, f in enumerate(sorted(learned, key=lambda f: (-learned[f], f))[:20], 1):
        score[f] += weight / (k + i)
    return [f for f, _ in sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))]


def signed_boost(r: Row, learned: Scores, weight: float) -> list[str]:
    """Cold score + weight x best x the (signed) learned score, ranked files only."""
    files = dict(r["files"])
    best = max(files.values(), default=0.0)
    for f in files:
        files[f] += weight * best * learned.get(f, 0.0)
    return [f for f, _ in sorted(files.items(), key=lambda kv: (-kv[1], kv[0]))]


def term_weights(h: list[Row], bound: float = 3.0, alpha: float = 0.1,
                 depth: int = 10) -> Callable[[Row], Scores]:
    """Discriminative term -> file weights (USE7): replayed in order, whenever the ranking
    so far (cold + alpha x the weights) does not put a kept file first, each of the
    question's terms gains 1 toward the kept files and loses 1 toward the returned-unused
    files above the first kept one, bounded at +-bound. Mistake-driven, so a term common to
    every question gains and loses about evenly; a new question scores files by its terms'
    summed weights."""
    w: dict[str, Scores] = defaultdict(lambda: defaultdict(float))

    def learned(toks: list[str]) -> Scores:
        out: Scores = defaultdict(float)
        for t in toks:
            for f, v in w.get(t, {}).items():
                out[f] += v
        return out

    for x in h:
        toks = question_tokens(x["q"])
        s, files = learned(toks), dict(x["files"])
        best = max(files.values(), default=1.0) or 1.0
        top = max((abs(v) for v in s.values()), default=0.0) or 1.0
        score = {f: v / best for f, v in files.items()}
        for f, v in s.items():
            score[f] = score.get(f, 0.0) + alpha * v / top
        order = sorted(score, key=lambda f: (-score[f], f))[:depth]
        gold = set(x["gold"])
        first = next((i for i, f in enumerate(order) if f in gold), None)
        if first == 0:
            continue
        for t in toks:
            for g in gold:
                w[t][g] = min(bound, w[t][g] + 1)
            for u in order[:first] if first is not None else order:
                w[t][u] = max(-bound, w[t][u] - 1)
    return lambda r: learned(question_tokens(r["q"]))


def signed_new(r: Row, learned: Scores, weight: float) -> list[str]:
    """Cold score + weight x best x the learned score over its largest magnitude (signed:
    negative weights push files down); positive files not ranked enter at half."""
    files = dict(r["files"])
    best = max(files.values(), default=0.0)
    top = max((abs(v) for v in learned.values()), default=0.0)
    for f, v in learned.items():
        if top and f in files:
            files[f] += weight * best * v / top
        elif top and v > 0:
            files[f] = .5 * weight * best * v / top
    return [f for f, _ in sorted(files.items(), key=lambda kv: (-kv[1], kv[0]))]


def question_memory(h: list[Row], power: float = 1.0, tau: float = 0.0,
                    share: bool = False) -> Callable[[Row], Scores]:
    """The shipped question memory (set cosine) with variants: cosine**power, times
    exp(-age / tau) in replayed commits, or each past question's similarity shared among
    its files instead of lent to each."""
    past = [(set(question_tokens(x["q"])), x["gold"]) for x in h]

    def score(r: Row) -> Scores:
        q, out = set(question_tokens(r["q"])), defaultdict(float)
        for i, (toks, gold) in enumerate(past):
            if q & toks:
                s = (len(q & toks) / math.sqrt(len(q) * len(toks))) ** power
                s *= math.exp(-(len(past) - 1 - i) / tau) if tau else 1.0
                for f in gold:
                    out[f] += s / len(gold) if share else s
        return out
    return score


def keep_first(r: Row, learned: tuple[Scores, Scores], weight: float,
               theta: float = 0.5) -> list[str]:
    """Rank-preserving insertion (USE7): the shipped boost, but the cold first file stays
    first unless the question memory's raw score for the new first file exceeds the cold
    first's by theta (the learned files otherwise enter at rank 2 or below)."""
    warm = boosted_two(r, *learned, weight=weight)
    cold = [f for f, _ in r["files"]]
    asked = learned[0]
    if not cold or warm[0] == cold[0] or asked.get(warm[0], 0) - asked.get(cold[0], 0) > theta:
        return warm
    return [cold[0]] + [f for f in warm if f != cold[0]]


def shipped(h: list[Row]) -> Callable[[Row], tuple[Scores, Scores]]:
    asked, spread = token_knn(h), cochange_spread(h)
    return lambda r: (asked(r), spread(r))


# name -> (what the replayed rows teach, how it enters the ranking, its weight)
LEVERS: dict[str, tuple[Callable[[list[Row]], Callable[[Row], Any]],
                        Callable[[Row, Any, float], list[str]], float]] = {
    "shipped replica: token cosine 0.10 + co-change spread 0.10": (
        shipped, lambda r, x, w: boosted_two(r, *x), .1),
    "token kNN, 3 nearest, 0.10": (lambda h: token_knn(h, 3), boosted, .1),
    "token cosine, IDF-weighted, 0.10": (lambda h: token_knn(h, idf=True), boosted, .1),
    "per-file BM25 of past questions, boost 0.05": (file_bm25, boosted, .05),
    "per-file BM25 of past questions, boost 0.10": (file_bm25, boosted, .1),
    "per-file BM25 fused by RRF (k 10, weight 0.25)": (file_bm25, rrf_fused, .25),
    "change frequency prior, 0.10": (lambda h: recency(h, 0), boosted, .1),
    "recency prior (10 commits), 0.05": (lambda h: recency(h, 10), boosted, .05),
    "answer-overlap kNN (top-5 Jaccard, 5 nearest), 0.10": (answer_overlap, boosted, .1),
    "per-file use rate (kept / returned), 0.10": (use_rate, signed_boost, .1),
    # FRESH4: the learned files displace right cold answers more often than they lift wrong
    # ones, so apply them only where the cold ranking is unsure, or only inside its top ten
    "shipped, scaled by the cold ranking's doubt (1 - top-2 margin), 0.10": (
        shipped, lambda r, x, w: boosted_two(r, *x, weight=w, gate=True), .1),
    "shipped, cold top 10 only (no file enters), 0.10": (
        shipped, lambda r, x, w: boosted_two(r, *x, weight=w, within=10), .1),
    # USE7 (2026-12-02): discriminative term weights, rank-preserving insertion, variants
    # of the question memory and of the two boosts' weights
    "term -> file weights (mistake-driven, bound 3), signed, 0.05": (term_weights, signed_new, .05),
    "term -> file weights, signed, 0.10": (term_weights, signed_new, .1),
    "term -> file weights, positive only, 0.10": (
        term_weights, lambda r, x, w: boosted(r, {f: v for f, v in x.items() if v > 0}, w), .1),
    "shipped, cold first kept unless question memory leads by 0.5, 0.10": (shipped, keep_first, .1),
    "the same at boost 0.15": (shipped, keep_first, .15),
    "question memory: similarity shared among a question's files, 0.10": (
        lambda h: (lambda a, s: lambda r: (a(r), s(r)))(question_memory(h, share=True),
                                                        cochange_spread(h)),
        lambda r, x, w: boosted_two(r, *x, weight=w), .1),
    "question memory: cosine^2 x recency (100 commits), 0.15": (
        lambda h: (lambda a, s: lambda r: (a(r), s(r)))(question_memory(h, 2, 100),
                                                        cochange_spread(h)),
        lambda r, x, w: boosted_two(r, *x, weight=w), .15),
    "shipped at 0.15 / 0.10 (question memory / spread)": (
        shipped, lambda r, x, w: boosted_two(r, *x, weight=w, spread_weight=.1), .15),
}


def boosted_two(r: Row, asked: Scores, spread: Scores, weight: float = .1, gate: bool = False,
                within: int | None = None, spread_weight: float | None = None) -> list[str]:
    """retrieve._boost: SYNAPSE_BOOST x best x min(1, spread) + QUESTION_BOOST x best x the
    normalised question memory (0.10 each), files reached only this way at half. `gate`
    scales both by 1 - (top1 - top2) / top1 of the cold ranking; `within` boosts only its
    first files and lets none enter; `spread_weight` sets the spread's apart."""
    files = dict(r["files"])
    if not files:
        return []
    order = sorted(files.values(), reverse=True)
    best = order[0]
    if gate and best > 0:
        weight *= 1 - (best - (order[1] if len(order) > 1 else 0.0)) / best
    allowed = set(sorted(files, key=lambda f: -files[f])[:within]) if within else set(files)
    sw = weight if spread_weight is None else spread_weight
    boost: Scores = {f: sw * best * min(1.0, e) for f, e in spread.items()}
    for f, p in normalised(asked).items():
        boost[f] = boost.get(f, 0.0) + weight * best * p
    for f, b in boost.items():
        if f in allowed:
            files[f] += b
        elif b > 0 and within is None and f not in files:
            files[f] = .5 * b
    return [f for f, _ in sorted(files.items(), key=lambda kv: (-kv[1], kv[0]))]


def evaluate(data: dict[str, list[Row]], lever: str, dev: bool) -> dict[str, float]:
    out = {}
    for name in ub.SETS:
        cold = warm = n = 0.0
        for key, rows in data.items():
            if key.startswith(name + "|"):
                history, asked = split(rows, dev)
                make, rank, weight = LEVERS[lever]
                learned = make(history)
                for r in asked:
                    cold += mrr([f for f, _ in r["files"]], r["gold"])
                    warm += mrr(rank(r, learned(r), weight), r["gold"])
                    n += 1
        out[name] = (warm - cold) / n
    return out


def main() -> None:
    data = dump()
    print("| lever | dev hist | dev h2 | test hist | test h2 |\n|---|---:|---:|---:|---:|")
    for lever in LEVERS:
        d, t = evaluate(data, lever, True), evaluate(data, lever, False)
        print(f"| {lever} | {d['hist']:+.3f} | {d['h2']:+.3f} | {t['hist']:+.3f} | "
              f"{t['h2']:+.3f} |")


if __name__ == "__main__":
    main()
