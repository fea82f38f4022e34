"""Ranking variants for rank_lab.py: each is fn(repo, question, signals, params) -> files."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np


class FixedEmbedder:
    """Hands the index a question vector computed once (the real model's output)."""

    model_id = ""

    def __init__(self, vec: np.ndarray, model_id: str) -> None:
        self.vec, self.model_id = vec, model_id

    def embed(self, texts: list[str], progress: Any = None) -> np.ndarray:
        return self.vec[None, :]


def shipped(repo: Any, q: Any, s: Any, p: dict[str, Any]) -> list[str]:
    """Today's engine: SearchIndex.search, files by first occurrence among 40 hits."""
    from neuralmind.index.search_index import node_path

    idx = repo.index
    idx._embedder = FixedEmbedder(s.extra["qv"], idx._vectors.model_id)
    hits = idx.search(q.text, k=40).hits
    return list(dict.fromkeys(node_path(h.id) for h in hits))


def file_bm25(repo: Any, s: Any, k1: float, b: float) -> dict[str, float]:
    """Whole-file BM25 from the node index's postings, with file-only statistics."""
    bm = repo.index._bm25
    files = repo.files
    n = len(files)
    lengths = {f: bm._lengths.get(f, 0) for f in files}
    avg = (sum(lengths.values()) / n) or 1.0
    out: dict[str, float] = defaultdict(float)
    for term, qc in s.extra["terms"].items():
        posting = bm._postings.get(term)
        if not posting:
            continue
        docs = [(d, tf) for d, tf in posting.items() if d in lengths]
        if not docs:
            continue
        idf = math.log(1.0 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
        for d, tf in docs:
            norm = k1 * (1.0 - b + b * lengths[d] / avg)
            out[d] += qc * idf * tf * (k1 + 1.0) / (tf + norm)
    return dict(out)


def bm25file(repo: Any, q: Any, s: Any, p: dict[str, Any]) -> list[str]:
    sc = file_bm25(repo, s, p["k1"], p["b"])
    return sorted(sc, key=lambda f: (-sc[f], f))


def ranks(scores: dict[str, float]) -> dict[str, int]:
    return {f: i for i, (f, _) in enumerate(sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])), 1)}


def dense_file(repo: Any, s: Any, agg: str = "max") -> dict[str, float]:
    out: dict[str, float] = {}
    for i, c in zip(repo.vec_file_idx, s.node_cos, strict=True):
        f = repo.files[i]
        if agg == "max" and c > out.get(f, -2.0):
            out[f] = float(c)
    return out


def hybrid_ref(repo: Any, q: Any, s: Any, p: dict[str, Any]) -> list[str]:
    """The reference point: whole-file BM25 + dense, fused by RRF."""
    bm = ranks(file_bm25(repo, s, p["k1"], p["b"]))
    de = ranks(dense_file(repo, s))
    k = p["k"]
    sc = {f: p["w_bm25"] / (k + bm[f]) if f in bm else 0.0 for f in repo.files}
    for f, r in de.items():
        sc[f] += p["w_dense"] / (k + r)
    return sorted(sc, key=lambda f: (-sc[f], f))


VARIANTS: dict[str, tuple[Any, dict[str, Any], dict[str, list[Any]]]] = {
    "shipped": (shipped, {}, {}),
    "bm25file": (bm25file, {"k1": 1.2, "b": 0.75}, {"b": [0.3, 0.5, 0.75, 0.9]}),
    "hybrid_ref": (hybrid_ref, {"k1": 1.2, "b": 0.75, "k": 60.0, "w_bm25": 1.0, "w_dense": 1.0},
                   {"k": [10.0, 60.0], "w_dense": [0.5, 1.0, 2.0], "b": [0.5, 0.75]}),
}
