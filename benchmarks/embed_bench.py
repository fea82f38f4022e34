"""Build and query cost of the index on requests and rich (whole sdists).

Per repo: nodes, graph seconds, distinct node texts, then in separate child
processes (so each peak RSS is its own):
  ours      Embedder.embed(texts)            (dedupe, length-sorted token-bounded batches)
  raw       onnxruntime session.run only, on the same texts tokenized beforehand
            with the same length-sorted batches: the bound our overhead is measured against
  naive32   tokenizer + session.run in input order, batches of 32 padded to the longest
Then a full SearchIndex.update (timed), the index size on disk and warm query
latency (p50/p95 over the public questions of that repo).

    python benchmarks/embed_bench.py [--repos requests-2.32.3 rich-13.7.1] [--threads 0]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

DATA = Path("/work/bench-data")
WORK = Path("/tmp/nm-embed-bench")
QUESTIONS = Path("/work/shared/bench/public/retrieval.jsonl")


def peak_rss_mb() -> float:
    """VmHWM: unlike ru_maxrss, it is not inherited across fork+exec from the parent."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(kind: str, texts_file: Path, threads: int) -> None:
    import numpy as np

    from neuralmind.index.embedder import load_embedder, plan_batches, pool

    texts = json.loads(texts_file.read_text(encoding="utf-8"))
    emb = load_embedder(threads)
    emb.embed(["warm up the session"])
    base_rss = peak_rss_mb()
    if kind == "ours":
        t = time.perf_counter()
        emb.embed(texts)
        seconds = time.perf_counter() - t
    else:
        session, tok = emb._session, emb._tokenizer
        if kind == "raw":
            ids = [e.ids for e in tok.encode_batch(texts)]
            feeds = []
            for batch in plan_batches([len(x) for x in ids]):
                longest = max(len(ids[i]) for i in batch)
                a = np.zeros((len(batch), longest), np.int64)
                m = np.zeros_like(a)
                for r, i in enumerate(batch):
                    a[r, :len(ids[i])] = ids[i]
                    m[r, :len(ids[i])] = 1
                feeds.append({"input_ids": a, "attention_mask": m,
                              "token_type_ids": np.zeros_like(a)})
            t = time.perf_counter()
            for feed in feeds:
                session.run(None, feed)
            seconds = time.perf_counter() - t
        else:  # naive32
            tok.enable_padding()
            t = time.perf_counter()
            for s in range(0, len(texts), 32):
                enc = tok.encode_batch(texts[s:s + 32])
                a = np.array([e.ids for e in enc], np.int64)
                m = np.array([e.attention_mask for e in enc], np.int64)
                out = session.run(None, {"input_ids": a, "attention_mask": m,
                                         "token_type_ids": np.zeros_like(a)})[0]
                pool(out, m)
            seconds = time.perf_counter() - t
    print(json.dumps({"kind": kind, "texts": len(texts), "distinct": len(set(texts)),
                      "seconds": seconds, "rate": len(texts) / seconds,
                      "peak_rss_mb": peak_rss_mb(), "rss_before_mb": base_rss}))


def run_child(kind: str, texts_file: Path, threads: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(texts_file),
                          "--threads", str(threads)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def dir_size(path: Path, names: list[str]) -> int:
    return sum((path / n).stat().st_size for n in names if (path / n).exists())


def bench_repo(root_name: str, threads: int) -> dict:
    from neuralmind.engine import Workspace
    from neuralmind.index.embedder import load_embedder
    from neuralmind.index.search_index import SearchIndex

    dst = WORK / root_name
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(DATA / root_name, dst)
    t = time.perf_counter()
    graph = Workspace(dst).build().graph
    graph_s = time.perf_counter() - t
    state = dst / ".neuralmind" / "bench-index"
    index = SearchIndex(state, root=dst, embedder=load_embedder(threads))
    texts = [t[2] for t in index._texts(graph, list(graph.nodes)).values()]
    texts_file = WORK / f"{root_name}.texts.json"
    texts_file.write_text(json.dumps(texts), encoding="utf-8")
    runs = {k: run_child(k, texts_file, threads) for k in ("raw", "ours", "naive32")}
    t = time.perf_counter()
    index.update(graph, embed=False)
    keyword_s = time.perf_counter() - t
    t = time.perf_counter()
    index.update(graph)
    update_s = time.perf_counter() - t
    pkg = root_name.split("-")[0].lower()
    qs = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines()
          if json.loads(line)["sdist_root"].lower().startswith(pkg)]
    for q in qs[:3]:
        index.search(q)
    lat = []
    for q in qs * 3:
        t = time.perf_counter()
        index.search(q, k=20)
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    return {
        "repo": root_name, "nodes": len(graph.nodes), "graph_s": graph_s, "runs": runs,
        "keyword_index_s": keyword_s, "full_update_s": update_s,
        "index_bytes": dir_size(state, ["bm25.bin", "vectors.npz", "search_meta.json",
                                        "vectors.usearch"]),
        "query_ms_p50": statistics.median(lat), "query_ms_p95": lat[int(0.95 * (len(lat) - 1))],
        "queries": len(lat),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repos", nargs="+", default=["requests-2.32.3", "rich-13.7.1"])
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--child", nargs=2, metavar=("KIND", "TEXTS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), args.threads)
        return
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    WORK.mkdir(parents=True, exist_ok=True)
    rows = [bench_repo(r, args.threads) for r in args.repos]
    print("| repo | nodes | graph s | texts | raw run texts/s | ours texts/s | ours/raw | "
          "naive32 texts/s | peak RSS ours MB | peak RSS naive32 MB | keyword index s | "
          "full index s | index MB | query p50 ms | query p95 ms |")
    print("|---|" + "---:|" * 15)
    for r in rows:
        raw, ours, naive = r["runs"]["raw"], r["runs"]["ours"], r["runs"]["naive32"]
        print(f"| {r['repo']} | {r['nodes']} | {r['graph_s']:.1f} | {ours['texts']} | "
              f"{raw['rate']:.1f} | {ours['rate']:.1f} | {ours['rate'] / raw['rate']:.2f} | "
              f"{naive['rate']:.1f} | {ours['peak_rss_mb']:.0f} | {naive['peak_rss_mb']:.0f} | "
              f"{r['keyword_index_s']:.2f} | {r['full_update_s']:.1f} | "
              f"{r['index_bytes'] / 1e6:.2f} | {r['query_ms_p50']:.1f} | "
              f"{r['query_ms_p95']:.1f} |")
    print(json.dumps(rows, indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
