"""Retrieval quality of SearchIndex on the shared benchmarks (file-level R@k and MRR).

Sets (see /work/shared/bench/README.md):
  symbols   public/symbols.jsonl   40 questions, package dir indexed   (test: the headline)
  retrieval public/retrieval.jsonl 120 questions, package dir indexed  (dev: tune on it)
  hist-dev  history/queries.jsonl  split=history, whole sdist indexed  (dev)
  hist-test history/queries.jsonl  split=test, whole sdist indexed     (test)

Each snapshot is copied to a work dir, its graph built with the real engine
(`neuralmind.engine.Workspace.build`), and indexed once per node-text variant
(vectors are cached on disk by text hash, so re-runs only embed what changed).
Fusion settings are applied per run, so a grid over them costs only queries.

    python benchmarks/retrieval_bench.py --sets symbols retrieval
    python benchmarks/retrieval_bench.py --sets retrieval hist-dev --grid
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import shutil
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path("/work/shared/bench")
DATA = Path("/work/bench-data")
WORK = Path("/tmp/nm-retrieval-bench")

SETS = {
    "symbols": (BENCH / "public" / "symbols.jsonl", None, True),
    "retrieval": (BENCH / "public" / "retrieval.jsonl", None, True),
    "hist-dev": (BENCH / "history" / "queries.jsonl", "history", False),
    "hist-test": (BENCH / "history" / "queries.jsonl", "test", False),
}


@dataclass(frozen=True)
class Question:
    set: str
    repo: str
    root: str        # sdist_root
    subdir: str      # "" when the whole sdist is indexed
    text: str
    gold: tuple[str, ...]


def load_questions(names: list[str]) -> list[Question]:
    out: list[Question] = []
    for name in names:
        path, split, package_only = SETS[name]
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if split and row.get("split") != split:
                continue
            out.append(Question(name, row["repo"], row["sdist_root"],
                                row.get("subdir", "") if package_only else "",
                                row.get("question") or row["query"], tuple(row["gold_files"])))
    return out


class CachedEmbedder:
    """The real embedder with a memo for repeated query texts (grid runs re-ask them)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str], progress: Any = None) -> np.ndarray:
        if len(texts) == 1 and texts[0] in self._memo:
            return self._memo[texts[0]][None, :]
        vecs = self.inner.embed(texts, progress)
        if len(texts) == 1:
            self._memo[texts[0]] = vecs[0]
        return vecs


@functools.cache
def graph_for(root: str, subdir: str) -> Any:
    from neuralmind.engine import Workspace

    src = DATA / root / subdir if subdir else DATA / root
    dst = WORK / "src" / (f"{root}__{subdir.replace('/', '_')}" if subdir else root)
    if not dst.exists():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".neuralmind"))
    t = time.perf_counter()
    graph = Workspace(dst).build().graph
    print(f"  graph {dst.name}: {len(graph.nodes)} nodes in {time.perf_counter() - t:.1f} s",
          file=sys.stderr)
    return dst, graph


def text_variants() -> dict[str, Any]:
    from neuralmind.index.node_text import DEFAULT_TEXT, NodeTextOptions

    return {
        "shipped": DEFAULT_TEXT,
        # keyword text: names + signature + docstring (+ path, + child names for files)
        "meta": NodeTextOptions(keyword_body_lines=0, file_keyword_body=False),
        "meta+human": NodeTextOptions(keyword_body_lines=0, file_keyword_body=False,
                                      humanize=True),
        "meta+body5": NodeTextOptions(keyword_body_lines=0, file_keyword_body=False,
                                      body_lines=5),
        "nopath": NodeTextOptions(keyword_body_lines=0, file_keyword_body=False, path=False),
        # ... plus each symbol's whole body, and/or each file's whole text
        "kwbody": NodeTextOptions(keyword_body_lines=-1, file_keyword_body=False),
        "kwfile": NodeTextOptions(keyword_body_lines=0, file_keyword_body=True),
        "kwbody+kwfile": NodeTextOptions(keyword_body_lines=-1, file_keyword_body=True),
        "kwbody+kwfile+body5": NodeTextOptions(keyword_body_lines=-1, file_keyword_body=True,
                                               body_lines=5),
    }


_indexes: dict[tuple[str, str, str], Any] = {}


def _vector_key(variant: str) -> tuple[Any, ...]:
    o = text_variants()[variant]
    return (o.path, o.docstring_chars, o.body_lines, o.humanize)


def seed_vectors(state: Path, variant: str) -> None:
    """Start from a sibling variant's vectors when the embedded text is the same.

    The store reuses vectors by text hash, so only texts that differ are embedded.
    """
    if (state / "vectors.npz").exists():
        return
    for other in text_variants():
        src = state.parent / other / "vectors.npz"
        if other != variant and _vector_key(other) == _vector_key(variant) and src.exists():
            state.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, state / "vectors.npz")
            return


def index_for(root: str, subdir: str, variant: str, embedder: Any) -> Any:
    from neuralmind.index.search_index import SearchIndex

    key = (root, subdir, variant)
    if key not in _indexes:
        dst, graph = graph_for(root, subdir)
        state = WORK / "index" / dst.name / variant
        seed_vectors(state, variant)
        idx = SearchIndex(state, root=dst, embedder=embedder,
                          text_options=text_variants()[variant])
        t = time.perf_counter()
        n = idx.update(graph)
        print(f"  index {dst.name}/{variant}: embedded {n} texts in "
              f"{time.perf_counter() - t:.1f} s", file=sys.stderr)
        _indexes[key] = idx
    return _indexes[key]


def ranked_files(hits: list[Any], subdir: str) -> list[str]:
    files: list[str] = []
    for h in hits:
        f = h.id.split("::", 1)[0]
        f = f"{subdir}/{f}" if subdir else f
        if f not in files:
            files.append(f)
    return files


def score(files: list[str], gold: tuple[str, ...]) -> dict[str, float]:
    g = set(gold)
    rank = next((i + 1 for i, f in enumerate(files) if f in g), None)
    return {"R@1": len(g & set(files[:1])) / len(g), "R@5": len(g & set(files[:5])) / len(g),
            "R@10": len(g & set(files[:10])) / len(g), "MRR": 1.0 / rank if rank else 0.0,
            "found": float(bool(g & set(files)))}


def run(questions: list[Question], variant: str, embedder: Any, mode: str,
        settings: dict[str, Any], k: int = 50) -> dict[str, list[dict[str, float]]]:
    import neuralmind.index.search_index as si

    per: dict[str, list[dict[str, float]]] = defaultdict(list)
    for q in questions:
        idx = index_for(q.root, q.subdir, variant, embedder)
        idx.rrf_k = settings["rrf_k"]
        idx.weights = {"bm25": settings["w_bm25"], "vector": settings["w_vector"]}
        si.EXACT_BOOST = settings.get("exact_boost", si.EXACT_BOOST)
        si.SYMBOL_TEST_FACTOR = settings.get("test_factor", si.SYMBOL_TEST_FACTOR)
        result = idx.search(q.text, k=k, mode=mode)
        per[f"{q.set}:{q.repo}"].append(score(ranked_files(result.hits, q.subdir), q.gold))
    return per


def summarize(per: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    pooled: dict[str, list[dict[str, float]]] = defaultdict(list)
    for key, rows in sorted(per.items()):
        out[key] = {m: statistics.fmean(r[m] for r in rows) for m in rows[0]} | {"n": len(rows)}
        pooled[key.split(":")[0]].extend(rows)
    for s, rows in pooled.items():
        out[f"{s}:ALL"] = {m: statistics.fmean(r[m] for r in rows) for m in rows[0]} | {
            "n": len(rows)}
    return out


def print_table(title: str, summary: dict[str, dict[str, float]]) -> None:
    print(f"\n## {title}")
    print("| set:repo | n | found | R@1 | R@5 | R@10 | MRR |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key, m in summary.items():
        print(f"| {key} | {int(m['n'])} | {m['found'] * m['n']:.0f}/{int(m['n'])} | "
              f"{m['R@1']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} | {m['MRR']:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sets", nargs="+", default=["symbols", "retrieval", "hist-test"],
                    choices=list(SETS))
    ap.add_argument("--variants", nargs="+", default=None,
                    help="node-text variants (default: the shipped one)")
    ap.add_argument("--modes", nargs="+", default=["hybrid"],
                    choices=["hybrid", "keyword", "vector"])
    ap.add_argument("--grid", action="store_true", help="sweep RRF k and list weights")
    ap.add_argument("--json", type=Path, help="write all summaries here")
    ap.add_argument("--grid-k", type=float, nargs="+", default=[10, 30, 60, 100])
    ap.add_argument("--grid-wv", type=float, nargs="+", default=[0.5, 1.0, 1.5, 2.0])
    ap.add_argument("--grid-tf", type=float, nargs="+", default=[0.5])
    args = ap.parse_args()

    import neuralmind.index.search_index as si
    from neuralmind.index.embedder import load_embedder

    WORK.mkdir(parents=True, exist_ok=True)
    embedder = CachedEmbedder(load_embedder())
    questions = load_questions(args.sets)
    variants = args.variants or ["shipped"]
    base = {"rrf_k": si.RRF_K, "w_bm25": si.RRF_WEIGHTS["bm25"], "w_vector": si.RRF_WEIGHTS["vector"],
            "exact_boost": si.EXACT_BOOST, "test_factor": si.SYMBOL_TEST_FACTOR}
    grid = [base]
    if args.grid:
        grid = [base | {"rrf_k": k, "w_bm25": 1.0, "w_vector": wv, "test_factor": tf}
                for k, wv, tf in itertools.product(args.grid_k, args.grid_wv, args.grid_tf)]
    results: list[dict[str, Any]] = []
    for variant in variants:
        for mode in args.modes:
            for settings in grid:
                actual_mode = "hybrid" if mode == "vector" else mode
                s = dict(settings)
                if mode == "vector":
                    s["w_bm25"] = 0.0
                per = run(questions, variant, embedder,
                          actual_mode, s)
                summary = summarize(per)
                results.append({"variant": variant, "mode": mode, "settings": s,
                                "summary": summary})
                if not args.grid:
                    print_table(f"{variant} / {mode} / {s}", summary)
    if args.grid:
        print("\n| variant | mode | k | w_bm25 | w_vec | tests | " + " | ".join(
            f"{s} MRR | {s} R@5" for s in args.sets) + " |")
        for r in sorted(results, key=lambda r: -sum(
                r["summary"][f"{s}:ALL"]["MRR"] for s in args.sets)):
            st = r["settings"]
            cells = " | ".join(f"{r['summary'][f'{s}:ALL']['MRR']:.3f} | "
                               f"{r['summary'][f'{s}:ALL']['R@5']:.3f}" for s in args.sets)
            print(f"| {r['variant']} | {r['mode']} | {st['rrf_k']} | {st['w_bm25']} | "
                  f"{st['w_vector']} | {st['test_factor']} | {cells} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
