"""A learned file ranker (issue #14, RETR7): one global weight vector over signals the
engine already computes, fitted on the history projects' tuning rows, judged on their
test rows (in-sample and leave-one-repository-out) and by the public guards.

Per question, the candidates are the union of the engine's three file lists, each read
`CANDIDATE_DEPTH` deep (symbols: the files of its 40 best symbol hits; whole-file BM25,
with scores `KEYWORD_DEPTH` deep; meaning: files by their best node among the 300
nearest), the engine's own 20 files, and the tests paired with any of them. Each
(question, file) gets scale-free features (`candidate_features`): reciprocal ranks in each
list and in the engine's ranking, scores over the question's best, cosine gaps to the
best, z-scores within the candidates, flags (test, documentation, a test's share of its
best source), hit counts, path-name match, exact-name files, size. No feature names a
repository or a language. The score is linear; the weights come from pairwise logistic
regression (every gold candidate against every other; each project weighs the same) in
numpy, or from coordinate ascent on the tuning objective itself. On the learned order the
engine's last step runs again (each top source brings its test into the top five), and the
engine's first `protect` files keep their places.

    NM_BENCH_WORK=... NM_LAB_CACHE=... python benchmarks/learn_rank_lab.py --cache F.pkl \
        --features base,flags,path,exact,cos,kw,sym,rrf --method ca --protect 1 --loro
    python benchmarks/learn_rank_lab.py --cache F.pkl --trials t.txt  # "groups l2 beta protect method"

RETR8 (`--gate`): questions query.is_locate_question picks (question form, article-led
descriptions) keep the engine's ranking and are left out of the fit; `--select` chooses
among the `--trials` points by nested leave-one-repository-out (each held-out project's
point is the best, by the tuning objective, of the points fitted on the other nine). The
candidates' features are the engine's (file_rank.candidate_features).

    python benchmarks/learn_rank_lab.py --cache F.pkl --trials grid.txt --gate --select

RETR9: `--method listnet` (listwise softmax) and `mix` (the mean of the pairwise and the
listwise weights), and four more feature groups computed here, not in the engine
(`retr9_features`: stem, dir, pair, testx). None won (BENCHMARKS.md RETR9).

Splits: hist-dev + h2-dev rows fit (never the test rows); hist-test + h2-test report;
symbols and retrieval are guards only (rank_lab.GUARDS). Results: BENCHMARKS.md (RETR7).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neuralmind.config import LEARNED_CANDIDATE_DEPTH
from neuralmind.config import LEARNED_KEYWORD_DEPTH as KEYWORD_DEPTH
from neuralmind.index.file_rank import FileEvidence, candidate_features, fuse

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rank_lab as rl  # noqa: E402
import ranking_variants as rv  # noqa: E402

CANDIDATE_DEPTH = LEARNED_CANDIDATE_DEPTH   # --depth sets it (RETR9: a deeper pool)
FEATURES = {
    # group -> feature names (file_rank.candidate_features computes them)
    "base": ["fused", "rr_fused"],
    "rrf": ["rrf_sym", "rrf_kw", "rrf_mean"],
    "sym": ["sym_norm", "sym_hits"],
    "kw": ["kw_norm", "kw_z"],
    "cos": ["cos_gap", "cos_z"],
    "flags": ["is_test", "is_doc", "pair_lift"],
    "path": ["path_match"],
    "exact": ["exact", "sym_top"],
    "size": ["size_z"],
    "sizelo": ["size_lo"],
    "sizehi": ["size_hi"],
    # RETR9
    "stem": ["stem_match", "stem_cover"],
    "dir": ["dir_share"],
    "pair": ["pair_rr", "has_test"],
    "testx": ["test_rr_fused", "test_kw_norm", "test_cos_gap", "test_path_match"],
}
FEATURE_ORDER = [f for g in FEATURES.values() for f in g]


@dataclass
class Cands:
    files: list[str]
    x: np.ndarray          # n x d, every feature (FEATURE_ORDER)
    gold: np.ndarray       # n bools
    pairs: dict[str, list[str]]
    shipped: list[str]     # the ranking before the learned step


def evidence(repo: Any, q: Any, s: Any) -> FileEvidence:
    """The three lists with their scores, as `SearchIndex.search` computes them (one real
    search records the symbol hits; whole-file BM25 and the nearest nodes are re-read)."""
    import neuralmind.index.search_index as si
    from neuralmind.config import FILE_BM25_B, FILE_DENSE_CANDIDATES, SYMBOL_LIST_DEPTH
    from neuralmind.index.query import parse_question

    idx = repo.index
    got: dict[str, Any] = {}
    orig = si.rank_symbols      # `search` calls the module's function (LIVE10 moved it)

    def rec(*a: Any, **kw: Any) -> Any:
        hits = orig(*a, **kw)
        got["hits"] = [(si.node_path(h.id), h.score) for h in hits[:SYMBOL_LIST_DEPTH]]
        return hits

    si.rank_symbols = rec
    try:
        idx._embedder = rv.FixedEmbedder(s.extra["qv"], idx._vectors.model_id)
        idx.search(q.text, k=40)
    finally:
        si.rank_symbols = orig
    pq = parse_question(q.text)
    kw = idx._bm25.search_terms(pq.keyword_terms, KEYWORD_DEPTH, subset=si.is_file_id,
                                b=FILE_BM25_B)
    near = idx._vectors.search(s.extra["qv"], FILE_DENSE_CANDIDATES)
    return FileEvidence(got["hits"], kw, [(si.node_path(i), c) for i, c in near],
                        frozenset(map(si.node_path, s.exact)), frozenset(pq.keyword_terms),
                        idx._bm25.length)


_DIR_HEAD = 5   # the best files so far whose directories `dir_share` counts
_TEST_WORDS = frozenset({"test", "tests", "spec", "specs"})


def _dir(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _stem_terms(path: str) -> frozenset[str]:
    """The file name's words without its extension and test markers (`test_router.py`,
    `router_test.go` -> router)."""
    from neuralmind.index.pairing import _stem_of
    from neuralmind.index.tokens import code_tokens

    base = _stem_of(path.rsplit("/", 1)[-1])
    return frozenset(code_tokens(base.replace(".", " "))) - _TEST_WORDS


def retr9_features(cand: list[str], col: dict[str, np.ndarray], ranked: list[Any],
                   pairs: dict[str, list[str]], terms: frozenset[str]
                   ) -> dict[str, np.ndarray]:
    """RETR9's candidate features (lab only: none won, BENCHMARKS RETR9), groups stem,
    dir, pair, testx: the file's own name against the question (share of the question's
    terms in it; share of its words in the question), its directory's share of the five
    best files so far, the pairing read both ways (a test at its best source's place in
    the ranking so far; a source whose paired test is a candidate), and the tests'
    evidence on weights of its own (a test's words and meaning are not a source's)."""
    from neuralmind.index.pairing import is_test_path

    n_terms = max(1, len(terms))
    stems = [_stem_terms(f) for f in cand]
    out = {"stem_match": np.array([len(terms & st) / n_terms for st in stems]),
           "stem_cover": np.array([len(terms & st) / len(st) if st else 0.0 for st in stems])}
    head_dirs = [_dir(rf.file) for rf in ranked[:_DIR_HEAD]]
    out["dir_share"] = np.array([sum(d == _dir(f) for d in head_dirs) / max(1, len(head_dirs))
                                 for f in cand])
    tests = [is_test_path(f) for f in cand]
    rr = col["rr_fused"]
    pos = {f: i for i, f in enumerate(cand)}
    tested = {x for t, srcs in pairs.items() if t in pos for x in srcs}
    out["pair_rr"] = np.array([max((rr[pos[x]] for x in pairs.get(f, ()) if x in pos),
                                   default=0.0) if t else 0.0
                               for f, t in zip(cand, tests, strict=True)])
    out["has_test"] = np.array([float(not t and f in tested)
                                for f, t in zip(cand, tests, strict=True)])
    for name in ("rr_fused", "kw_norm", "cos_gap", "path_match"):
        out[f"test_{name}"] = col["is_test"] * col[name]
    return out


def features(repo: Any, q: Any, s: Any) -> Cands:
    """The candidates of one question and their features, over the engine's own ranking
    (file_rank.rank_files on the lists one real search recorded)."""
    from neuralmind.index import file_rank

    shipped = rv.product(repo, q, s, rv._product_defaults())
    seen = s.extra["product_lists"]
    lists, pairs, kw = seen["lists"], seen["pairs"], seen["kw"]
    p0 = file_rank.FileRankParams()
    ranked = [file_rank.RankedFile(f, 0.0) for f in shipped]
    fused = fuse(lists, p0)
    ev = evidence(repo, q, s)
    cand, col = candidate_features(ranked, fused, pairs, ev, p0.k,
                                   CANDIDATE_DEPTH, kw["about_tests"], kw["about_docs"],
                                   kw.get("about_examples", False))
    col.update(retr9_features(cand, col, ranked, pairs, ev.terms))
    x = (np.stack([col[name] for name in FEATURE_ORDER], axis=1) if cand
         else np.zeros((0, len(FEATURE_ORDER))))
    gold = np.array([q.prefix + f in set(q.gold) for f in cand], dtype=bool)
    return Cands(cand, x, gold, dict(pairs), shipped)


PROTECT = [1]   # the ranking so far: its best files that keep their places (set by main)
GATE = [False]  # question-type gate (RETR8): locate questions keep the engine's ranking
FOLLOW: list[int | None] = [None]   # sources that bring their test after the learned step
#   (None: config.PAIR_FOLLOW_SOURCES; a trial line's 6th field sets it)
PAIR_COL = FEATURE_ORDER.index("pair_lift")


def rank(c: Cands, w: np.ndarray, follow: bool = True) -> list[str]:
    """file_rank.learned_rank on the recorded candidates (the same steps, in numpy)."""
    from neuralmind.config import PAIR_FOLLOW_DEPTH, PAIR_FOLLOW_POSITION, PAIR_FOLLOW_SOURCES
    from neuralmind.index import file_rank
    from neuralmind.index.file_rank import RankedFile

    if not c.files or not w.any():     # no weights: the engine's ranking as it is
        return c.shipped[:20]
    sc = c.x @ w
    order = sorted(range(len(c.files)), key=lambda i: (-sc[i], c.files[i]))
    ranked = [RankedFile(c.files[i], float(sc[i])) for i in order]
    if follow:
        own = sc - w[PAIR_COL] * c.x[:, PAIR_COL]
        own_order = sorted(range(len(c.files)), key=lambda i: (-own[i], c.files[i]))
        own_rank = {c.files[i]: r for r, i in enumerate(own_order, 1)}
        p = file_rank.FileRankParams(follow_sources=FOLLOW[0] if FOLLOW[0] is not None
                                     else PAIR_FOLLOW_SOURCES,
                                     follow_depth=PAIR_FOLLOW_DEPTH,
                                     follow_position=PAIR_FOLLOW_POSITION)
        ranked = file_rank.follow_sources(ranked, own_rank, c.pairs, p)
    head = c.shipped[:PROTECT[0]]
    out = head + [r.file for r in ranked if r.file not in head]
    return out[:20]


def served(q: Any, c: Cands, w: np.ndarray, follow: bool = True) -> list[str]:
    """The files a question is answered with: under the gate a question in question form
    (query.is_locate_question) keeps the engine's ranking, anything else is re-ranked."""
    from neuralmind.index.query import is_locate_question

    if GATE[0] and is_locate_question(q.text):
        return c.shipped[:20]
    return rank(c, w, follow)


def train(data: list[tuple[Any, Cands]], cols: np.ndarray, l2: float, iters: int = 300,
          top_heavy: bool = False) -> np.ndarray:
    """Pairwise logistic regression (RankNet, linear): every gold candidate against every
    other candidate of its question; each question's pairs weigh 1, each project the same
    in total. Full-batch gradient descent with Adam, features standardised for the fit."""
    diffs, wts = [], []
    per_repo: dict[str, int] = defaultdict(int)
    for q, _ in data:
        per_repo[q.repo] += 1
    for q, c in data:
        if not c.gold.any() or c.gold.all():
            continue
        xg, xn = c.x[c.gold][:, cols], c.x[~c.gold][:, cols]
        d = (xg[:, None, :] - xn[None, :, :]).reshape(-1, cols.sum())
        diffs.append(d)
        if top_heavy:   # a pair weighs what swapping it moves a top-heavy gain (LambdaRank's
            #             |delta DCG|, from the engine's ranking): the top five matter most
            at = {f: i for i, f in enumerate(c.shipped, 1)}
            gain = np.array([1.0 / math.log2(1 + at.get(f, 2 * len(c.shipped) + 1))
                             for f in c.files])
            pw = np.abs(gain[c.gold][:, None] - gain[~c.gold][None, :]).reshape(-1) + 1e-6
            wts.append(pw / pw.sum() / per_repo[q.repo])
        else:
            wts.append(np.full(len(d), 1.0 / len(d) / per_repo[q.repo]))
    dx = np.concatenate(diffs)
    dw = np.concatenate(wts)
    dw /= dw.sum()
    sd = dx.std(axis=0) + 1e-9
    z = dx / sd
    w = adam(lambda w: -(z * (dw * (1.0 / (1.0 + np.exp(z @ w))))[:, None]).sum(axis=0)
             + l2 * w, z.shape[1], iters)
    full = np.zeros(len(FEATURE_ORDER))
    full[cols] = w / sd
    return full


def adam(grad: Any, n: int, iters: int, lr: float = 0.05) -> np.ndarray:
    """`iters` Adam steps from zero weights on the gradient `grad(w)` (both trainers)."""
    w, m, v = np.zeros(n), np.zeros(n), np.zeros(n)
    for t in range(1, iters + 1):
        g = grad(w)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return w


def train_listnet(data: list[tuple[Any, Cands]], cols: np.ndarray, l2: float,
                  iters: int = 300) -> np.ndarray:
    """Listwise softmax (ListNet, linear; RETR9): per question, the cross-entropy between a
    softmax over its candidates' scores and the gold files (each gold the same share), so a
    fit is pushed to put every gold file above every other at once (the pairwise loss
    counts pairs, which the many low candidates dominate). Each project weighs the same;
    Adam over features standardised for the fit, as `train`."""
    per_repo: dict[str, int] = defaultdict(int)
    for q, _ in data:
        per_repo[q.repo] += 1
    rows = [(c.x[:, cols], c.gold / c.gold.sum(), 1.0 / per_repo[q.repo]) for q, c in data
            if c.gold.any() and not c.gold.all()]
    allx = np.concatenate([x for x, _, _ in rows])
    mu, sd = allx.mean(axis=0), allx.std(axis=0) + 1e-9
    rows = [((x - mu) / sd, t, qw) for x, t, qw in rows]
    total = sum(qw for _, _, qw in rows)
    def grad(w: np.ndarray) -> np.ndarray:
        g = l2 * w
        for z, t, qw in rows:
            s = z @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            g = g + (qw / total) * (z.T @ (p - t))
        return g

    w = adam(grad, int(cols.sum()), iters)
    full = np.zeros(len(FEATURE_ORDER))
    full[cols] = w / sd
    return full


def dev_objective(data: list[tuple[Any, Cands]], w: np.ndarray) -> float:
    """Mean over projects of (R@5 + MRR) / 2: what the grids maximise (rank_lab)."""
    by: dict[str, list[float]] = defaultdict(list)
    for q, c in data:
        m = rl.score([q.prefix + f for f in served(q, c, w)], q)
        by[q.repo].append((m["R@5"] + m["MRR"]) / 2)
    return statistics.fmean(statistics.fmean(v) for v in by.values())


def ascend(data: list[tuple[Any, Cands]], cols: np.ndarray, w0: np.ndarray,
           sweeps: int = 2) -> np.ndarray:
    """Coordinate ascent on the tuning objective itself, from `w0`: each selected
    feature's weight in turn moved by a multiple of 0.1 / its spread, the best move kept
    (rr_fused, the ranking so far, is the fixed anchor of the scale)."""
    allx = np.concatenate([c.x for _, c in data if len(c.files)])
    unit = 0.1 / (allx.std(axis=0) + 1e-9)
    w = w0.copy()
    best = dev_objective(data, w)
    anchor = FEATURE_ORDER.index("rr_fused")
    for _ in range(sweeps):
        moved = False
        for j in np.flatnonzero(cols):
            if j == anchor:
                continue
            for mult in (-4, -2, -1, -0.5, 0.5, 1, 2, 4):
                trial = w.copy()
                trial[j] += mult * unit[j]
                got = dev_objective(data, trial)
                if got > best + 1e-6:
                    best, w, moved = got, trial, True
        if not moved:
            break
    return w


def evaluate(data: list[tuple[Any, Cands]], w: np.ndarray, follow: bool = True
             ) -> dict[str, list[tuple[Any, dict[str, Any]]]]:
    out: dict[str, list[tuple[Any, dict[str, Any]]]] = defaultdict(list)
    for q, c in data:
        out[q.set].append((q, rl.score([q.prefix + f for f in served(q, c, w, follow)], q)))
    return out


def make_fit(groups: list[str], l2: float, beta: float, iters: int, method: str
             ) -> Callable[[list[tuple[Any, Cands]]], np.ndarray]:
    """The fitting procedure of one point: rows -> weights over FEATURE_ORDER."""
    cols = np.array([any(f in FEATURES[g] for g in groups) for f in FEATURE_ORDER])
    boost = np.array([beta if f == "rr_fused" else 0.0 for f in FEATURE_ORDER])

    def fit(rows: list[tuple[Any, Cands]]) -> np.ndarray:
        if method == "none":
            return boost.copy()
        if method == "logistic":
            return train(rows, cols, l2, iters) + boost
        if method == "mix":     # the two fits' mean: pairwise (MRR) and listwise (R@5)
            return (train(rows, cols, l2, iters) + train_listnet(rows, cols, l2, iters)) / 2 \
                + boost
        if method == "listnet":
            return train_listnet(rows, cols, l2, iters) + boost
        if method == "lambda":
            return train(rows, cols, l2, iters, top_heavy=True) + boost
        start = boost.copy() if method == "ca" else train(rows, cols, l2, iters) + boost
        if not start.any():
            start[FEATURE_ORDER.index("rr_fused")] = 1.0
        return ascend(rows, cols, start)
    return fit


def select(data: list[tuple[Any, Cands]], points: list[str], iters: int) -> str:
    """Every parameter chosen by leave-one-repository-out (RETR8): for each held-out
    project, each point (feature groups, L2, rr_fused boost, protect, method) is fitted
    on the other nine projects' tuning rows and scored there (the tuning objective); among
    the points that keep the public guards with those weights the best is chosen and
    scores the held-out project's test rows. The in-sample choice (all ten) is reported
    beside it, with the figures of its fit on all ten."""
    dev = [(q, c) for q, c in data if q.set in ("hist-dev", "h2-dev")]
    if GATE[0]:
        from neuralmind.index.query import is_locate_question

        dev = [(q, c) for q, c in dev if not is_locate_question(q.text)]
    public = [(q, c) for q, c in data if q.set in ("symbols", "retrieval")]
    repos = sorted({q.repo for q, _ in dev})
    parsed = []
    fitted: dict[tuple[str, str, str, int], np.ndarray] = {}   # a fit serves every beta
    for line in points:
        g, l2, beta, prot, *how = line.split()
        parsed.append((line, (g, l2, how[0] if how else "logistic"), float(beta), int(prot),
                       int(how[1]) if len(how) > 1 else None))

    def choose(rows: list[tuple[Any, Cands]], fold: str
               ) -> tuple[str, np.ndarray, int, float, float]:
        best: tuple[float, float, str, np.ndarray, int, int | None] | None = None
        for line, key_, beta, prot, follow in parsed:
            PROTECT[0], FOLLOW[0] = prot, follow
            fk = (*key_, fold)
            if fk not in fitted:
                fitted[fk] = make_fit(key_[0].split(","), float(key_[1]), 0.0, iters,
                                      key_[2])(rows)
            w = fitted[fk].copy()
            w[FEATURE_ORDER.index("rr_fused")] += beta
            obj = dev_objective(rows, w)
            margin = rl.guard_margin(evaluate(public, w))
            key = (min(margin, 0.0), obj)
            if best is None or key > best[:2]:
                best = (*key, line, w, prot, follow)
        assert best is not None
        FOLLOW[0] = best[5]
        return best[2], best[3], best[4], best[1], best[0]

    out = []
    line, w, prot, obj, margin = choose(dev, "")
    PROTECT[0] = prot
    res = evaluate(data, w)
    out.append(f"in-sample choice: {line} (dev obj {obj:.4f}, guard {margin:+.3f})\n    "
               + rl.trial_line(res))
    rows: dict[str, list[tuple[Any, dict[str, Any]]]] = defaultdict(list)
    for held in repos:
        line, w, prot, obj, margin = choose([(q, c) for q, c in dev if q.repo != held], held)
        PROTECT[0] = prot
        got = evaluate([(q, c) for q, c in data if q.repo == held
                        and q.set in ("hist-test", "h2-test")], w)
        for s_, pairs in got.items():
            rows[s_].extend(pairs)
        ms = [m for pairs in got.values() for _, m in pairs]
        out.append(f"  held out {held}: {line} (obj {obj:.4f}, guard {margin:+.3f}) test "
                   f"{rl.mean_of(ms, 'R@5'):.3f}/{rl.mean_of(ms, 'MRR'):.3f}")
    for s_ in ("hist-test", "h2-test"):
        ms = [m for _, m in rows[s_]]
        out.append(f"LORO {s_} {rl.mean_of(ms, 'R@5'):.3f}/{rl.mean_of(ms, 'MRR'):.3f} "
                   f"test R@5 {rl.mean_of(ms, 'test R@5'):.3f}")
    return "\n".join(out)


def run_point(data: list[tuple[Any, Cands]], groups: list[str], l2: float, beta: float,
              iters: int, loro: bool, follow: bool = True, method: str = "logistic") -> str:
    """Train on the dev rows (all ten projects, and each nine for LORO); one summary line."""
    dev = [(q, c) for q, c in data if q.set in ("hist-dev", "h2-dev")]
    if GATE[0]:     # the gate serves locate questions by the engine: the fit never sees them
        from neuralmind.index.query import is_locate_question

        dev = [(q, c) for q, c in dev if not is_locate_question(q.text)]

    fit = make_fit(groups, l2, beta, iters, method)
    w = fit(dev)
    res = evaluate(data, w, follow)
    line = rl.trial_line(res) + " | w " + " ".join(
        f"{f}:{x:.3g}" for f, x in zip(FEATURE_ORDER, w, strict=True) if x)
    sym = " ".join(
        f"{r.split('/')[-1]}:{rl.mean_of([m for q, m in res['symbols'] if q.repo == r], 'MRR'):.3f}"
        for r in sorted({q.repo for q, _ in res["symbols"]}))
    line += f" | sym {sym}"
    if loro:
        repos = sorted({q.repo for q, _ in dev})
        rows: dict[str, list[tuple[Any, dict[str, Any]]]] = defaultdict(list)
        for held in repos:
            wh = fit([(q, c) for q, c in dev if q.repo != held])
            for s_, pairs in evaluate([(q, c) for q, c in data if q.repo == held
                                       and q.set in ("hist-test", "h2-test")], wh,
                                      follow).items():
                rows[s_].extend(pairs)
        for s_ in ("hist-test", "h2-test"):
            ms = [m for _, m in rows[s_]]
            line += f" | LORO {s_} {rl.mean_of(ms, 'R@5'):.3f}/{rl.mean_of(ms, 'MRR'):.3f}"
    return line


def load(cache: Path | None) -> list[tuple[Any, Cands]]:
    import pickle

    if cache and cache.exists():
        return pickle.loads(cache.read_bytes())
    lab = rl.Lab(["symbols", "retrieval", *rl.HISTORY_SETS])
    t = time.perf_counter()
    data = [(q, features(lab.repos[q.src], q, s)) for q, s in zip(lab.qs, lab.sig, strict=True)]
    print(f"features in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    if cache:
        cache.write_bytes(pickle.dumps(data))
    return data


def main() -> None:
    global CANDIDATE_DEPTH
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--features", default=",".join(FEATURES), help="feature groups")
    ap.add_argument("--method", default="logistic", choices=["none", "logistic", "lambda", "listnet", "mix", "ca", "lca"],
                    help="pairwise logistic, coordinate ascent from the ranking so far "
                         "(ca) or from the logistic fit (lca); none: the anchor alone")
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--beta", type=float, default=1.0, help="added weight of rr_fused")
    ap.add_argument("--protect", type=int, default=1)
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--no-follow", action="store_true")
    ap.add_argument("--loro", action="store_true")
    ap.add_argument("--select", action="store_true",
                    help="choose among the --trials points by leave-one-repository-out")
    ap.add_argument("--gate", action="store_true",
                    help="questions in question form keep the engine's ranking (RETR8)")
    ap.add_argument("--cache", type=Path, help="features pickled here (reused if present)")
    ap.add_argument("--trials", type=Path,
                    help="one point a line: groups l2 beta protect [method]")
    ap.add_argument("--depth", type=int, default=LEARNED_CANDIDATE_DEPTH,
                    help="each list's first files that become candidates (a new --cache)")
    args = ap.parse_args()
    CANDIDATE_DEPTH = args.depth
    data = load(args.cache)
    GATE[0] = args.gate
    if args.select:
        print(select(data, [ln for ln in args.trials.read_text().splitlines()
                            if ln.strip() and not ln.startswith("#")], args.iters), flush=True)
        return
    lines = ([ln for ln in args.trials.read_text().splitlines()
              if ln.strip() and not ln.startswith("#")] if args.trials else
             [f"{args.features} {args.l2} {args.beta} {args.protect} {args.method}"])
    for line in lines:
        g, l2, beta, prot, *how = line.split()
        PROTECT[0] = int(prot)
        FOLLOW[0] = int(how[1]) if len(how) > 1 else None
        print(line, "\n   ", run_point(data, g.split(","), float(l2), float(beta), args.iters,
                                       args.loro, not args.no_follow,
                                       how[0] if how else "logistic"), flush=True)


if __name__ == "__main__":
    main()
