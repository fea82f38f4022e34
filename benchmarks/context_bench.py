"""End-to-end retrieval benchmark: `Workspace.query` on the shared dev sets.

Unlike retrieval_bench.py (SearchIndex alone), this runs the whole product path —
file ranking, synapse boost, the four-layer context — exactly as
`neuralmind query Q PATH --json --budget B` does (in process: the same call), and
reports per repo, per language and pooled: Recall@1/5/10 and MRR of the ranked files,
recall of the changed test files and of the changed non-test files, gold files missing
from the top 20, "in pack" (the share of gold files whose code appears in the
context's L3), context tokens (o200k_base), L3's share of them, and warm latency.

The ranked files are the answer's `files` when it has them, else its `hits` mapped to
files (a file counts once, at its first occurrence).

    python benchmarks/context_bench.py --sets symbols retrieval hist-test h2-test --budget 1000
    python benchmarks/context_bench.py --sets hist-dev h2-dev --budget 1000    # tuning splits
    python benchmarks/context_bench.py --sets hist-test --warm                 # replay history first
    python benchmarks/context_bench.py --sets symbols --no-learning            # synapse layer off
    python benchmarks/context_bench.py --sets h2-test --rows out.jsonl         # every row, for diffs
    NM_BENCH_WORK=/tmp/x python benchmarks/context_bench.py --embed-members none   # EMBED10

Protocols are those of /work/shared/bench/README.md, history/README.md and
history2/README.md: public sets index `<sdist_root>/<subdir>`, history indexes the
whole sdist, history2 the whole snapshot; cold = fresh index, no learned state; warm
replays each `history` row of the repo (open each gold file, then edit and save each)
as one session before the test queries, which never teach the engine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

BENCH = Path("/work/shared/bench")
DATA = Path("/work/bench-data")
WORK = Path(os.environ.get("NM_BENCH_WORK", "/tmp/nm-context-bench"))   # built workspaces
H2_REPOS = BENCH / "history2" / "repos.json"
LANG_NAMES = {"go": "Go", "rs": "Rust", "js": "JavaScript", "ts": "TypeScript", "py": "Python"}

# set -> (rows file, split to ask (None: all), public: index the package dir only)
SETS = {
    "symbols": (BENCH / "public" / "symbols.jsonl", None, True),
    "retrieval": (BENCH / "public" / "retrieval.jsonl", None, True),
    "hist-dev": (BENCH / "history" / "queries.jsonl", "history", False),   # tune here
    "hist-test": (BENCH / "history" / "queries.jsonl", "test", False),     # report here
    "h2-dev": (BENCH / "history2" / "queries.jsonl", "history", False),
    "h2-test": (BENCH / "history2" / "queries.jsonl", "test", False),
}
# L3 code blocks in a context: "`path:start-end`" followed by a fenced snippet
_L3_CODE = re.compile(r"`([^`\n]+):\d+-\d+`\n```")


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def languages() -> dict[str, str]:
    """repo -> language name (the history and public sets are Python)."""
    repos = json.loads(H2_REPOS.read_text(encoding="utf-8"))["repos"]
    return {r["name"]: LANG_NAMES.get(r["lang"], r["lang"]) for r in repos}


def rows_of(name: str) -> list[dict[str, Any]]:
    """The set's rows, normalised: question, gold, test gold, snapshot folder."""
    path, split, public = SETS[name]
    langs = languages()
    out = []
    for r in load(path):
        if split and r["split"] != split:
            continue
        if "sdist_root" in r:
            src = r["sdist_root"] + ("/" + r["subdir"] if public and r.get("subdir") else "")
            nontest = r.get("gold_nontest_files", r["gold_files"])
            tests = [g for g in r["gold_files"] if g not in nontest]
            lang = "Python"
        else:
            src = f"history2/repos/{r['repo']}"
            tests, lang = r["gold_test_files"], langs[r["repo"]]
        prefix = r["subdir"] + "/" if public and r.get("subdir") else ""
        out.append({"repo": r["repo"], "lang": lang, "src": src, "prefix": prefix,
                    "split": r.get("split"), "question": r.get("query") or r["question"],
                    "gold": r["gold_files"], "gold_tests": tests})
    return out


def workspace(src: str, learning: bool) -> Any:
    """A private copy of the snapshot (state is written into the root), built once."""
    from neuralmind.config import WorkspaceConfig
    from neuralmind.engine import Workspace

    full = DATA / src
    if not full.is_dir():
        sys.exit(f"missing {full}: run bash /work/shared/bench/fetch_sdists.sh {DATA}")
    dst = WORK / "base" / src.replace("/", "__")
    if not (dst / ".neuralmind").exists():
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(full, dst, ignore=shutil.ignore_patterns(".neuralmind"))
    Workspace(dst).build()  # incremental: re-embeds only what the current node text changed
    return Workspace(dst, WorkspaceConfig(learning=learning))


def replay_row(ws: Any, session: str, r: dict[str, Any], with_questions: bool) -> None:
    """One history commit as an editing session (its question asked first, if wanted):
    open each gold file, then edit and save each."""
    if with_questions:
        ws.synapses.editing_event(session, "session_start", "", query=r["question"])
        hits, _, _ = ws.search(r["question"], k=10)
        ws.synapses.record_query(session, r["question"], [h.node.id for h in hits])
    else:
        ws.synapses.editing_event(session, "session_start", "")
    for f in r["gold"]:
        ws.synapses.editing_event(session, "open", f)
    for f in r["gold"]:
        ws.synapses.editing_event(session, "edit", f)
        ws.synapses.editing_event(session, "save", f)
    ws.synapses.editing_event(session, "session_end", "")


def replay_history(ws: Any, rows: list[dict[str, Any]], with_questions: bool) -> None:
    for i, r in enumerate(rows):
        replay_row(ws, f"hist-{i}", r, with_questions)
    ws.synapses.flush()


def ranked_files(answer: dict[str, Any]) -> list[str]:
    """The answer's file ranking: `files` when present, else hits by first occurrence."""
    if answer.get("files"):
        return [f["file"] for f in answer["files"]]
    return list(dict.fromkeys(h["file"] for h in answer["hits"]))


def score(files: list[str], row: dict[str, Any], context: str) -> dict[str, Any]:
    """Metrics of one question (None where a metric does not apply to the row)."""
    g = set(row["gold"])
    tests = set(row["gold_tests"])
    nontest = g - tests
    first = next((i + 1 for i, p in enumerate(files) if p in g), None)
    m: dict[str, Any] = {f"R@{k}": len(g & set(files[:k])) / len(g) for k in (1, 5, 10)}
    m["MRR"] = 1 / first if first else 0.0
    top5, top20 = set(files[:5]), set(files[:20])
    m["test R@5"] = len(tests & top5) / len(tests) if tests else None
    m["nontest R@5"] = len(nontest & top5) / len(nontest) if nontest else None
    m["missed@20"] = len(g - top20)
    shown = {row["prefix"] + p for p in _L3_CODE.findall(context.split("## Search results")[-1])}
    m["in pack"] = len(g & shown) / len(g)
    return m


def run_set(name: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One result row per question (metrics plus repo, language, tokens and latency)."""
    from neuralmind.engine import Workspace

    rows = rows_of(name)
    all_rows = rows_of(name.replace("-test", "-dev")) if args.warm and "test" in name else []
    by_src: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_src[r["src"]].append(r)
    out = []
    for src, repo_rows in by_src.items():
        ws = workspace(src, not args.no_learning)
        if args.warm:
            # a fresh copy of the built state per run, so learned state never leaks between runs
            dst = WORK / ("warm-q" if args.with_questions else "warm") / src.replace("/", "__")
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(ws.root, dst)
            ws = Workspace(dst)
            replay_history(ws, [r for r in all_rows if r["src"] == src], args.with_questions)
        for r in repo_rows:
            t0 = time.perf_counter()
            result = ws.query(r["question"], budget=args.budget)
            latency = time.perf_counter() - t0
            answer = result.to_json()
            files = [r["prefix"] + f for f in ranked_files(answer)]
            m = score(files, r, result.context)
            m |= {"set": name, "repo": r["repo"], "lang": r["lang"], "question": r["question"],
                  "gold": r["gold"], "top": files[:10], "tokens": result.tokens,
                  "L3 share": result.layers.get("L3", 0) / max(1, result.tokens),
                  "ms": latency * 1000}
            out.append(m)
            if args.verbose and m["MRR"] < 1:
                print(f"  {r['repo']} MRR {m['MRR']:.2f} {r['question'][:70]!r} "
                      f"gold={r['gold']} top={files[:3]}", file=sys.stderr)
    return out


METRICS = ["R@1", "R@5", "R@10", "MRR", "test R@5", "nontest R@5", "in pack", "missed@20",
           "tokens", "L3 share"]


def summarize(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Means per repo, per language (when several) and pooled; missed@20 is a count."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in results:
        groups[m["repo"]].append(m)
    langs = sorted({m["lang"] for m in results})
    if len(langs) > 1:
        for m in results:
            groups[f"[{m['lang']}]"].append(m)
    groups["overall"] = results
    out: dict[str, dict[str, Any]] = {}
    for key, ms in groups.items():
        row: dict[str, Any] = {"n": len(ms)}
        for k in METRICS:
            vals = [m[k] for m in ms if m[k] is not None]
            if k == "missed@20":
                row[k] = sum(vals)
            else:
                row[k] = round(statistics.fmean(vals), 3) if vals else None
        lat = sorted(m["ms"] for m in ms)
        row["p95_ms"] = round(lat[min(len(lat) - 1, int(len(lat) * 0.95))], 1)
        out[key] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["symbols", "retrieval", "hist-test", "h2-test"],
                    choices=sorted(SETS))
    ap.add_argument("--budget", type=int, default=None, help="context budget (default: config)")
    ap.add_argument("--warm", action="store_true", help="replay the history split first")
    ap.add_argument("--with-questions", action="store_true",
                    help="warm variant that asks each history question before its session")
    ap.add_argument("--no-learning", action="store_true", help="synapse layer off")
    ap.add_argument("--embed-members", choices=["all", "documented", "none"],
                    help="which members get a vector in the builds (default: config "
                         "EMBED_MEMBERS); use a fresh NM_BENCH_WORK per choice")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rows", type=Path, help="write every question's result here (JSONL)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    args = ap.parse_args()
    args.warm = args.warm or args.with_questions
    if args.embed_members:      # the engine's default options, for every build below
        from neuralmind.index.node_text import DEFAULT_TEXT

        DEFAULT_TEXT.embed_members = args.embed_members
    results = {name: run_set(name, args) for name in args.sets}
    if args.rows:
        with args.rows.open("w", encoding="utf-8") as f:
            for rows in results.values():
                for m in rows:
                    f.write(json.dumps(m) + "\n")
    summaries = {name: summarize(rows) for name, rows in results.items()}
    if args.json:
        print(json.dumps(summaries, indent=1))
        return
    cols = ["n", *METRICS, "p95_ms"]
    for name, summary in summaries.items():
        print(f"\n**{name}** (budget {args.budget or 'default'})\n\n| repo | "
              + " | ".join(cols) + " |")
        print("|---|" + "---:|" * len(cols))
        for key, m in summary.items():
            print(f"| {key} | " + " | ".join("–" if m[c] is None else str(m[c]) for c in cols)
                  + " |")


if __name__ == "__main__":
    main()
