"""Ranking variants for rank_lab.py: each is fn(repo, question, signals, params) -> files.

`product` re-runs the engine's own `file_rank.rank_files`; `lab2` recomposes it from one
recorded real search per question with experimental lists (chunk vectors under MiniLM,
truncated MiniLM or a static model; node-vector aggregates; name matches) and knobs;
`lab5` (and its grids `lab5_prf`, `lab5_dprf`, `lab5_graph`, `lab5_norm`) replays
rank_files' steps with pseudo-relevance feedback, graph propagation and score fusion;
TEXT_VARIANTS say which nodes get a vector and what text stands for them (rank_lab
--texts). A notebook of experiments, hence its length; BENCHMARKS.md keeps the results.
"""

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

    def embed_question(self, text: str) -> np.ndarray:   # SearchIndex.search asks for this one
        return self.vec


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
    from neuralmind.context.retrieve import source_pairs
    from neuralmind.index import file_rank

    if "product_lists" not in s.extra:
        seen: dict[str, Any] = {}

        original = file_rank.rank_files

        def record(lists: Any, pairs: Any, **kw: Any) -> Any:
            seen.update(lists=lists, pairs=pairs, kw=kw)
            return original(lists, pairs, **kw)

        idx = repo.index
        idx._embedder = FixedEmbedder(s.extra["qv"], idx._vectors.model_id)
        file_rank.rank_files = record      # search -> rank_question_files -> rank_files
        try:
            idx.search(q.text, k=40, pairs=source_pairs(repo.graph))
        finally:
            file_rank.rank_files = original
        s.extra["product_lists"] = seen
    seen = s.extra["product_lists"]
    kw = dict(seen["kw"])
    kw["params"] = file_rank.FileRankParams(
        k=p["k"], weights={"symbols": p["w_symbols"], "keywords": p["w_keywords"],
                           "meaning": p["w_meaning"]},
        test_factor=p["test_factor"], doc_factor=p["doc_factor"], pair_share=p["pair_share"],
        follow_sources=p["follow_sources"], follow_depth=p["follow_depth"],
        follow_position=p["follow_position"])
    return [f.file for f in file_rank.rank_files(seen["lists"], seen["pairs"], **kw)]


def _product_defaults() -> dict[str, Any]:
    from neuralmind import config as c

    return {"k": c.FILE_RRF_K, "w_symbols": c.FILE_LIST_WEIGHTS["symbols"],
            "w_keywords": c.FILE_LIST_WEIGHTS["keywords"],
            "w_meaning": c.FILE_LIST_WEIGHTS["meaning"], "test_factor": c.FILE_TEST_FACTOR,
            "doc_factor": c.DOC_FACTOR, "pair_share": c.PAIR_SHARE,
            "follow_sources": c.PAIR_FOLLOW_SOURCES, "follow_depth": c.PAIR_FOLLOW_DEPTH,
            "follow_position": c.PAIR_FOLLOW_POSITION}


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


# --- RETR2 experiments: richer recorded evidence, lists recomposed per grid point ----------
def _record2(repo: Any, q: Any, s: Any) -> dict[str, Any]:
    """One real search per question, recording the full symbol ranking (before the test
    factor is applied is recoverable: test hits carry the down-weight reason), whole-file
    BM25 100 deep, and the node cosines already in the signals."""
    if "rec2" in s.extra:
        return s.extra["rec2"]
    import neuralmind.index.search_index as si
    from neuralmind.config import FILE_BM25_B
    from neuralmind.context.retrieve import source_pairs

    product(repo, q, s, _product_defaults())
    idx = repo.index
    seen: dict[str, Any] = {}
    orig = idx._rank_symbols

    def rec(*a: Any, **kw: Any) -> Any:
        hits = orig(*a, **kw)
        seen["hits"] = [(h.id, h.score, any(r.startswith("test/") for r in h.reasons))
                        for h in hits]
        return hits

    idx._rank_symbols = rec
    try:
        idx.search(q.text, k=40, pairs=source_pairs(repo.graph))
    finally:
        del idx._rank_symbols
    from neuralmind.index.query import parse_question

    pq = parse_question(q.text)
    seen["kw"] = [f for f, _ in idx._bm25.search_terms(pq.keyword_terms, 100,
                                                      subset=si.is_file_id, b=FILE_BM25_B)]
    order = np.argsort(-s.node_cos)
    best: dict[str, float] = {}
    for i in order[:2000]:
        best.setdefault(repo.files[repo.vec_file_idx[i]], float(s.node_cos[i]))
    seen["meaning_all"] = list(best)
    seen["pairs"] = s.extra["product_lists"]["pairs"]
    seen["flags"] = s.extra["product_lists"]["kw"]
    s.extra["rec2"] = seen
    return seen


def _truncated_embed(texts: list[str], max_tokens: int) -> np.ndarray:
    """The engine's embedder with its window cut to `max_tokens` (restored after)."""
    import time

    from neuralmind.index.embedder import MAX_TOKENS, load_embedder

    emb = load_embedder()
    emb._tokenizer.enable_truncation(max_tokens)
    t = time.perf_counter()
    try:
        vecs = emb.embed(texts)
    finally:
        emb._tokenizer.enable_truncation(MAX_TOKENS)
    print(f"  {len(texts)} chunks at {max_tokens} tokens in {time.perf_counter() - t:.1f} s",
          file=sys.stderr)
    return vecs


def chunk_list(repo: Any, q: Any, s: Any, tag: str) -> list[str]:
    """Files by their best chunk's cosine to the question, under model `tag` (MiniLM
    chunks must have been cached by rank_lab.chunk_vectors; static models are computed)."""
    import rank_lab
    import static_lab

    key = ("chunk_list", tag)
    if key in s.extra:
        return s.extra[key]
    attr = f"chunks_{tag}"
    if not hasattr(repo, attr):
        path = rank_lab.CACHE / f"chunks-{tag}-{repo.src.replace('/', '__')}.pkl"
        if path.exists():
            setattr(repo, attr, rank_lab.pickle.loads(path.read_bytes()))
        elif tag in static_lab.EMBEDDERS or tag.startswith("minilm"):
            texts, owner = [], []
            for i, f in enumerate(repo.files):
                for c in rank_lab.file_chunks(f, repo.text[f]):
                    texts.append(c)
                    owner.append(i)
            if tag in static_lab.EMBEDDERS:
                vecs = static_lab.EMBEDDERS[tag](texts)
            else:   # "minilm64": each chunk cut to its first 64 word pieces
                vecs = _truncated_embed(texts, int(tag[len("minilm"):]))
            setattr(repo, attr, (vecs, np.array(owner)))
            path.write_bytes(rank_lab.pickle.dumps(getattr(repo, attr)))
        else:
            setattr(repo, attr, None)
    data = getattr(repo, attr)
    if data is None:
        s.extra[key] = []
        return []
    vecs, owner = data
    qv = s.extra["qv"] if tag.startswith("minilm") else static_lab.EMBEDDERS[tag]([q.text])[0]
    cos = vecs @ qv.astype(np.float32)
    best: dict[str, float] = {}
    for i in np.argsort(-cos)[:300]:
        best.setdefault(repo.files[owner[i]], float(cos[i]))
    s.extra[key] = list(best)
    return s.extra[key]


def agg_list(repo: Any, s: Any, how: str) -> list[str]:
    """Files by an aggregate of their node vectors' cosines to the question, at no
    embedding cost: "centroid" (cosine to the file's mean node vector), "topN" (mean of
    the file's N best node cosines), "sumN" (their sum)."""
    key = ("agg", how)
    if key in s.extra:
        return s.extra[key]
    nf = len(repo.files)
    if how == "centroid":
        if not hasattr(repo, "centroids"):
            c = np.zeros((nf, repo.vecs.shape[1]), np.float32)
            np.add.at(c, repo.vec_file_idx, repo.vecs)
            n = np.linalg.norm(c, axis=1, keepdims=True)
            repo.centroids = c / np.maximum(n, 1e-12)
            repo.has_vec = n[:, 0] > 0
        sc = repo.centroids @ s.extra["qv"].astype(np.float32)
        sc[~repo.has_vec] = -9
    else:
        depth = int(how[3:])
        order = np.argsort(-s.node_cos)
        got: dict[int, list[float]] = defaultdict(list)
        for i in order:
            fi = int(repo.vec_file_idx[i])
            if len(got[fi]) < depth:
                got[fi].append(float(s.node_cos[i]))
        sc = np.full(nf, -9.0)
        for fi, v in got.items():
            sc[fi] = (sum(v) if how.startswith("sum") else sum(v) / depth)
    top = np.argsort(-sc)[:100]
    s.extra[key] = [repo.files[i] for i in top if sc[i] > -9]
    return s.extra[key]


def lab2(repo: Any, q: Any, s: Any, p: dict[str, Any]) -> list[str]:
    """The product's ranking recomposed from recorded evidence, with experimental knobs:
    sym_tf (test factor inside the symbols list), sym_depth, kw_depth, meaning_depth
    (files), pair_mode ("max": today, "add": own score + share x source), w_chunks,
    w_name (files whose name stem is a question word), w_size."""
    from neuralmind.index.file_rank import is_doc_path
    from neuralmind.index.pairing import is_test_path

    rec = _record2(repo, q, s)
    hits = rec["hits"]
    tf = p.get("sym_tf", 0.5)
    if tf != 0.5:
        hits = sorted(((i, sc / 0.5 * tf if t else sc) for i, sc, t in hits),
                      key=lambda h: (-h[1], h[0]))
    else:
        hits = [(i, sc) for i, sc, _ in hits]
    lists: dict[str, list[str]] = {
        "symbols": list(dict.fromkeys(i.split("::", 1)[0] for i, _ in hits[:p.get("sym_depth", 40)])),
        "keywords": rec["kw"][:p.get("kw_depth", 20)],
        "meaning": rec["meaning_all"][:p.get("meaning_depth", 10 ** 6)],
    }
    if p.get("w_chunks") and p.get("chunk_sel"):
        import chunk_lab

        lists["chunks"] = chunk_lab.chunk_files(repo, q, s, p["chunk_sel"])
    elif p.get("w_chunks"):
        lists["chunks"] = chunk_list(repo, q, s, p.get("chunk_tag", "minilm"))
    if p.get("w_agg"):
        lists["agg"] = agg_list(repo, s, p.get("agg", "top3"))
    if p.get("w_name"):
        _prep(repo)
        ps = path_scores(repo, s)
        lists["name"] = sorted(ps, key=lambda f: (-ps[f], f))[:p.get("name_depth", 5)]
    weights = {"symbols": p["w_symbols"], "keywords": p["w_keywords"], "meaning": p["w_meaning"],
               "chunks": p.get("w_chunks", 0.0), "name": p.get("w_name", 0.0),
               "agg": p.get("w_agg", 0.0)}
    k = p["k"]
    sc: dict[str, float] = defaultdict(float)
    for name, files in lists.items():
        w = weights.get(name, 0.0)
        if not w:
            continue
        for r, f in enumerate(files, 1):
            sc[f] += w / (k + r)
    flags = rec["flags"]
    for f in list(sc):
        if not flags.get("about_docs") and is_doc_path(f):
            sc[f] *= p["doc_factor"]
        elif not flags.get("about_tests") and is_test_path(f):
            sc[f] *= p["test_factor"]
    share = p["pair_share"]
    if share:
        own = dict(sc)
        for t, srcs in rec["pairs"].items():
            src = max((own.get(x, 0.0) for x in srcs), default=0.0)
            if not src:
                continue
            if p.get("pair_mode", "max") == "max":
                sc[t] = max(own.get(t, 0.0), share * src)
            else:
                sc[t] = own.get(t, 0.0) + share * src
    ranked = sorted(sc, key=lambda f: (-sc[f], f))
    if p.get("follow"):
        ranked = _follow(ranked, own if share else dict(sc), rec["pairs"], p)
    return ranked[:20]


def _follow(ranked: list[str], own: dict[str, float], pairs: dict[str, list[str]],
            p: dict[str, Any]) -> list[str]:
    """Each of the top `follow` source files' paired tests moved to just below it, when the
    test's own evidence (its score before pairing) ranks it within `follow_depth` files."""
    from neuralmind.index.pairing import is_test_path

    own_rank = {f: i for i, f in enumerate(sorted(own, key=lambda f: (-own[f], f)), 1)}
    tests_of: dict[str, list[str]] = defaultdict(list)
    for t, srcs in pairs.items():
        for x in srcs[:p.get("follow_srcs", 1)]:
            tests_of[x].append(t)
    depth = p.get("follow_depth", 10 ** 6)
    out: list[str] = []
    moved: set[str] = set()
    n = 0
    for f in ranked:
        if f in out:
            continue
        out.append(f)
        if n < p["follow"] and not is_test_path(f):
            n += 1
            cands = sorted((t for t in tests_of.get(f, ()) if own_rank.get(t, 10 ** 9) <= depth),
                           key=lambda t: own_rank[t])
            out += [t for t in cands[:p.get("per_source", 1)] if t not in out]
            moved.update(cands[:p.get("per_source", 1)])
    floor = p.get("follow_floor", 1)   # a moved test goes no higher than this position
    if floor > 1:
        for t in [t for t in out[:floor - 1] if t in moved and own_rank.get(t, 10 ** 9) >= floor]:
            out.remove(t)
            out.insert(floor - 1, t)
    return out


VARIANTS["lab2"] = (lab2, _product_defaults() | {"sym_tf": 0.5, "sym_depth": 40, "kw_depth": 20},
                    {"sym_tf": [0.5, 1.0], "pair_mode": ["max", "add"],
                     "pair_share": [0.3, 0.5, 0.8]})


# --- text variants for rank_lab --texts: which nodes get a vector, and their text ---------
def _shipped_texts(repo: Any, opts: Any = None) -> dict[str, str]:
    idx = repo.index
    if opts is not None:
        idx.text_options = opts
    try:
        return {i: t[2] for i, t in idx._texts(repo.graph, list(repo.graph.nodes)).items()}
    finally:
        from neuralmind.index.node_text import DEFAULT_TEXT

        idx.text_options = DEFAULT_TEXT


def _is_member(n: Any) -> bool:
    return "." in (n.qualname or "") and n.kind != "file"


def _members_out(repo: Any, keep_doc: bool = True, opts: Any = None) -> dict[str, str]:
    texts = _shipped_texts(repo, opts)
    nodes = repo.graph.nodes
    return {i: t for i, t in texts.items()
            if not (_is_member(nodes[i]) and not (keep_doc and nodes[i].docstring))}


def _members_out_parent(repo: Any, opts: Any = None) -> dict[str, str]:
    """Members without a docstring lose their vector; their parent's text names them."""
    texts = _members_out(repo, opts=opts)
    nodes = repo.graph.nodes
    by_qual = {(n.file, n.qualname): i for i, n in nodes.items() if n.qualname}
    kids: dict[str, list[str]] = defaultdict(list)
    for n in nodes.values():
        if _is_member(n) and not n.docstring:
            parent = by_qual.get((n.file, n.qualname.rsplit(".", 1)[0]))
            if parent:
                kids[parent].append(n.name)
    for p, names in kids.items():
        if p in texts:
            texts[p] += "\ndefines " + ", ".join(names[:40])
    return texts


def _nopath():
    from neuralmind.index.node_text import NodeTextOptions

    return NodeTextOptions(path=False)


def _short_out(repo: Any, min_tokens: int) -> dict[str, str]:
    from neuralmind.index.embedder import load_embedder

    texts = _shipped_texts(repo)
    ids = list(texts)
    toks = load_embedder()._tokenize([texts[i] for i in ids])
    return {i: texts[i] for i, t in zip(ids, toks, strict=True) if len(t) > min_tokens}


TEXT_VARIANTS: dict[str, Any] = {
    "shipped": _shipped_texts,
    "nopath": lambda r: _shipped_texts(r, _nopath()),
    "members_out": _members_out,
    "members_out_all": lambda r: _members_out(r, keep_doc=False),
    "members_out_parent": _members_out_parent,
    "nopath_members_out_parent": lambda r: _members_out_parent(r, _nopath()),
    "short16_out": lambda r: _short_out(r, 16),
    "short24_out": lambda r: _short_out(r, 24),
}


VARIANTS["lab2_follow"] = (lab2, VARIANTS["lab2"][1] | {"follow": 0, "follow_depth": 10},
                           {"follow": [0, 1, 2, 3], "follow_depth": [5, 10, 20, 40],
                            "per_source": [1, 2], "pair_share": [0.5, 0.8]})

VARIANTS["lab2_floor"] = (lab2, VARIANTS["lab2"][1] | {"follow": 2, "follow_depth": 10},
                          {"follow": [2, 3], "follow_depth": [10, 20],
                           "follow_floor": [1, 2, 3, 4, 5], "pair_share": [0.5, 0.8]})


# --- RETR5 experiments: pseudo-relevance feedback and graph propagation, at file level ----
def _file_graph(repo: Any) -> None:
    """Per repository (once): file -> {file it references: edge count} and the reverse,
    and each file's term counts (the engine's tokenizer over the whole file)."""
    if hasattr(repo, "f_out"):
        return
    from collections import Counter

    from neuralmind.index.tokens import code_tokens

    node_file = {n.id: n.file for n in repo.graph.nodes.values()}
    out: dict[str, Counter] = defaultdict(Counter)
    inc: dict[str, Counter] = defaultdict(Counter)
    for a, b in file_references(repo.graph.edges, node_file):
        out[a][b] += 1
        inc[b][a] += 1
    repo.f_out, repo.f_in = out, inc
    repo.f_terms = {f: Counter(code_tokens(repo.text[f])) for f in repo.files}
    repo.term_file_scores = {}


def _term_scores(repo: Any, term: str) -> dict[str, float]:
    """Whole-file BM25 of one term (the engine's index, file statistics), cached."""
    got = repo.term_file_scores.get(term)
    if got is None:
        import neuralmind.index.search_index as si
        from neuralmind.config import FILE_BM25_B

        got = dict(repo.index._bm25.search_terms([term], 10 ** 6, subset=si.is_file_id,
                                                 b=FILE_BM25_B))
        repo.term_file_scores[term] = got
    return got


def _idf(repo: Any, term: str) -> float:
    n = len(repo.files)
    df = len(_term_scores(repo, term))
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5)) if df else 0.0


def prf_list(repo: Any, s: Any, first: list[str], p: dict[str, Any]) -> list[str]:
    """RM3-like: terms distinctive to the first pass's top `fb_docs` files (share of the
    file's terms x idf, summed), the best `fb_terms` of them added to the question's terms
    at weight `fb_beta` (scaled to the best one), then whole-file BM25 again."""
    from neuralmind.index.file_rank import is_doc_path

    _file_graph(repo)
    key = ("prf", tuple(first[:p["fb_docs"]]), p["fb_terms"], p["fb_beta"],
           p.get("fb_idf", 1.0))
    if key in s.extra:
        return s.extra[key]
    qterms = s.extra["terms"]
    cand: dict[str, float] = defaultdict(float)
    fb = [f for f in first if not is_doc_path(f)][:p["fb_docs"]]
    for f in fb:
        tc = repo.f_terms.get(f)
        if not tc:
            continue
        total = sum(tc.values())
        for t, c in tc.items():
            if t in qterms or len(t) < 3:
                continue
            cand[t] += c / total
    scored = {t: v * _idf(repo, t) ** p.get("fb_idf", 1.0) for t, v in cand.items()}
    best = sorted(scored, key=lambda t: (-scored[t], t))[:p["fb_terms"]]
    top = scored[best[0]] if best else 1.0
    weights = {t: float(c) for t, c in qterms.items()}
    for t in best:
        weights[t] = weights.get(t, 0.0) + p["fb_beta"] * scored[t] / top
    tot: dict[str, float] = defaultdict(float)
    for t, w in weights.items():
        for f, v in _term_scores(repo, t).items():
            tot[f] += w * v
    out = sorted(tot, key=lambda f: (-tot[f], f))[:20]
    s.extra[key] = out
    return out


def dense_prf_list(repo: Any, s: Any, first: list[str], p: dict[str, Any]) -> list[str]:
    """Rocchio at file level: the question vector plus `dfb_gamma` x the mean of the best
    node vector of each of the first pass's top `dfb_docs` files; files by best cosine."""
    from neuralmind.index.file_rank import is_doc_path

    key = ("dprf", tuple(first[:p["dfb_docs"]]), p["dfb_gamma"])
    if key in s.extra:
        return s.extra[key]
    fb = [f for f in first if not is_doc_path(f)][:p["dfb_docs"]]
    pos = {f: i for i, f in enumerate(repo.files)}
    vecs = []
    for f in fb:
        mask = repo.vec_file_idx == pos.get(f, -1)
        if mask.any():
            idx = np.flatnonzero(mask)
            vecs.append(repo.vecs[idx[np.argmax(s.node_cos[idx])]])
    qv = s.extra["qv"].astype(np.float32)
    if vecs:
        qv = qv + p["dfb_gamma"] * np.mean(vecs, axis=0)
    cos = repo.vecs @ qv
    best: dict[str, float] = {}
    for i in np.argsort(-cos)[:300]:
        best.setdefault(repo.files[repo.vec_file_idx[i]], float(cos[i]))
    out = list(best)
    s.extra[key] = out
    return out


def _kw_norm(repo: Any, s: Any, p: dict[str, Any]) -> dict[str, float]:
    """Whole-file BM25 of the question's terms over the top 20 files, scaled to [0, 1]
    between the 20th and the best (`norm_floor` 0: scaled by the best alone)."""
    key = ("kwnorm", p.get("norm_floor", 1))
    if key not in s.extra:
        _file_graph(repo)
        tot: dict[str, float] = defaultdict(float)
        for t, c in s.extra["terms"].items():
            for f, v in _term_scores(repo, t).items():
                tot[f] += c * v
        s.extra[key] = _scale(tot, p.get("norm_floor", 1))
    return s.extra[key]


def _cos_norm(repo: Any, s: Any, p: dict[str, Any]) -> dict[str, float]:
    key = ("cosnorm", p.get("norm_floor", 1))
    if key not in s.extra:
        s.extra[key] = _scale(dense_file(repo, s), p.get("norm_floor", 1))
    return s.extra[key]


def _scale(sc: dict[str, float], floor: int) -> dict[str, float]:
    top = sorted(sc.values(), reverse=True)[:20]
    if not top or top[0] <= 0:
        return {}
    lo = top[-1] if floor else 0.0
    span = (top[0] - lo) or 1.0
    return {f: (v - lo) / span for f, v in sc.items() if v > lo}


def lab5(repo: Any, q: Any, s: Any, p: dict[str, Any]) -> list[str]:
    """The engine's ranking (rank_files' steps, on its recorded lists) with two levers:

    PRF: a second keyword list ("prf", weight w_prf; or replacing "keywords" if
    prf_replace) and/or a dense second meaning list ("dprf", weight w_dprf), from the
    first pass's top files; graph propagation: after fusion, a file gains `gp_alpha` x
    (max, or sum capped at the max, of) the fused scores of files it references
    (gp_dir "out"), that reference it ("in"), or both, among the top `gp_src` files."""
    from neuralmind.index import file_rank
    from neuralmind.index.file_rank import RankedFile, is_doc_path
    from neuralmind.index.pairing import is_test_path

    first = product(repo, q, s, p)
    seen = s.extra["product_lists"]
    lists = dict(seen["lists"])
    flags = seen["kw"]
    weights = {"symbols": p["w_symbols"], "keywords": p["w_keywords"], "meaning": p["w_meaning"],
               "prf": p.get("w_prf", 0.0), "dprf": p.get("w_dprf", 0.0)}
    # each feedback list joins the fusion, or takes the place of the list it refines
    for name, build, refines in (("prf", prf_list, "keywords"),
                                 ("dprf", dense_prf_list, "meaning")):
        if not p.get(f"w_{name}"):
            continue
        lst = build(repo, s, first, p)
        if p.get(f"{name}_replace"):
            lists[refines] = lst
            weights[refines] = p[f"w_{name}"]
            weights[name] = 0.0
        else:
            lists[name] = lst
    k = p["k"]
    scored: dict[str, RankedFile] = {}
    for name, files in lists.items():
        w = weights.get(name, 0.0)
        if not w:
            continue
        for rank, f in enumerate(dict.fromkeys(files), 1):
            scored.setdefault(f, RankedFile(f, 0.0)).score += w / (k + rank)
    for name, fn in (("kwnorm", _kw_norm), ("cosnorm", _cos_norm)):
        lam = p.get("w_" + name, 0.0)
        if lam:     # score fusion beside rank fusion: the gaps RRF throws away
            for f, v in fn(repo, s, p).items():
                scored.setdefault(f, RankedFile(f, 0.0)).score += lam * v
    alpha = p.get("gp_alpha", 0.0)
    if alpha:
        _file_graph(repo)
        base = {f: rf.score for f, rf in scored.items()}
        srcs = dict(sorted(base.items(), key=lambda kv: (-kv[1], kv[0]))[:p.get("gp_src", 10)])
        nbrs: dict[str, dict[str, float]] = defaultdict(dict)
        d = p.get("gp_dir", "both")
        for g, v in srcs.items():
            if is_doc_path(g):
                continue
            near = set()
            if d in ("in", "both"):     # g references f: f gains from files using it
                near |= set(repo.f_out.get(g, ()))
            if d in ("out", "both"):    # f references g
                near |= set(repo.f_in.get(g, ()))
            for f in near:
                if f != g:
                    nbrs[f][g] = v
        for f, got in nbrs.items():
            if f not in scored and not p.get("gp_new"):
                continue
            if p.get("gp_agg", "max") == "max":
                add = max(got.values())
            else:
                add = min(sum(got.values()), max(srcs.values()))
            scored.setdefault(f, RankedFile(f, 0.0)).score += alpha * add
    for rf in scored.values():
        if not flags.get("about_docs") and p["doc_factor"] != 1.0 and is_doc_path(rf.file):
            rf.score *= p["doc_factor"]
        elif not flags.get("about_tests") and p["test_factor"] != 1.0 and is_test_path(rf.file):
            rf.score *= p["test_factor"]
    own_order = sorted(scored.values(), key=lambda r: (-r.score, r.file))
    own_rank = {rf.file: i for i, rf in enumerate(own_order, 1)}
    pairs = seen["pairs"]
    if p["pair_share"]:
        for test, sources in pairs.items():
            best = max((scored[x] for x in sources if x in scored), key=lambda r: r.score,
                       default=None)
            if best is None:
                continue
            lifted = p["pair_share"] * best.score
            rf = scored.setdefault(test, RankedFile(test, 0.0))
            if lifted > rf.score:
                rf.score = lifted
    ranked = sorted(scored.values(), key=lambda r: (-r.score, r.file))
    fp = file_rank.FileRankParams(
        k=k, test_factor=p["test_factor"], doc_factor=p["doc_factor"],
        pair_share=p["pair_share"], follow_sources=p["follow_sources"],
        follow_depth=p["follow_depth"], follow_position=p["follow_position"])
    if fp.follow_sources:
        ranked = file_rank.follow_sources(ranked, own_rank, pairs, fp)
    out = [rf.file for rf in ranked]
    keep = p.get("protect", 0)
    if keep:     # the first pass's best `protect` files keep their places
        head = first[:keep]
        out = head + [f for f in out if f not in head]
    return out[:20]


VARIANTS["lab5"] = (lab5, _product_defaults() | {
    "w_prf": 0.0, "fb_docs": 3, "fb_terms": 10, "fb_beta": 0.5, "w_dprf": 0.0, "dfb_docs": 3,
    "dfb_gamma": 0.5, "gp_alpha": 0.0, "gp_src": 10, "gp_dir": "both", "gp_agg": "max"},
    {"gp_alpha": [0.0, 0.1, 0.2, 0.3], "gp_dir": ["in", "out", "both"], "gp_src": [5, 10]})

VARIANTS["lab5_prf"] = (lab5, VARIANTS["lab5"][1] | {"w_prf": 1.0},
                        {"w_prf": [0.0, 1.0, 2.0], "fb_docs": [2, 3, 5], "fb_terms": [5, 10, 20],
                         "fb_beta": [0.25, 0.5, 1.0], "protect": [0, 1]})
VARIANTS["lab5_norm"] = (lab5, VARIANTS["lab5"][1],
                         {"w_kwnorm": [0.0, 0.05, 0.1, 0.2], "w_cosnorm": [0.0, 0.05],
                          "norm_floor": [0, 1], "protect": [0, 1, 2]})
VARIANTS["lab5_graph"] = (lab5, VARIANTS["lab5"][1],
                          {"gp_alpha": [0.0, 0.05, 0.1, 0.2], "gp_dir": ["in", "out", "both"],
                           "gp_agg": ["max", "sum"], "gp_src": [3, 10], "protect": [0, 1]})
VARIANTS["lab5_dprf"] = (lab5, VARIANTS["lab5"][1] | {"w_dprf": 1.0},
                         {"w_dprf": [0.0, 0.5, 1.0], "dfb_docs": [2, 3, 5],
                          "dfb_gamma": [0.25, 0.5, 1.0], "dprf_replace": [False, True],
                          "protect": [0, 1]})
VARIANTS["lab5_joint"] = (lab5, VARIANTS["lab5"][1] | {"fb_docs": 3, "fb_terms": 10, "norm_floor": 0},
                          {"w_prf": [0.0, 1.0, 2.0], "fb_beta": [0.25, 1.0],
                           "w_kwnorm": [0.0, 0.1, 0.2, 0.3], "protect": [1, 2]})
