"""A global learned combination of the cold score and the learned signals, by leave-one-
repository-out, on use_lab.py's dump (issue #17 part 5, USE7).

Per asked question, every candidate file (the cold top 20 and the top 10 of each learned
signal) gets features: the cold score over the best, its rank, the question memory
(normalised, raw, first), the co-change spread, per-file BM25 of past questions, the
discriminative term weights (use_lab.term_weights), change frequency, use rate, and their
products with "ranked cold" and the cold ranking's doubt. One linear scorer for all
repositories is trained on the dev rows (60 % of history replayed, 40 % asked) of the other
nine repositories and applied to the held-out one's dev rows (dev figure) and test rows
(test figure, features from all its history). Three trainers: pairwise logistic (kept over
not kept), listwise softmax (the kept files' share), and coordinate ascent on MRR itself
from the shipped weights.

    python benchmarks/use_lab_loro.py      # needs use_lab.py's dump; ~2 min
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import use_lab as L

Row = dict[str, Any]
Q = tuple[list[str], np.ndarray, set[str], list[str]]   # candidates, features, kept, cold order


# --- global learned combination -------------------------------------------------------------
NAMES = ["cold", "in_cold", "inv_rank", "asked", "asked_raw", "spread", "bm25", "perc",
         "freq", "use", "asked_doubt", "asked_top1", "asked_in", "spread_in", "bm25_in",
         "asked_inv_rank", "asked_raw_in"]


def featurizer(h: list[Row]) -> Callable[[Row], tuple[list[str], np.ndarray]]:
    asked_f, spread_f, bm25_f = L.token_knn(h), L.cochange_spread(h), L.file_bm25(h)
    perc_f = L.term_weights(h)
    freq = Counter(f for x in h for f in x["gold"])
    returned, kept = Counter(), Counter()
    for x in h:
        for f, _ in x["files"][:5]:
            returned[f] += 1
            kept[f] += f in x["gold"]
    nh = max(len(h), 1)

    def feats(r: Row) -> tuple[list[str], np.ndarray]:
        files = dict(r["files"])
        best = max(files.values(), default=1.0) or 1.0
        order = sorted(files, key=lambda f: -files[f])
        rank = {f: i for i, f in enumerate(order, 1)}
        vals = sorted(files.values(), reverse=True)
        doubt = 1 - (vals[0] - vals[1]) / vals[0] if len(vals) > 1 and vals[0] > 0 else 0.0
        asked = asked_f(r)
        an = L.normalised(asked)
        atop = max(asked, key=asked.get) if asked else None
        spread = spread_f(r)
        bm = L.normalised(bm25_f(r))
        pc = perc_f(r)
        ptop = max((abs(v) for v in pc.values()), default=0.0) or 1.0
        cand = set(order[:20])
        for d in (an, spread, bm, pc):
            cand |= set(sorted(d, key=lambda f: -d[f])[:10])
        cand_l = sorted(cand)
        X = np.array([[files.get(f, 0.0) / best, float(f in files),
                       1.0 / rank[f] if f in rank else 0.0, an.get(f, 0.0),
                       min(1.0, asked.get(f, 0.0)), min(1.0, spread.get(f, 0.0)),
                       bm.get(f, 0.0), pc.get(f, 0.0) / ptop,
                       math.log1p(freq[f]) / math.log1p(nh),
                       (kept[f] + 1) / (returned[f] + 2) - 0.5 if returned[f] else 0.0,
                       an.get(f, 0.0) * doubt, float(f == atop),
                       an.get(f, 0.0) * (f in files), min(1.0, spread.get(f, 0.0)) * (f in files),
                       bm.get(f, 0.0) * (f in files),
                       an.get(f, 0.0) * (1.0 / rank[f] if f in rank else 0.0),
                       min(1.0, asked.get(f, 0.0)) * (f in files)] for f in cand_l])
        return cand_l, X
    return feats


def build(data: dict[str, list[Row]], dev: bool) -> dict[str, list[Q]]:
    """repo key -> list of (cand, X, gold set, cold order)."""
    out = {}
    for key, rows in data.items():
        h, a = L.split(rows, dev)
        fz = featurizer(h)
        out[key] = [(*fz(r), set(r["gold"]), [f for f, _ in r["files"]]) for r in a]
    return out


def train_pair(qs: list[Q], mask: list[int], l2: float = 1e-2, iters: int = 300,
               lr: float = 0.5) -> np.ndarray:
    """Pairwise logistic (kept over not kept, each question weighing one), gradient descent."""
    parts = []
    for cand, X, gold, _ in qs:
        g = [i for i, f in enumerate(cand) if f in gold]
        n = [i for i, f in enumerate(cand) if f not in gold]
        if g and n:
            parts.append((X[g][:, None, :] - X[n][None, :, :]).reshape(-1, X.shape[1]))
    D = np.vstack(parts)[:, mask]
    share = np.concatenate([np.full(len(d), 1 / len(d)) for d in parts]) / len(parts)
    w = np.zeros(len(mask))
    for _ in range(iters):
        p = 1 / (1 + np.exp(np.clip(D @ w, -30, 30)))
        w -= lr * (-(D * (share * p)[:, None]).sum(0) + l2 * w)
    return _full(w, mask)


def train_list(qs: list[Q], mask: list[int], l2: float = 1e-2, iters: int = 30) -> np.ndarray:
    """Listwise softmax (minus the log of the kept files' share), Newton with backtracking."""
    data = [(X[:, mask], np.array([f in gold for f in cand])) for cand, X, gold, _ in qs
            if gold & set(cand)]
    reg = l2 * len(data)

    def loss(w: np.ndarray) -> float:
        out = 0.5 * reg * float(w @ w)
        for X, y in data:
            z = X @ w
            out += math.log(np.exp(z - z.max()).sum()) - math.log(np.exp(z[y] - z.max()).sum())
        return out

    w, cur = np.zeros(len(mask)), loss(np.zeros(len(mask)))
    for _ in range(iters):
        g, H = reg * w, reg * np.eye(len(mask))
        for X, y in data:
            z = X @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            q = p * y / (p * y).sum()
            g = g + X.T @ (p - q)
            H = H + X.T @ (np.diag(p) - np.outer(p, p)) @ X
        step, t = np.linalg.solve(H + 1e-6 * np.eye(len(mask)), g), 1.0
        while t > 1e-4 and (new := loss(w - t * step)) > cur:
            t /= 2
        if t <= 1e-4 or cur - new < 1e-7:
            break
        w, cur = w - t * step, new
    return _full(w, mask)


def train_mrr(qs: list[Q], mask: list[int], rounds: int = 3) -> np.ndarray:
    """Coordinate ascent on MRR itself from the shipped weights (cold fixed at 1)."""
    w = _full(np.zeros(0), [])
    for k, v in SHIPPED.items():
        w[NAMES.index(k)] = v
    best = mrr_of(qs, w)
    for _ in range(rounds):
        changed = False
        for i in (i for i in mask if NAMES[i] != "cold"):
            keep = w[i]
            for v in (-.2, -.1, -.05, -.02, 0, .02, .05, .1, .15, .2, .3, .5):
                w[i] = v
                if (m := mrr_of(qs, w)) > best + 1e-9:
                    best, keep, changed = m, v, True
            w[i] = keep
        if not changed:
            break
    return w


def _full(w: np.ndarray, mask: list[int]) -> np.ndarray:
    out = np.zeros(len(NAMES))
    out[mask] = w
    return out


def mrr_of(qs: list[Q], w: np.ndarray) -> float:
    total = 0.0
    for cand, X, gold, _ in qs:
        order = np.lexsort((cand, -(X @ w)))
        total += next((1 / k for k, j in enumerate(order, 1) if cand[j] in gold), 0.0)
    return total / max(len(qs), 1)


def loro(train_on: dict[str, list[Q]], asked: dict[str, list[Q]],
         fit: Callable[[list[Q]], np.ndarray]) -> dict[str, float]:
    """Warm - cold MRR per set, each repository scored by weights fitted on the others."""
    sums: dict[str, list[float]] = {"hist": [0.0, 0.0, 0.0], "h2": [0.0, 0.0, 0.0]}
    for key, qs in asked.items():
        w = fit([q for k, other in train_on.items() if k != key for q in other])
        acc = sums[key.split("|")[0]]
        acc[0] += sum(L.mrr(cold, list(gold)) for _, _, gold, cold in qs)
        acc[1] += mrr_of(qs, w) * len(qs)
        acc[2] += len(qs)
    return {k: (v[1] - v[0]) / v[2] for k, v in sums.items()}


def _m(*names: str) -> list[int]:
    return [NAMES.index(n) for n in names]


SHIPPED = {"cold": 1.0, "asked": .05, "spread": .05, "asked_in": .05, "spread_in": .05}
BASE = ("cold", "asked", "spread", "asked_in", "spread_in")   # the shipped boost's features
MASKS = {
    "the shipped boost's features": _m(*BASE),
    "+ rank and gates (rank, doubt, raw, first)": _m(
        *BASE, "in_cold", "inv_rank", "asked_inv_rank", "asked_doubt", "asked_raw", "asked_top1"),
    "every feature": list(range(len(NAMES))),
}
FITS: dict[str, Callable[..., np.ndarray]] = {
    "pairwise logistic, l2 0.01": lambda qs, m: train_pair(qs, m, 1e-2),
    "pairwise logistic, l2 0.1": lambda qs, m: train_pair(qs, m, 1e-1),
    "listwise softmax, l2 0.01": lambda qs, m: train_list(qs, m, 1e-2),
    "listwise softmax, l2 0.1": lambda qs, m: train_list(qs, m, 1e-1),
    "coordinate ascent on MRR": train_mrr,
}


def main() -> None:
    data = L.dump()
    dev, test = build(data, True), build(data, False)
    print("| features | trainer | dev hist | dev h2 | test hist | test h2 |\n"
          "|---|---|---:|---:|---:|---:|")
    for fname, mask in MASKS.items():
        for tname, fit in FITS.items():
            d = loro(dev, dev, lambda qs, fit=fit, mask=mask: fit(qs, mask))
            t = loro(dev, test, lambda qs, fit=fit, mask=mask: fit(qs, mask))
            print(f"| {fname} | {tname} | {d['hist']:+.3f} | {d['h2']:+.3f} | {t['hist']:+.3f} | "
                  f"{t['h2']:+.3f} |", flush=True)


if __name__ == "__main__":
    main()
