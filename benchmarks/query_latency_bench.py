"""Warm in-process query latency: `Workspace.query(Q, budget=1000)` p50 / p95 (issue #14).

Per repository and run, in a fresh process: open the workspace built by context_bench.py
(its cached copies), ask 5 warm-up questions (model loaded, first-use caches filled), then
time every other question of the set once (a question asked twice would find its vector
cached, so each run is its own process). `--digest` prints a SHA-256 over every answer's JSON (the context
included), so a latency lever can be shown to change no answer byte for byte.
`--profile` prints cProfile's top functions over the timed questions of the last run.

    /work/bin/heavy --quiet python benchmarks/query_latency_bench.py --runs 2 --digest
    python benchmarks/query_latency_bench.py --repos rich --profile 25
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import context_bench as cb  # noqa: E402

# name -> (set, repo as the set names it, questions timed)
REPOS = {
    "requests": ("retrieval", "psf/requests", 30),
    "rich": ("retrieval", "Textualize/rich", 30),
    "just": ("h2-test", "just", 40),
}
WARMUP = 5


def load_avg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def one_run(name: str, args: argparse.Namespace) -> None:
    """One pass over `name`'s questions in this process; prints its line."""
    from neuralmind.engine import Workspace

    set_name, repo, n = REPOS[name]
    rows = [r for r in cb.rows_of(set_name) if r["repo"] == repo]
    questions = [r["question"] for r in rows]
    warm, timed = questions[:WARMUP], questions[WARMUP:WARMUP + n]
    ws = Workspace(cb.workspace(rows[0]["src"], learning=True).root)   # nothing asked yet
    for q in warm:
        ws.query(q, budget=args.budget)
    profiler = cProfile.Profile() if args.profile else None
    digest = hashlib.sha256()
    times, cpu = [], []
    for q in timed:
        if profiler is not None:
            profiler.enable()
        t0, c0 = time.perf_counter(), time.process_time()
        result = ws.query(q, budget=args.budget)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)   # all threads: less load-dependent
        if profiler is not None:
            profiler.disable()
        digest.update(json.dumps(result.to_json(), sort_keys=True).encode())
    times.sort()
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    print(f"{name:9s} n {len(times)} p50 {statistics.median(times):6.1f} p95 {p95:6.1f} "
          f"max {times[-1]:6.1f} ms | CPU p50 {statistics.median(cpu):5.1f} ms "
          f"| load {load_avg()}"
          + (f" | answers {digest.hexdigest()[:16]}" if args.digest else ""), flush=True)
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", nargs="+", default=list(REPOS), choices=sorted(REPOS))
    ap.add_argument("--runs", type=int, default=2, help="fresh processes per repository")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--digest", action="store_true", help="hash every answer (byte identity)")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="cProfile the timed questions, print the top N functions")
    ap.add_argument("--one", choices=sorted(REPOS), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one_run(args.one, args)
        return
    passed = [a for a in sys.argv[1:] if a not in args.repos and a != "--repos"]
    for _ in range(args.runs):
        for name in args.repos:
            subprocess.run([sys.executable, __file__, "--one", name, *passed], check=True)


if __name__ == "__main__":
    main()
