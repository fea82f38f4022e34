"""Warm - cold retrieval when history is replayed as answer-then-edit sequences.

Cold: a fresh index, no learned state, every `test` question asked (`Workspace.query`, the
product path), files scored (MRR, R@1/5/10). Warm: on a fresh copy of the same index,
each `history` commit is replayed in order the way a server lives it:

1. its message is asked (`Workspace.query`); the answer is recorded with the files it
   returned (`Workspace.record_answer`), and the editor session records the question
   (`SynapseLayer.record_query`, as `neuralmind/context` does);
2. the commit's files are opened, edited and saved in that session (synapse events) and
   reported as used (`Workspace.note_use`), a minute after the answer;
3. the commit is made (`Workspace.commit_made` with its files, after the answer's window):
   the touched files are kept, the answer settles and teaches the synapse layer.

Then the test questions are asked again; they never teach (asking records nothing). The
variants, each from the same fresh copy:

- `warm-q`: the question memory alone (step 1 without recording the answer, steps 2-3
  without use): the +0.028 MRR of BENCHMARKS.md's history row;
- `warm-use`: the whole replay (question memory and learning from use);
- `use-only`: learning from use without the session's question memory.

Sets: `hist` (history/, three Python sdists) and `h2` (history2/, seven projects in five
languages). `--dev` replays the first 60% of each repo's history rows and asks the other
40% (tune here); without it, all history rows are replayed and the test rows asked.

    python benchmarks/use_bench.py --sets hist h2
    python benchmarks/use_bench.py --sets hist h2 --dev --unused-weight 0.5 --penalty 0.15
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
WORK = Path("/tmp/nm-use-bench")
STEP = 2000.0          # seconds between replayed commits: longer than an answer's window

SETS = {"hist": BENCH / "history" / "queries.jsonl",
        "h2": BENCH / "history2" / "queries.jsonl"}
VARIANTS = ("cold", "warm-q", "warm-use", "use-only")


def rows_of(name: str) -> dict[str, list[dict[str, Any]]]:
    """Rows per snapshot folder (relative to DATA), in file (chronological) order."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in SETS[name].read_text(encoding="utf-8").splitlines():
        if not line:
            continue
        r = json.loads(line)
        src = r["sdist_root"] if "sdist_root" in r else f"history2/repos/{r['repo']}"
        out[src].append({"repo": r["repo"], "split": r["split"], "question": r["query"],
                         "gold": r["gold_files"]})
    return out


def split(rows: list[dict[str, Any]], dev: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    history = [r for r in rows if r["split"] == "history"]
    if not dev:
        return history, [r for r in rows if r["split"] == "test"]
    cut = int(len(history) * 0.6)
    return history[:cut], history[cut:]


def base_copy(src: str) -> Path:
    """The snapshot copied and indexed once (graph, keyword index, vectors)."""
    from neuralmind.engine import Workspace

    full = DATA / src
    if not full.is_dir():
        sys.exit(f"missing {full}: see /work/shared/bench/README.md")
    dst = WORK / "base" / src.replace("/", "__")
    if not (dst / ".neuralmind" / "graph.db").exists():
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(full, dst, ignore=shutil.ignore_patterns(".neuralmind", ".git"))
    Workspace(dst).build()
    return dst


def fresh(base: Path, variant: str) -> Any:
    """A copy of the built index with no learned state."""
    from neuralmind.config import WorkspaceConfig
    from neuralmind.engine import Workspace

    dst = WORK / variant / base.name
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(base, dst)
    for name in ("synapses.db", "usage.db", "memory.db"):
        for suffix in ("", "-wal", "-shm"):
            (dst / ".neuralmind" / f"{name}{suffix}").unlink(missing_ok=True)
    return Workspace(dst, WorkspaceConfig(learning=True))


def replay(ws: Any, rows: list[dict[str, Any]], questions: bool, use: bool) -> None:
    """Synapse events happen now (as context_bench replays them: no decay between rows);
    answers and uses get times STEP apart in the past, each answer's window closed by its
    commit."""
    window = ws.config.use_window_seconds
    t0 = time.time() - (len(rows) + 1) * STEP
    for i, r in enumerate(rows):
        t, session = t0 + i * STEP, f"replay-{i}"
        ws.synapses.editing_event(session, "session_start", "")
        if questions or use:
            result = ws.query(r["question"])
            if questions:
                ws.synapses.record_query(session, r["question"], [h.node.id for h in result.hits])
            if use:
                ws.record_answer("context", session, r["question"], result.to_json(), now=t)
        for f in r["gold"]:
            ws.synapses.editing_event(session, "open", f)
        for f in r["gold"]:
            ws.synapses.editing_event(session, "edit", f)
            ws.synapses.editing_event(session, "save", f)
        ws.synapses.editing_event(session, "session_end", "")
        if use:
            ws.note_use([("open", f, t + 30) for f in r["gold"]]
                        + [("edit", f, t + 60) for f in r["gold"]])
            ws.commit_made(r["gold"], now=t + window + 1)
    ws.synapses.flush()


def score(files: list[str], gold: list[str]) -> dict[str, float]:
    g = set(gold)
    first = next((i + 1 for i, p in enumerate(files) if p in g), None)
    m = {f"R@{k}": len(g & set(files[:k])) / len(g) for k in (1, 5, 10)}
    m["MRR"] = 1 / first if first else 0.0
    return m


def ask(ws: Any, rows: list[dict[str, Any]]) -> list[dict[str, float]]:
    out = []
    for r in rows:
        result = ws.query(r["question"])
        answer = result.to_json()
        ranked = [f["file"] for f in answer["files"]] if answer.get("files") else \
            list(dict.fromkeys(h["file"] for h in answer["hits"]))
        out.append(score(ranked, r["gold"]) | {"repo": r["repo"]})
    return out


def run(name: str, args: argparse.Namespace) -> dict[str, dict[str, list[dict[str, float]]]]:
    results: dict[str, dict[str, list[dict[str, float]]]] = defaultdict(lambda: defaultdict(list))
    for src, rows in rows_of(name).items():
        history, asked = split(rows, args.dev)
        base = base_copy(src)
        for variant in args.variants:
            t0 = time.perf_counter()
            ws = fresh(base, variant)
            if variant != "cold":
                replay(ws, history, questions=variant in ("warm-q", "warm-use"),
                       use=variant in ("warm-use", "use-only"))
            results[variant][src] = ask(ws, asked)
            ws.synapses.close()
            print(f"  {name} {src} {variant}: {len(history)} replayed, {len(asked)} asked, "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return results


def mean(ms: list[dict[str, float]], key: str) -> float:
    return round(statistics.fmean(m[key] for m in ms), 3) if ms else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["hist", "h2"], choices=sorted(SETS))
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--dev", action="store_true", help="tune: replay 60%% of history, ask 40%%")
    ap.add_argument("--unused-weight", type=float, default=None,
                    help="override config.UNUSED_WEIGHT (tuning)")
    ap.add_argument("--penalty", type=float, default=None,
                    help="override config.QUESTION_PENALTY (tuning)")
    ap.add_argument("--json", default=None, help="also write every figure here")
    args = ap.parse_args()
    from neuralmind import config
    from neuralmind.context import retrieve

    if args.unused_weight is not None:      # read at call time
        config.UNUSED_WEIGHT = args.unused_weight
    if args.penalty is not None:
        retrieve.QUESTION_PENALTY = args.penalty
    report: dict[str, Any] = {}
    for name in args.sets:
        results = run(name, args)
        table: dict[str, dict[str, float]] = {}
        for variant in args.variants:
            pooled = [m for ms in results[variant].values() for m in ms]
            table[variant] = {"n": len(pooled)} | {k: mean(pooled, k)
                                                   for k in ("R@1", "R@5", "R@10", "MRR")}
            for src, ms in results[variant].items():
                table[variant][f"MRR {src.split('/')[-1]}"] = mean(ms, "MRR")
        report[name] = table
        print(f"\n**{name}** ({'dev: 60% of history replayed, 40% asked' if args.dev else 'test'})\n")
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
