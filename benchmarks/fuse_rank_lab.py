"""Two learned file rankers fused (issue #14, RETR10): the pairwise fit (main's, which
holds MRR) and the listwise fit (RETR9's, which buys R@5 and costs MRR on test rows),
each kept where it is good.

Both models are fitted as `learn_rank_lab` fits them (the same candidates, features,
trainers, gate and last step: each ranking has its tests brought up by its own scores).
Their two served rankings of a change request are then fused:

    head K       the pairwise ranking's first K files, then the listwise ranking's order
                 (equivalently: the listwise model re-ranks positions >= K+1)
    win K N      the pairwise ranking, its ranks K+1..N reordered by the listwise model
                 (nothing outside the pairwise top N comes in)
    rrf A C      reciprocal-rank fusion, A / (C + pairwise rank) + (1 - A) / (C + listwise
                 rank), ties by the pairwise rank

`head 99` is the pairwise ranking alone (main), `head 0` the listwise alone. A trial line
is `PAIRWISE-SPEC ; LISTWISE-SPEC ; FUSION`, a spec being `groups l2 method` as in
learn_rank_lab. `--select` chooses every parameter (both models' groups and L2, the
fusion and its K / A / C) by nested leave-one-repository-out over the 10 history
projects, by the tuning objective (mean over projects of (R@5 + MRR) / 2 on the tuning
rows), among the points that keep the public guards; the held-out project's test rows
score the point chosen without it. Without `--select`: each line in-sample (fitted on all
ten projects' tuning rows) and by LORO (refitted on nine, the tenth's test rows scored).

    python benchmarks/fuse_rank_lab.py --cache F.pkl --trials grid.txt [--select]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import learn_rank_lab as L  # noqa: E402
import rank_lab as rl  # noqa: E402

Row = tuple[Any, "L.Cands"]


def full_order(c: L.Cands, w: np.ndarray) -> list[str]:
    """learn_rank_lab.rank without the cut at 20 (protect 0): every candidate, best first,
    after the last step (the best sources bring their tests up, by this model's scores)."""
    from neuralmind.config import PAIR_FOLLOW_DEPTH, PAIR_FOLLOW_POSITION, PAIR_FOLLOW_SOURCES
    from neuralmind.index import file_rank
    from neuralmind.index.file_rank import RankedFile

    sc = c.x @ w
    order = sorted(range(len(c.files)), key=lambda i: (-sc[i], c.files[i]))
    ranked = [RankedFile(c.files[i], float(sc[i])) for i in order]
    own = sc - w[L.PAIR_COL] * c.x[:, L.PAIR_COL]
    own_order = sorted(range(len(c.files)), key=lambda i: (-own[i], c.files[i]))
    own_rank = {c.files[i]: r for r, i in enumerate(own_order, 1)}
    p = file_rank.FileRankParams(follow_sources=PAIR_FOLLOW_SOURCES,
                                 follow_depth=PAIR_FOLLOW_DEPTH,
                                 follow_position=PAIR_FOLLOW_POSITION)
    return [r.file for r in file_rank.follow_sources(ranked, own_rank, c.pairs, p)]


def fuse(a: list[str], b: list[str], how: str) -> list[str]:
    """The two orders (pairwise `a`, listwise `b`, the same files) as one, 20 long."""
    kind, *args = how.split()
    if kind == "head":
        k = int(args[0])
        head = a[:k]
        taken = set(head)
        return (head + [f for f in b if f not in taken])[:20]
    if kind == "win":   # the listwise model reorders the pairwise ranks K+1..N only
        k, n = int(args[0]), int(args[1])
        rb = {f: i for i, f in enumerate(b)}
        mid = sorted(a[k:n], key=lambda f: rb.get(f, len(b)))
        return (a[:k] + mid + a[n:])[:20]
    if kind == "rrf":
        share, c = float(args[0]), float(args[1])
        ra = {f: i for i, f in enumerate(a, 1)}
        rb = {f: i for i, f in enumerate(b, 1)}
        n = len(a) + 1
        return sorted(a, key=lambda f: (-(share / (c + ra[f])
                                          + (1 - share) / (c + rb.get(f, n))), ra[f]))[:20]
    raise ValueError(how)


class Lab:
    """Fits cached per (spec, fold) and each question's two orders per fit."""

    def __init__(self, data: list[Row], iters: int) -> None:
        from neuralmind.index.query import is_locate_question

        self.data = data
        self.iters = iters
        self.inner = False     # --inner: the objective out of fold (`objective`)
        self.locate = {id(q): is_locate_question(q.text) for q, _ in data}
        self.dev = [(q, c) for q, c in data if q.set in ("hist-dev", "h2-dev")
                    and not self.locate[id(q)]]
        self.public = [(q, c) for q, c in data if q.set in ("symbols", "retrieval")]
        self.fits: dict[tuple[str, str], np.ndarray] = {}
        self.orders: dict[tuple[str, str], dict[int, list[str]]] = {}

    def weights(self, spec: str, fold: str) -> np.ndarray:
        """The spec fitted on the tuning rows of every project but those `fold` names
        ("+"-joined; "" fits all ten)."""
        key = (spec, fold)
        if key not in self.fits:
            g, l2, method = spec.split()
            out = set(fold.split("+"))
            rows = [(q, c) for q, c in self.dev if q.repo not in out]
            self.fits[key] = L.make_fit(g.split(","), float(l2), 0.0, self.iters, method)(rows)
            self.orders[key] = {}
        return self.fits[key]

    def order(self, spec: str, fold: str, q: Any, c: L.Cands) -> list[str]:
        w = self.weights(spec, fold)
        got = self.orders[(spec, fold)]
        if id(q) not in got:
            got[id(q)] = full_order(c, w) if c.files and w.any() else list(c.shipped)
        return got[id(q)]

    def served(self, q: Any, c: L.Cands, point: tuple[str, str, str], fold: str
               ) -> list[str]:
        if self.locate[id(q)] or not c.files:
            return c.shipped[:20]
        pw, ln, how = point
        a = self.order(pw, fold, q, c)
        if how == "head 99":
            return a[:20]
        return fuse(a, self.order(ln, fold, q, c), how)

    def evaluate(self, rows: list[Row], point: tuple[str, str, str], fold: str
                 ) -> dict[str, list[tuple[Any, dict[str, Any]]]]:
        out: dict[str, list[tuple[Any, dict[str, Any]]]] = defaultdict(list)
        for q, c in rows:
            out[q.set].append((q, rl.score([q.prefix + f for f in self.served(q, c, point,
                                                                             fold)], q)))
        return out

    def objective(self, point: tuple[str, str, str], fold: str) -> float:
        """The tuning objective over the projects but `fold`: on the rows the weights
        were fitted on (RETR8/RETR9's selection), or, with `inner`, each project's rows
        ranked by weights fitted without it (inner leave-one-repository-out)."""
        by: dict[str, list[float]] = defaultdict(list)
        for q, c in self.dev:
            if q.repo == fold:
                continue
            wf = "+".join(sorted(x for x in {fold, q.repo} if x)) if self.inner else fold
            m = rl.score([q.prefix + f for f in self.served(q, c, point, wf)], q)
            by[q.repo].append((m["R@5"] + m["MRR"]) / 2)
        return statistics.fmean(statistics.fmean(v) for v in by.values())

    def choose(self, points: list[tuple[str, str, str]], fold: str
               ) -> tuple[tuple[str, str, str], float, float]:
        best: tuple[float, float, tuple[str, str, str]] | None = None
        for pt in points:
            obj = self.objective(pt, fold)
            margin = rl.guard_margin(self.evaluate(self.public, pt, fold))
            key = (min(margin, 0.0), obj)
            if best is None or key > best[:2]:
                best = (*key, pt)
        assert best is not None
        return best[2], best[1], best[0]

    def test_rows(self, repo: str | None = None) -> list[Row]:
        return [(q, c) for q, c in self.data if q.set in ("hist-test", "h2-test")
                and (repo is None or q.repo == repo)]

    def repos(self) -> list[str]:
        return sorted({q.repo for q, _ in self.dev})


def per_project(res: dict[str, list[tuple[Any, dict[str, Any]]]]) -> str:
    cells = []
    for s in ("hist-test", "h2-test"):
        by: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for q, m in res.get(s, []):
            by[q.repo].append(m)
        cells.append(f"{s}: " + " ".join(
            f"{r.split('/')[-1]} {rl.mean_of(ms, 'R@5'):.3f}/{rl.mean_of(ms, 'MRR'):.3f}"
            for r, ms in sorted(by.items())))
    return "\n    ".join(cells)


def sums(rows: dict[str, list[tuple[Any, dict[str, Any]]]]) -> str:
    return " | ".join(
        f"{s} {rl.mean_of([m for _, m in rows[s]], 'R@5'):.3f}/"
        f"{rl.mean_of([m for _, m in rows[s]], 'MRR'):.3f} "
        f"(test R@5 {rl.mean_of([m for _, m in rows[s]], 'test R@5'):.3f})"
        for s in ("hist-test", "h2-test"))


def run_point(lab: Lab, pt: tuple[str, str, str], loro: bool) -> str:
    res = lab.evaluate(lab.data, pt, "")
    line = rl.trial_line(res) + "\n    " + per_project(res)
    if loro:
        rows: dict[str, list[tuple[Any, dict[str, Any]]]] = defaultdict(list)
        for held in lab.repos():
            for s, got in lab.evaluate(lab.test_rows(held), pt, held).items():
                rows[s].extend(got)
        line += "\n    LORO " + sums(rows)
    return line


def select(lab: Lab, points: list[tuple[str, str, str]]) -> str:
    out = []
    pt, obj, margin = lab.choose(points, "")
    res = lab.evaluate(lab.data, pt, "")
    out.append(f"in-sample choice: {' ; '.join(pt)} (dev obj {obj:.4f}, guard {margin:+.3f})"
               f"\n    {rl.trial_line(res)}\n    {per_project(res)}")
    rows: dict[str, list[tuple[Any, dict[str, Any]]]] = defaultdict(list)
    for held in lab.repos():
        pt, obj, margin = lab.choose(points, held)
        got = lab.evaluate(lab.test_rows(held), pt, held)
        for s, pairs in got.items():
            rows[s].extend(pairs)
        ms = [m for pairs in got.values() for _, m in pairs]
        out.append(f"  held out {held}: {' ; '.join(pt)} (obj {obj:.4f}, guard {margin:+.3f})"
                   f" test {rl.mean_of(ms, 'R@5'):.3f}/{rl.mean_of(ms, 'MRR'):.3f}")
    out.append("nested LORO " + sums(rows))
    return "\n".join(out)


def paired(lab: Lab, points: list[tuple[str, str, str]]) -> str:
    """Each point minus the first, per question: R@5 and MRR differences (mean and
    standard error over questions) on the tuning rows and on the test rows, every
    question ranked by weights fitted without its project (its dev rows and its test rows
    share that fit): is a difference larger than the questions' noise?"""
    import math

    def per_q(pt: tuple[str, str, str]) -> dict[int, tuple[str, dict[str, Any]]]:
        out = {}
        for q, c in lab.dev + lab.test_rows():
            m = rl.score([q.prefix + f for f in lab.served(q, c, pt, q.repo)], q)
            out[id(q)] = (q.set, m)
        return out

    ref = per_q(points[0])
    lines = [f"reference: {' ; '.join(points[0])}"]
    for pt in points[1:]:
        got = per_q(pt)
        cells = []
        for sets in (("hist-dev",), ("h2-dev",), ("hist-test",), ("h2-test",)):
            for key in ("R@5", "MRR"):
                d = [got[i][1][key] - ref[i][1][key] for i in ref if ref[i][0] in sets]
                mu = statistics.fmean(d)
                se = statistics.stdev(d) / math.sqrt(len(d))
                cells.append(f"{sets[0]} {key} {mu:+.4f}±{se:.4f}")
        lines.append(f"{' ; '.join(pt)}\n    " + " | ".join(cells))
    return "\n".join(lines)


def parse(line: str) -> tuple[str, str, str]:
    pw, ln, how = (part.strip() for part in line.split(";"))
    return pw, ln, how


def expand(lines: list[str]) -> list[tuple[str, str, str]]:
    """Trial lines; a part may list alternatives with `|` (the product is taken)."""
    import itertools

    out = []
    for line in lines:
        parts = [[a.strip() for a in part.split("|")] for part in line.split(";")]
        out.extend(itertools.product(*parts))
    return list(dict.fromkeys(out))


def main() -> None:
    import __main__

    __main__.Cands = L.Cands    # the cache pickles learn_rank_lab's Cands as __main__'s
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--trials", type=Path, required=True)
    ap.add_argument("--select", action="store_true")
    ap.add_argument("--loro", action="store_true")
    ap.add_argument("--paired", action="store_true",
                    help="each point against the first, question by question, out of fold")
    ap.add_argument("--table", action="store_true",
                    help="each point's tuning objective, in-sample and out of fold")
    ap.add_argument("--inner", action="store_true",
                    help="with --select: score each point on rows its fit did not see")
    ap.add_argument("--iters", type=int, default=300)
    args = ap.parse_args()
    data = L.load(args.cache)
    L.GATE[0] = True
    L.PROTECT[0] = 0
    lab = Lab(data, args.iters)
    lab.inner = args.inner
    points = expand([ln for ln in args.trials.read_text().splitlines()
                     if ln.strip() and not ln.startswith("#")])
    if args.paired:
        print(paired(lab, points), flush=True)
        return
    if args.table:   # every point: the objective on its fit rows and out of fold, test rows
        for pt in points:
            lab.inner = False
            obj = lab.objective(pt, "")
            lab.inner = True
            inner = lab.objective(pt, "")
            res = lab.evaluate(lab.test_rows(), pt, "")
            print(f"{obj:.4f} {inner:.4f} {sums(res)} | {' ; '.join(pt)}", flush=True)
        return
    if args.select:
        print(f"{len(points)} points", flush=True)
        print(select(lab, points), flush=True)
        return
    for pt in points:
        print(" ; ".join(pt), "\n   ", run_point(lab, pt, args.loro), flush=True)


if __name__ == "__main__":
    main()
