"""Ranking variants for rank_lab.py: each is fn(repo, question, signals, params) -> files."""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from typing import Any

import numpy as np


def file_references(edges: Any, node_file: dict[str, str]) -> list[tuple[str, str]]:
    """(source file, target file) for each non-containment edge between two files."""
    out = []
    for e in edges:
        if e.kind == "contains":
            continue
        a, b = node_file.get(e.source), node_file.get(e.target)
        if a and b and a != b:
            out.append((a, b))
    return out


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


def _prep(repo: Any) -> None:
    """Per-repository structures the file variants share (computed once)."""
    if hasattr(repo, "pairs"):
        return
    from neuralmind.index.pairing import pair_tests
    from neuralmind.index.tokens import code_tokens

    node_file = {n.id: n.file for n in repo.graph.nodes.values()}
    repo.pairs = pair_tests(repo.files, file_references(repo.graph.edges, node_file))
    repo.path_terms = {}
    for f in repo.files:
        parts = f.rsplit(".", 1)[0] if "." in f.rsplit("/", 1)[-1] else f
        repo.path_terms[f] = set(code_tokens(parts.replace("/", " ")))
    df: dict[str, int] = defaultdict(int)
    for ts in repo.path_terms.values():
        for t in ts:
            df[t] += 1
    n = len(repo.files)
    repo.path_idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}


def path_scores(repo: Any, s: Any) -> dict[str, float]:
    out = {}
    for f, ts in repo.path_terms.items():
        sc = sum(repo.path_idf[t] for t in s.extra["terms"] if t in ts)
        if sc > 0:
            out[f] = sc
    return out


def node_fused_files(repo: Any, q: Any, s: Any, p: dict[str, Any] | None = None
                     ) -> dict[str, float]:
    """Files by a node-level ranking (first occurrence among the best 40 nodes): the
    engine's own (p None), or RRF of node BM25 and node vectors, + exact-name boost and
    the file group list, with node-level test factor `node_tf`."""
    key = ("node_files", tuple(sorted((p or {}).items())))
    if key in s.extra:
        return s.extra[key]
    if p is None:
        files = shipped(repo, q, s, {})
    else:
        from neuralmind.index.fusion import group_rrf, rrf
        from neuralmind.index.pairing import is_test_path

        cand = 100
        bm = [i for i, _ in sorted(s.node_bm25.items(), key=lambda kv: (-kv[1], kv[0]))[:cand]]
        top = np.argsort(-s.node_cos)[:cand]
        ve = [repo.vec_ids[i] for i in top]
        fused = {f.id: f.score for f in rrf({"bm25": bm, "vector": ve}, None, p["nk"])}
        for i in s.exact:
            fused[i] = fused.get(i, 0.0) + 1.0
        if p["gw"]:
            g = group_rrf(fused, lambda i: i.split("::", 1)[0], p["gw"], p["nk"])
            fused = {i: v + g[i] for i, v in fused.items()}
        if not s.about_tests:
            fused = {i: v * (p["node_tf"] if is_test_path(i.split("::", 1)[0]) else 1.0)
                     for i, v in fused.items()}
        order = sorted(fused, key=lambda i: (-fused[i], i))[:40]
        files = list(dict.fromkeys(i.split("::", 1)[0] for i in order))
    s.extra[key] = {f: 1.0 / i for i, f in enumerate(files, 1)}
    return s.extra[key]


def files_v1(repo: Any, q: Any, s: Any, p: dict[str, Any]) -> list[str]:
    """File-level RRF of whole-file BM25, dense (best node), node ranking and path match;
    tests scaled down unless asked about, then lifted to a share of their paired source."""
    from neuralmind.index.pairing import is_test_path

    _prep(repo)
    k = p["k"]
    nodep = None if p.get("node_tf") is None else {
        "node_tf": p["node_tf"], "gw": p["gw"], "nk": p["nk"]}
    key = ("lists", p["k1"], p["b"], str(nodep))
    if key not in s.extra:
        s.extra[key] = {"bm25": ranks(file_bm25(repo, s, p["k1"], p["b"])),
                        "dense": ranks(dense_file(repo, s)),
                        "nodes": ranks(node_fused_files(repo, q, s, nodep)),
                        "path": ranks(path_scores(repo, s))}
    lists = s.extra[key]
    sc: dict[str, float] = defaultdict(float)
    for name, rk in lists.items():
        w = p["w_" + name]
        if not w:
            continue
        for f, r in rk.items():
            sc[f] += w / (k + r)
    if not s.about_tests:
        for f in sc:
            if is_test_path(f):
                sc[f] *= p["test_factor"]
    if p["doc_factor"] != 1.0 and not s.extra.get("about_docs"):
        for f in sc:
            if f.lower().endswith((".md", ".rst", ".txt", ".adoc")):
                sc[f] *= p["doc_factor"]
    if p["pair_share"]:
        for t, srcs in repo.pairs.items():
            inherited = max((sc.get(x, 0.0) for x in srcs), default=0.0) * p["pair_share"]
            if inherited > sc.get(t, 0.0):
                sc[t] = inherited
    return sorted(sc, key=lambda f: (-sc[f], f))


VARIANTS["files_v1"] = (files_v1, {"k1": 1.2, "b": 0.75, "k": 10.0, "w_bm25": 1.0,
                                   "w_dense": 1.0, "w_nodes": 1.0, "w_path": 0.5,
                                   "test_factor": 0.5, "pair_share": 0.9, "doc_factor": 1.0},
                        {"k": [10.0, 30.0], "w_nodes": [1.0, 2.0, 3.0],
                         "w_dense": [0.5, 1.0], "w_path": [0.0, 0.5],
                         "test_factor": [0.5, 1.0], "doc_factor": [0.5, 1.0],
                         "pair_share": [0.0, 0.5, 0.8]})


def product(repo: Any, q: Any, s: Any, p: dict[str, Any]) -> list[str]:
    """The engine's own file ranking (`SearchIndex.search` -> `file_rank.rank_files`).

    The file lists of each question are recorded from one real search, then every grid
    point re-runs only `rank_files` on them (the same function the engine calls)."""
    import neuralmind.index.search_index as si
    from neuralmind.context.retrieve import source_pairs
    from neuralmind.index import file_rank

    if "product_lists" not in s.extra:
        seen: dict[str, Any] = {}

        def record(lists: Any, pairs: Any, **kw: Any) -> Any:
            seen.update(lists=lists, pairs=pairs, kw=kw)
            return file_rank.rank_files(lists, pairs, **kw)

        idx = repo.index
        idx._embedder = FixedEmbedder(s.extra["qv"], idx._vectors.model_id)
        si.rank_files, original = record, si.rank_files
        try:
            idx.search(q.text, k=40, pairs=source_pairs(repo.graph))
        finally:
            si.rank_files = original
        s.extra["product_lists"] = seen
    seen = s.extra["product_lists"]
    kw = dict(seen["kw"])
    kw["params"] = file_rank.FileRankParams(
        k=p["k"], weights={"symbols": p["w_symbols"], "keywords": p["w_keywords"],
                           "meaning": p["w_meaning"]},
        test_factor=p["test_factor"], doc_factor=p["doc_factor"], pair_share=p["pair_share"])
    return [f.file for f in file_rank.rank_files(seen["lists"], seen["pairs"], **kw)]


def _product_defaults() -> dict[str, Any]:
    from neuralmind import config as c

    return {"k": c.FILE_RRF_K, "w_symbols": c.FILE_LIST_WEIGHTS["symbols"],
            "w_keywords": c.FILE_LIST_WEIGHTS["keywords"],
            "w_meaning": c.FILE_LIST_WEIGHTS["meaning"], "test_factor": c.FILE_TEST_FACTOR,
            "doc_factor": c.DOC_FACTOR, "pair_share": c.PAIR_SHARE}


VARIANTS["product"] = (product, _product_defaults(),
                       {"k": [5.0, 10.0, 20.0], "w_symbols": [2.0, 3.0, 4.0],
                        "w_keywords": [0.5, 1.0], "w_meaning": [0.5, 1.0],
                        "test_factor": [0.5, 1.0], "doc_factor": [0.5, 1.0],
                        "pair_share": [0.0, 0.5, 0.8]})


def product_plus(repo: Any, q: Any, s: Any, p: dict[str, Any]) -> list[str]:
    """The product's lists plus experimental ones: "chunks" (best cosine of the file's
    line-window vectors, when cached), "symsum" (files by their symbols' summed fused
    scores), "deep" (the symbol list read 150 nodes deep)."""
    import rank_lab

    from neuralmind.index import file_rank

    product(repo, q, s, _product_defaults())
    seen = s.extra["product_lists"]
    lists = dict(seen["lists"])
    if p.get("w_chunks"):
        if not hasattr(repo, "chunks"):
            path = rank_lab.CACHE / f"chunks-minilm-{repo.src.replace('/', '__')}.pkl"
            repo.chunks = rank_lab.pickle.loads(path.read_bytes()) if path.exists() else None
        if repo.chunks is not None:
            if "chunk_list" not in s.extra:
                vecs, owner = repo.chunks
                cos = vecs @ s.extra["qv"].astype(np.float32)
                best: dict[str, float] = {}
                for i in np.argsort(-cos)[:300]:
                    best.setdefault(repo.files[owner[i]], float(cos[i]))
                s.extra["chunk_list"] = list(best)
            lists["chunks"] = s.extra["chunk_list"]
    if p.get("w_deep"):
        if "deep_list" not in s.extra:
            nodep = {"node_tf": 0.5, "gw": 0.25, "nk": 10.0}
            from neuralmind.index.fusion import rrf

            cand = 150
            bm = [i for i, _ in sorted(s.node_bm25.items(), key=lambda kv: (-kv[1], kv[0]))[:cand]]
            top = np.argsort(-s.node_cos)[:cand]
            ve = [repo.vec_ids[i] for i in top]
            fused = {f.id: f.score for f in rrf({"bm25": bm, "vector": ve}, None, nodep["nk"])}
            tot: dict[str, float] = defaultdict(float)
            for i, v in fused.items():
                tot[i.split("::", 1)[0]] += v
            s.extra["deep_list"] = sorted(tot, key=lambda f: (-tot[f], f))
        lists["deep"] = s.extra["deep_list"]
    if p.get("w_central") or p.get("w_size"):
        if not hasattr(repo, "central"):
            node_file = {n.id: n.file for n in repo.graph.nodes.values()}
            indeg: dict[str, int] = defaultdict(int)
            for _a, b in file_references(repo.graph.edges, node_file):
                indeg[b] += 1
            repo.central = sorted(repo.files, key=lambda f: (-indeg[f], f))
            repo.size = sorted(repo.files, key=lambda f: (-len(repo.text[f]), f))
        # a prior only among the files the evidence found (not the whole repository)
        found = set(lists["symbols"]) | set(lists["keywords"]) | set(lists["meaning"][:20])
        lists["central"] = [f for f in repo.central if f in found]
        lists["size"] = [f for f in repo.size if f in found]
    if p.get("w_kw2"):
        if not hasattr(repo, "kw2"):
            sys.path.insert(0, "/work/shared/bench")
            import baselines

            repo.kw2 = baselines.BM25({f: repo.text[f] for f in repo.files})
        if "kw2" not in s.extra:
            s.extra["kw2"] = repo.kw2.rank(q.text)[:20]
        lists["kw2"] = s.extra["kw2"]
    kw = dict(seen["kw"])
    weights = {"symbols": p["w_symbols"], "keywords": p["w_keywords"], "meaning": p["w_meaning"],
               "kw2": p.get("w_kw2", 0.0),
               "chunks": p.get("w_chunks", 0.0), "deep": p.get("w_deep", 0.0),
               "central": p.get("w_central", 0.0), "size": p.get("w_size", 0.0)}
    kw["params"] = file_rank.FileRankParams(
        k=p["k"], weights=weights, test_factor=p["test_factor"], doc_factor=p["doc_factor"],
        pair_share=p["pair_share"])
    return [f.file for f in file_rank.rank_files(lists, seen["pairs"], **kw)]


VARIANTS["product_plus"] = (product_plus, _product_defaults() | {"w_chunks": 0.0, "w_deep": 0.0},
                            {"w_chunks": [0.0, 0.5, 1.0], "w_deep": [0.0, 0.5, 1.0],
                             "pair_share": [0.5, 0.8]})


def product_follow(repo: Any, q: Any, s: Any, p: dict[str, Any]) -> list[str]:
    """The product's ranking, then each of the top `follow` source files' paired test moved
    to just below it (a position rule instead of a score share)."""
    from neuralmind.index.pairing import is_test_path

    files = product(repo, q, s, p)
    pairs = s.extra["product_lists"]["pairs"]
    tests_of: dict[str, list[str]] = defaultdict(list)
    for t, srcs in pairs.items():
        if srcs:
            tests_of[srcs[0]].append(t)
    out: list[str] = []
    n = 0
    for f in files:
        if f in out:
            continue
        out.append(f)
        if not is_test_path(f) and n < p["follow"]:
            n += 1
            for t in sorted(tests_of.get(f, []))[:p["per_source"]]:
                if t not in out:
                    out.append(t)
    return out


VARIANTS["product_follow"] = (product_follow, _product_defaults() | {"follow": 1, "per_source": 1},
                              {"follow": [0, 1, 2, 3], "per_source": [1, 2],
                               "pair_share": [0.0, 0.5, 0.8]})
