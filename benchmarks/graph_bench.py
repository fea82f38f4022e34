"""Graph build benchmark: full build and one-file rebuilds of pinned sdists.

    python benchmarks/graph_bench.py [--repos requests,rich,django] [--data DIR]
                                     [--communities] [--pool-compare]

Each measurement runs in a fresh Python process (imports, graph load and all), which
reports its wall and CPU seconds (its own plus its pool workers') and its peak RSS
(its own, or a pool worker's if larger: getrusage RUSAGE_SELF and RUSAGE_CHILDREN).
Other work on this shared 2-core machine inflates wall times; CPU seconds are the
steadier figure, and the load average is printed. Workspaces are copies under a temp
dir, so the sdists stay pristine. Targets (issue 2): Django full build < 30 s and
< 600 MB RSS; one-file rebuild < 1 s; graph load < 1 s.

One-file rebuilds, each after a full build:
  touch      mtime changes, bytes do not: a full-walk `build()` (stat + hash, no parse)
  edit-body  a comment line appended: `build(changed=[f])`, re-parse, no re-resolve
  edit-call  a new function with a call: `build(changed=[f])`, re-parse, re-resolve the
             calls of the files concerned
  warm-*     the same edits in a process that already holds the graph (the LSP server's
             case: no interpreter start, no graph load); only the second build is timed
The wall/CPU columns cover the whole child process (interpreter start, imports, load);
"build s" is BuildReport.seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FETCH = Path("/work/shared/bench/fetch_sdists.sh")
REPOS = {
    # name: (sdist root dir, pip requirement, file edited in one-file rebuilds)
    "requests": ("requests-2.32.3", "requests==2.32.3", "src/requests/sessions.py"),
    "rich": ("rich-13.7.1", "rich==13.7.1", "rich/console.py"),
    "django": ("Django-5.1", "Django==5.1", "django/db/models/query.py"),
}

CHILD = r"""
import json, os, resource, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
from pathlib import Path
mode, root, target, pool_min = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
import neuralmind.graph.build as b
from neuralmind.config import WorkspaceConfig
if pool_min:
    b.POOL_MIN_FILES = pool_min
out = {}
if mode == "load":
    from neuralmind.graph.store import load_graph
    t = time.perf_counter(); c = time.process_time()
    g = load_graph(root / ".neuralmind")
    out["load_seconds"] = time.perf_counter() - t; out["load_cpu"] = time.process_time() - c
    out["nodes"] = len(g.nodes)
else:
    p = root / target
    if mode.startswith("warm-"):      # a long-lived process: the graph is already in memory
        b.GraphBuilder(root, WorkspaceConfig()).build(changed=[target])
        mode = "edit-" + mode[5:]
        t0 = time.perf_counter(); c0 = time.process_time()
    if mode == "touch":
        os.utime(p)
    elif mode == "edit-body":
        p.write_text(p.read_text(encoding="utf-8") + "\n# benchmark edit\n", encoding="utf-8")
    elif mode == "edit-call":
        p.write_text(p.read_text(encoding="utf-8")
                     + "\n\ndef _benchmark_added(x):\n    return sorted(x)\n", encoding="utf-8")
    changed = [target] if mode.startswith("edit") else None
    r = b.GraphBuilder(root, WorkspaceConfig()).build(changed=changed)
    out.update(files=sum(r.files_by_language.values()), nodes=r.nodes,
               edges=r.edges_resolved + r.edges_heuristic, edges_resolved=r.edges_resolved,
               edges_heuristic=r.edges_heuristic, communities=r.communities,
               reextracted=len(r.reextracted), build_seconds=r.seconds,
               skipped={k: v["count"] for k, v in r.skipped.items()})
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
out.update(seconds=time.perf_counter() - t0,
           cpu=time.process_time() - c0 + kids.ru_utime + kids.ru_stime,
           rss_mb=max(me.ru_maxrss, kids.ru_maxrss) / 1024)
print(json.dumps(out))
"""


def ensure_data(data: Path, names: list[str]) -> None:
    """Fetch missing sdists with pip (pinned versions) and unpack them."""
    data.mkdir(parents=True, exist_ok=True)
    for name in names:
        root, req, _ = REPOS[name]
        if (data / root).is_dir():
            continue
        if name != "django" and FETCH.exists():
            subprocess.run(["bash", str(FETCH), str(data)], check=True)
            continue
        sdists = data / "_sdists"
        sdists.mkdir(exist_ok=True)
        archive = next(iter(sdists.glob(f"{root}.tar.gz")), None)
        if archive is None:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                            "--no-binary", ":all:", req, "-d", str(sdists)], check=True)
            archive = next(iter(sdists.glob(f"{root}.tar.gz")))
        with tarfile.open(archive) as tf:
            tf.extractall(data, filter="data")


def child(mode: str, root: Path, target: str, pool_min: int = 0) -> dict[str, Any]:
    env = {**os.environ, "NEURALMIND_LOG": "error"}
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, str(root), target, str(pool_min)],
                          capture_output=True, text=True, env=env, cwd=str(HERE.parent))
    if proc.returncode != 0:
        raise SystemExit(f"{mode} on {root} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_repo(name: str, data: Path, tmp: Path, pool_min: int = 0) -> dict[str, Any]:
    src_root, _, target = REPOS[name]
    ws = tmp / f"{name}-{pool_min}"
    shutil.copytree(data / src_root, ws, symlinks=True)
    res = {"full": child("full", ws, target, pool_min), "load": child("load", ws, target)}
    for mode in ("touch", "edit-body", "edit-call", "warm-body", "warm-call"):
        res[mode] = child(mode, ws, target, pool_min)
    return res


def communities_compare(ws: Path) -> None:
    """Our Louvain vs networkx on the stored graph, file level and symbol level."""
    import time

    from neuralmind.graph.communities import KIND_WEIGHTS, file_adjacency, louvain, modularity
    from neuralmind.graph.store import load_graph

    try:
        import networkx as nx
        from networkx.algorithms.community import louvain_communities
    except ImportError:
        nx = None
    g = load_graph(ws / ".neuralmind")
    files = sorted(g.files)
    ids = sorted(g.nodes)
    idx = {n: i for i, n in enumerate(ids)}
    sym: list[dict[int, float]] = [{} for _ in ids]
    weights = {**KIND_WEIGHTS, "contains": 1.0}
    for e in g.edges:
        i, j, w = idx.get(e.source), idx.get(e.target), weights.get(e.kind)
        if i is None or j is None or w is None or i == j:
            continue
        w *= e.count if e.resolved else 0.5 * e.count
        sym[i][j] = sym[i].get(j, 0.0) + w
        sym[j][i] = sym[j].get(i, 0.0) + w
    for level, adj in (("file", file_adjacency(files, g.nodes, g.edges)), ("symbol", sym)):
        c = time.process_time()
        ours = louvain(adj)
        t_ours = time.process_time() - c
        line = (f"  {level:<6} n={len(adj):<6} ours: {len(set(ours))} groups, "
                f"Q={modularity(adj, ours):.4f}, {t_ours:.2f} s CPU")
        if nx is not None:
            G = nx.Graph()
            G.add_nodes_from(range(len(adj)))
            G.add_weighted_edges_from((i, j, w) for i, nb in enumerate(adj)
                                      for j, w in nb.items() if i < j)
            c = time.process_time()
            sets = louvain_communities(G, weight="weight", seed=42)
            t_nx = time.process_time() - c
            theirs = [0] * len(adj)
            for k, members in enumerate(sets):
                for i in members:
                    theirs[i] = k
            line += (f" | networkx: {len(sets)} groups, Q={modularity(adj, theirs):.4f}, "
                     f"{t_nx:.2f} s CPU")
        if level == "symbol":
            per_file: dict[str, set[int]] = {}
            for nid, cid in zip(ids, ours, strict=True):
                per_file.setdefault(g.nodes[nid].file, set()).add(cid)
            split = sum(1 for v in per_file.values() if len(v) > 1)
            line += f" | files split: {split}/{len(per_file)}"
        print(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repos", default="requests,rich,django")
    ap.add_argument("--data", default="/work/bench-data")
    ap.add_argument("--communities", action="store_true", help="compare Louvain with networkx")
    ap.add_argument("--pool-compare", action="store_true",
                    help="also run the full builds with extraction forced in-process")
    args = ap.parse_args()
    names = [n.strip().lower() for n in args.repos.split(",") if n.strip()]
    data = Path(args.data)
    ensure_data(data, names)
    print(f"graph benchmark, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="nm-graph-bench-") as t:
        tmp = Path(t)
        for name in names:
            r = bench_repo(name, data, tmp)
            f = r["full"]
            print(f"\n{name}: {f['files']} files, {f['nodes']} nodes, {f['edges']} edges "
                  f"({f['edges_resolved']} resolved, {f['edges_heuristic']} heuristic), "
                  f"{f['communities']} communities, skipped {f['skipped']}")
            print(f"  {'run':<10} {'wall s':>7} {'cpu s':>7} {'build s':>8} {'RSS MB':>7}  parsed")
            for mode in ("full", "touch", "edit-body", "edit-call", "warm-body", "warm-call"):
                m = r[mode]
                print(f"  {mode:<10} {m['seconds']:7.2f} {m['cpu']:7.2f} "
                      f"{m['build_seconds']:8.2f} {m['rss_mb']:7.0f}  {m['reextracted']}")
            ld = r["load"]
            print(f"  {'load':<10} {ld['load_seconds']:7.2f} {ld['load_cpu']:7.2f} "
                  f"{'':>8} {ld['rss_mb']:7.0f}  (load_graph only)")
            if args.pool_compare:
                s = bench_repo(name, data, tmp, pool_min=10**9)["full"]
                print(f"  serial     {s['seconds']:7.2f} {s['cpu']:7.2f} "
                      f"{s['build_seconds']:8.2f} {s['rss_mb']:7.0f}  (no process pool)")
            if args.communities:
                communities_compare(tmp / f"{name}-0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
