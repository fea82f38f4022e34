"""End-to-end retrieval benchmark: `Workspace.query` on the shared dev sets.

Unlike retrieval_bench.py (SearchIndex alone), this runs the whole product path —
hybrid search, synapse boost, the four-layer context — and reports, per repo:
gold files found in the ranked hits, Recall@1/5/10, MRR and the context tokens
(o200k_base) of the default 1,500-token query.

    bash /work/shared/bench/fetch_sdists.sh /work/bench-data
    python benchmarks/context_bench.py --sets symbols retrieval hist-test
    python benchmarks/context_bench.py --sets retrieval hist-dev       # the dev sets (tuning)
    python benchmarks/context_bench.py --sets hist-test --warm          # replay history first
    python benchmarks/context_bench.py --sets hist-test --warm --with-questions
    python benchmarks/context_bench.py --sets symbols --no-learning     # synapse layer off

Protocols are those of /work/shared/bench/README.md and history/README.md:
public sets index `<sdist_root>/<subdir>`, history indexes the whole sdist; warm
replays each `history` row of the repo (open each gold file, then edit and save
each) as one session before the test queries, which never teach the engine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

BENCH = Path("/work/shared/bench")
DATA = Path("/work/bench-data")
WORK = Path("/tmp/nm-context-bench")

SETS = {
    "symbols": (BENCH / "public" / "symbols.jsonl", None, True),
    "retrieval": (BENCH / "public" / "retrieval.jsonl", None, True),
    "hist-dev": (BENCH / "history" / "queries.jsonl", "history", False),   # tune here
    "hist-test": (BENCH / "history" / "queries.jsonl", "test", False),     # confirm here
}


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def workspace(sdist_root: str, subdir: str, tag: str, learning: bool) -> Any:
    """A private copy of the snapshot (state is written into the root), built once."""
    from neuralmind.config import WorkspaceConfig
    from neuralmind.engine import Workspace

    src = DATA / sdist_root / subdir if subdir else DATA / sdist_root
    if not src.is_dir():
        sys.exit(f"missing {src}: run bash /work/shared/bench/fetch_sdists.sh {DATA}")
    dst = WORK / tag / sdist_root / (subdir or "_all")
    if not (dst / ".neuralmind").exists():
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)
    Workspace(dst).build()  # incremental: re-embeds only what the current node text changed
    return Workspace(dst, WorkspaceConfig(learning=learning))


def replay_history(ws: Any, rows: list[dict[str, Any]], with_questions: bool) -> None:
    for i, r in enumerate(rows):
        session = f"hist-{i}"
        if with_questions:
            ws.synapses.editing_event(session, "session_start", "", query=r["query"])
            hits, _, _ = ws.search(r["query"], k=10)
            ws.synapses.record_query(session, r["query"], [h.node.id for h in hits])
        else:
            ws.synapses.editing_event(session, "session_start", "")
        for f in r["gold_files"]:
            ws.synapses.editing_event(session, "open", f)
        for f in r["gold_files"]:
            ws.synapses.editing_event(session, "edit", f)
            ws.synapses.editing_event(session, "save", f)
        ws.synapses.editing_event(session, "session_end", "")
    ws.synapses.flush()


def score(files: list[str], gold: list[str]) -> dict[str, float]:
    g = set(gold)
    first = next((i + 1 for i, p in enumerate(files) if p in g), None)
    m = {f"R@{k}": len(g & set(files[:k])) / len(g) for k in (1, 5, 10)}
    m["MRR"] = 1 / first if first else 0.0
    m["found"] = float(bool(g & set(files)))
    return m


def run_set(name: str, args: argparse.Namespace) -> dict[str, list[dict[str, float]]]:
    path, split, package_only = SETS[name]
    rows = load(path)
    per: dict[str, list[dict[str, float]]] = defaultdict(list)
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_repo[r["repo"]].append(r)
    for repo, repo_rows in by_repo.items():
        subdir = repo_rows[0].get("subdir", "") if package_only else ""
        tag = "warm-q" if args.with_questions else ("warm" if args.warm else "cold")
        ws = workspace(repo_rows[0]["sdist_root"], subdir, "base", not args.no_learning)
        if args.warm:
            # a fresh copy of the built state per run, so learned state never leaks between runs
            dst = WORK / tag / repo_rows[0]["sdist_root"]
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(ws.root, dst)
            from neuralmind.engine import Workspace

            ws = Workspace(dst)
            replay_history(ws, [r for r in repo_rows if r["split"] == "history"],
                           args.with_questions)
        prefix = subdir + "/" if subdir else ""
        for r in repo_rows:
            if split and r["split"] != split:
                continue
            question = r.get("query") or r["question"]
            t0 = time.perf_counter()
            result = ws.query(question)
            latency = time.perf_counter() - t0
            files = list(dict.fromkeys(prefix + h.node.file for h in result.hits))
            m = score(files, r["gold_files"])
            m["tokens"] = result.tokens
            m["ms"] = latency * 1000
            per[repo].append(m)
            if args.verbose and m["MRR"] < 1:
                print(f"  {repo} MRR {m['MRR']:.2f} {question[:70]!r} gold={r['gold_files']} "
                      f"top={files[:3]}", file=sys.stderr)
    return per


def summarize(per: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float]]:
    out = {}
    everything = [m for ms in per.values() for m in ms]
    for repo, ms in [*per.items(), ("overall", everything)]:
        out[repo] = {"n": len(ms)} | {
            k: round(statistics.fmean(m[k] for m in ms), 3)
            for k in ("found", "R@1", "R@5", "R@10", "MRR", "tokens")}
        lat = sorted(m["ms"] for m in ms)
        out[repo]["p50_ms"] = round(lat[len(lat) // 2], 1)
        out[repo]["p95_ms"] = round(lat[min(len(lat) - 1, int(len(lat) * 0.95))], 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["symbols", "retrieval", "hist-test"],
                    choices=sorted(SETS))
    ap.add_argument("--warm", action="store_true", help="replay the history split first")
    ap.add_argument("--with-questions", action="store_true",
                    help="warm variant that asks each history question before its session")
    ap.add_argument("--no-learning", action="store_true", help="synapse layer off")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    args = ap.parse_args()
    args.warm = args.warm or args.with_questions
    results = {name: summarize(run_set(name, args)) for name in args.sets}
    if args.json:
        print(json.dumps(results, indent=1))
        return
    cols = ["n", "found", "R@1", "R@5", "R@10", "MRR", "tokens", "p50_ms", "p95_ms"]
    for name, summary in results.items():
        print(f"\n**{name}**\n\n| repo | " + " | ".join(cols) + " |")
        print("|---|" + "---:|" * len(cols))
        for repo, m in summary.items():
            print(f"| {repo} | " + " | ".join(str(m[c]) for c in cols) + " |")


if __name__ == "__main__":
    main()
