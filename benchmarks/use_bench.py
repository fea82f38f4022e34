"""Warm - cold retrieval when history is replayed as answer-then-edit sequences.

The sets, rows, index copies and scoring are context_bench.py's (`hist-*`: history/, three
Python sdists; `h2-*`: history2/, seven projects in five languages; files ranked by
`Workspace.query`, the product path). Cold: a fresh index, no learned state. Warm: on a
fresh copy of the same index, each history commit is replayed in order the way a server
lives it:

1. its message is asked (`Workspace.query`) and the answer recorded with the files it
   returned (`Workspace.use.record`);
2. the editor session asks it too and opens, edits and saves the commit's files
   (context_bench's `replay_row` with its question: what `neuralmind/context` followed
   by editing teaches the question memory), and the server credits them to the answer
   (`Workspace.use.note`, a minute after it);
3. the commit is made once the answer's window closed (`Workspace.use.commit_made` with its
   files): the touched files were kept, the answer settles and teaches the synapse layer.

Then the asked questions are scored; asking never teaches. Variants, each from the same
fresh copy: `warm-q` (steps 2 only: the question memory, BENCHMARKS.md's "history
replayed with each question before its session"), `warm-use` (1-3), `use-only` (1-3
without the question in the session: learning from use alone).

    python benchmarks/use_bench.py                          # hist-test h2-test: history replayed
    python benchmarks/use_bench.py --dev                    # tune: replay 60% of history, ask 40%
    python benchmarks/use_bench.py --dev --unused-weight 0.5 --question-boost 0.1

NM_BENCH_WORK says where context_bench's built workspaces are; NM_USE_BENCH_WORK where this
run copies them per variant (default /tmp/nm-use-bench): give each concurrent run its own.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import context_bench as cb

WORK = Path(os.environ.get("NM_USE_BENCH_WORK", "/tmp/nm-use-bench"))   # copies per variant
STEP = 2000.0          # seconds between replayed commits: longer than an answer's window
VARIANTS = ("cold", "warm-q", "warm-use", "use-only")
SETS = {"hist": ("hist-dev", "hist-test"), "h2": ("h2-dev", "h2-test")}


def split(name: str, dev: bool) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Per snapshot: (rows to replay, rows to ask)."""
    history_rows, test_rows = (cb.rows_of(n) for n in SETS[name])
    out: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for src in dict.fromkeys(r["src"] for r in history_rows):
        history = [r for r in history_rows if r["src"] == src]
        if dev:
            cut = int(len(history) * 0.6)
            out[src] = history[:cut], history[cut:]
        else:
            out[src] = history, [r for r in test_rows if r["src"] == src]
    return out


def fresh(src: str, variant: str) -> Any:
    """A copy of the snapshot's built index with no learned state."""
    from neuralmind.engine import Workspace

    base = cb.workspace(src, learning=True).root
    dst = WORK / variant / base.name
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(base, dst)
    for name in ("synapses.db", "usage.db"):
        for suffix in ("", "-wal", "-shm"):
            (dst / ".neuralmind" / f"{name}{suffix}").unlink(missing_ok=True)
    return Workspace(dst)


def replay(ws: Any, rows: list[dict[str, Any]], questions: bool, use: bool) -> None:
    """Synapse events happen now (as context_bench replays them); answers and uses get
    times STEP apart in the past, each answer's window closed by its commit."""
    window = ws.config.use_window_seconds
    t0 = time.time() - (len(rows) + 1) * STEP
    for i, r in enumerate(rows):
        t, session = t0 + i * STEP, f"hist-{i}"
        if use:
            answer = ws.query(r["question"]).to_json()
            ws.use.record("context", session, r["question"], answer, now=t)
        cb.replay_row(ws, session, r, with_questions=questions)
        if use:
            ws.use.note([("open", f, t + 30) for f in r["gold"]]
                        + [("edit", f, t + 60) for f in r["gold"]])
            ws.use.commit_made(r["gold"], now=t + window + 1)
    ws.synapses.flush()


def ask(ws: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        result = ws.query(r["question"])
        files = [r["prefix"] + f for f in cb.ranked_files(result.to_json())]
        out.append(cb.score(files, r, result.context) | {"repo": r["repo"], "lang": r["lang"]})
    return out


def run(name: str, args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for src, (history, asked) in split(name, args.dev).items():
        for variant in args.variants:
            t0 = time.perf_counter()
            ws = fresh(src, variant)
            if variant != "cold":
                replay(ws, history, questions=variant in ("warm-q", "warm-use"),
                       use=variant in ("warm-use", "use-only"))
            results[variant] += ask(ws, asked)
            ws.synapses.close()
            print(f"  {name} {src} {variant}: {len(history)} replayed, {len(asked)} asked, "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return results


def mean(ms: list[dict[str, Any]], key: str) -> float:
    return round(statistics.fmean(m[key] for m in ms), 3) if ms else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=sorted(SETS))
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--dev", action="store_true", help="tune: replay 60%% of history, ask 40%%")
    ap.add_argument("--unused-weight", type=float, default=None,
                    help="override config.UNUSED_WEIGHT (tuning)")
    ap.add_argument("--question-boost", type=float, default=None,
                    help="override config.QUESTION_BOOST (tuning)")
    ap.add_argument("--question-boost-learned", type=float, default=None,
                    help="override config.QUESTION_BOOST_LEARNED (tuning)")
    ap.add_argument("--unused-all", action="store_true",
                    help="every unused top file counts, not only those above the first used")
    ap.add_argument("--json", default=None, help="also write every figure here")
    args = ap.parse_args()
    from neuralmind import config
    from neuralmind.context import retrieve

    cb.WORK = WORK                          # index copies of our own (context_bench's layout)
    if args.unused_weight is not None:      # read at call time
        config.UNUSED_WEIGHT = args.unused_weight
    if args.question_boost is not None:
        retrieve.QUESTION_BOOST = args.question_boost
    if args.question_boost_learned is not None:
        retrieve.QUESTION_BOOST_LEARNED = args.question_boost_learned
    if args.unused_all:
        config.USE_UNUSED_ABOVE_USED = False
    report: dict[str, Any] = {}
    for name in args.sets:
        results = run(name, args)
        table: dict[str, dict[str, Any]] = {}
        for variant in args.variants:
            rows = results[variant]
            table[variant] = {"n": len(rows)} | {k: mean(rows, k)
                                                 for k in ("R@1", "R@5", "R@10", "MRR")}
            for group in sorted({m["repo"] for m in rows} | {f"[{m['lang']}]" for m in rows}):
                part = [m for m in rows if group in (m["repo"], f"[{m['lang']}]")]
                table[variant][f"MRR {group}"] = mean(part, "MRR")
        report[name] = table
        label = "dev: 60% of history replayed, 40% asked" if args.dev else "test rows"
        print(f"\n**{name}** ({label}; QUESTION_BOOST {retrieve.QUESTION_BOOST} / learned "
              f"{retrieve.QUESTION_BOOST_LEARNED}, "
              f"UNUSED_WEIGHT {config.UNUSED_WEIGHT})\n")
        print("| variant | n | R@1 | R@5 | R@10 | MRR | warm - cold MRR |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        cold = table.get("cold", {}).get("MRR")
        for variant, m in table.items():
            delta = f"{m['MRR'] - cold:+.3f}" if cold is not None and variant != "cold" else ""
            print(f"| {variant} | {m['n']} | {m['R@1']} | {m['R@5']} | {m['R@10']} | {m['MRR']} "
                  f"| {delta} |")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
