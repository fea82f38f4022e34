#!/usr/bin/env python3
"""Missed-file warnings ("usually changes with X"): precision and recall on both history sets.

    python benchmarks/review_bench.py [--data /work/bench-data] [--bench /work/shared/bench]
                                      [--sets history,history2] [--splits 5] [--json OUT]

Protocol (issue #17, part 2). Per repository, a git repository is made from the snapshot
(one commit of the whole tree: more than COCHANGE_MAX_FILES files, so the miner skips it) and
each `history` row becomes one commit touching its gold files. For each multi-file `test`
commit, half of its files (the first len // 2 after a shuffle seeded by the commit id) are
changed in the working tree and `Workspace.review` runs, the real engine path of
`neuralmind review` (git diff, git log mining, the confidence rule); its warnings are scored
against the other half. Precision = right warnings / warnings, recall = missing files warned
about / missing files, pooled over the commits of a repository, of a set.

Variants: `commits` (primary: history only, as protocol (c)'s primary); `online` (each test
commit is committed after its review, so later reviews see it: how a repository really
accumulates history); `sessions` (no commit history: the history rows are replayed as editing
sessions, protocol (b), and the review reads the learned synapse counts). Also reported:
warnings on single-file test commits presented whole (every warning there is a false alarm),
the threshold curve, the same numbers over `--splits` different half-splits, the co-change
baseline of the sets' READMEs (files ranked by co-change count with the given files, ties by
popularity then path) at top 5 under the same protocol, and next-file Recall@5 of the review's
ranking under the READMEs' next-file protocol next to their co-change figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from neuralmind.config import REVIEW_MIN_CONFIDENCE
from neuralmind.engine import Workspace

THRESHOLDS = (0.4, 0.5, 0.6, 0.7, 0.8)
# next-file Recall@5 of co-change in the sets' READMEs (history: seed = next_given; history2:
# seed = the alphabetically first gold file)
README_COCHANGE_R5 = {"history": 0.665, "history2": 0.518}
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV})


def load(bench: Path, data: Path, which: str) -> dict[str, tuple[Path, list[dict[str, Any]]]]:
    """repo -> (snapshot folder, its rows in order)."""
    rows = [json.loads(x) for x in (bench / which / "queries.jsonl").read_text().splitlines() if x]
    out: dict[str, tuple[Path, list[dict[str, Any]]]] = {}
    for r in rows:
        src = (data / r["sdist_root"]) if which == "history" else (data / which / "repos" / r["repo"])
        out.setdefault(r["repo"], (src, []))[1].append(r)
    return out


def split(row: dict[str, Any], seed: int) -> tuple[list[str], list[str]]:
    """(given half, missing half) of a multi-file commit."""
    files = sorted(set(row["gold_files"]))
    random.Random(f"{row['commit']}:{seed}" if seed else row["commit"]).shuffle(files)
    k = len(files) // 2
    return files[:k], files[k:]


def touch(root: Path, files: list[str]) -> None:
    for f in files:
        with (root / f).open("a", encoding="utf-8") as fh:
            fh.write("\n")


def commit(root: Path, files: list[str], message: str) -> None:
    touch(root, files)
    git(root, "add", "--", *files)
    git(root, "commit", "-q", "--no-verify", "-m", message)


def make_repo(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".git"))
    git(dst, "init", "-q", "-b", "main")
    git(dst, "add", "-A")
    git(dst, "commit", "-q", "--no-verify", "-m", "snapshot")
    return dst


def replay_session(ws: Workspace, row: dict[str, Any], n: int) -> None:
    """Protocol (b): open each gold file in order, then edit and save each."""
    layer, session = ws.synapses, f"h{n}"
    layer.editing_event(session, "session_start")
    for f in row["gold_files"]:
        layer.editing_event(session, "open", f)
    for f in row["gold_files"]:
        layer.editing_event(session, "edit", f)
        layer.editing_event(session, "save", f)
    layer.editing_event(session, "session_end")


def candidates(ws: Workspace, root: Path, given: list[str]) -> list[tuple[str, float]]:
    """The review's warnings for `given` changed, at any confidence, best first."""
    touch(root, given)
    try:
        out = ws.review(min_confidence=0.0).to_json()
    finally:
        git(root, "checkout", "-q", "--", ".")
    return [(m["file"], m["confidence"]) for m in out["missing"]]


def cochange_rank(history: list[list[str]], given: list[str]) -> list[str]:
    """The READMEs' co-change baseline: every file that changed, by co-change count with the
    given files, ties by how often it changed at all (popularity fills the top 5 when few
    files changed with the given ones), then path."""
    together: Counter[str] = Counter()
    popular: Counter[str] = Counter()
    g = set(given)
    for files in history:
        popular.update(files)
        if g & set(files):
            together.update(f for f in files if f not in g)
    return sorted((f for f in popular if f not in g),
                  key=lambda f: (-together[f], -popular[f], f))


def run_repo(src: Path, rows: list[dict[str, Any]], variant: str, splits: int,
             which: str) -> dict[str, Any]:
    """Every scored item of one repository and variant."""
    hist = [r for r in rows if r["split"] == "history"]
    tests = [r for r in rows if r["split"] == "test"]
    with tempfile.TemporaryDirectory(prefix="review-bench-") as tmp:
        root = make_repo(src, Path(tmp) / "repo")
        ws = Workspace(root)
        for n, r in enumerate(hist):
            if variant == "sessions":
                replay_session(ws, r, n)
            else:
                commit(root, r["gold_files"], f"history {n}")
        seen = [sorted(set(r["gold_files"])) for r in hist]
        scored: list[dict[str, Any]] = []
        singles: list[list[tuple[str, float]]] = []
        next_file: list[float] = []
        next_base: list[float] = []
        baseline: list[tuple[int, int, int]] = []
        for i, r in enumerate(tests):
            gold = sorted(set(r["gold_files"]))
            if len(gold) < 2:
                singles.append(candidates(ws, root, gold))
            else:
                for s in range(splits):
                    given, missing = split(r, s)
                    found = candidates(ws, root, given)
                    scored.append({"split": s, "missing": missing, "found": found})
                    if s == 0:
                        top = cochange_rank(seen, given)[:5]
                        baseline.append((len(set(top) & set(missing)), len(top), len(missing)))
                seed = r.get("next_given") if which == "history" else gold[0]
                if seed:
                    rest = set(gold) - {seed}
                    ranked = [f for f, _ in candidates(ws, root, [seed])][:5]
                    next_file.append(len(rest & set(ranked)) / len(rest))
                    next_base.append(len(rest & set(cochange_rank(seen, [seed])[:5])) / len(rest))
            if variant == "online":
                commit(root, gold, f"test {i}")
                seen.append(gold)
        ws.close()
    return {"scored": scored, "singles": singles, "next_file": next_file, "baseline": baseline,
            "next_base": next_base}


def prf(items: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    warned = right = missing = 0
    for it in items:
        found = {f for f, c in it["found"] if c >= threshold}
        warned += len(found)
        right += len(found & set(it["missing"]))
        missing += len(it["missing"])
    return {"commits": len(items), "missing": missing, "warnings": warned, "right": right,
            "precision": round(right / warned, 3) if warned else None,
            "recall": round(right / missing, 3) if missing else None}


def summarise(per_repo: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"repos": {}, "pooled": {}}
    pooled: dict[str, list[Any]] = defaultdict(list)
    for repo, res in per_repo.items():
        first = [it for it in res["scored"] if it["split"] == 0]
        singles = res["singles"]
        out["repos"][repo] = {
            "default": prf(first, REVIEW_MIN_CONFIDENCE),
            "single_file_commits": len(singles),
            "single_file_warned": sum(1 for s in singles
                                      if any(c >= REVIEW_MIN_CONFIDENCE for _, c in s)),
            "next_file_r5": round(statistics.mean(res["next_file"]), 3) if res["next_file"] else None,
        }
        for k in ("scored", "singles", "next_file", "baseline", "next_base"):
            pooled[k] += res[k]
    first = [it for it in pooled["scored"] if it["split"] == 0]
    b = pooled["baseline"]
    out["pooled"] = {
        "default": prf(first, REVIEW_MIN_CONFIDENCE),
        "curve": {str(t): prf(first, t) for t in THRESHOLDS},
        "splits": [prf([it for it in pooled["scored"] if it["split"] == s], REVIEW_MIN_CONFIDENCE)
                   for s in sorted({it["split"] for it in pooled["scored"]})],
        "single_file_commits": len(pooled["singles"]),
        "single_file_warned": sum(1 for s in pooled["singles"]
                                  if any(c >= REVIEW_MIN_CONFIDENCE for _, c in s)),
        "cochange_top5": {"precision": round(sum(x[0] for x in b) / max(1, sum(x[1] for x in b)), 3),
                          "recall": round(sum(x[0] for x in b) / max(1, sum(x[2] for x in b)), 3)},
        "next_file_r5": round(statistics.mean(pooled["next_file"]), 3),
        "next_file_cochange_r5": round(statistics.mean(pooled["next_base"]), 3),
        "next_file_n": len(pooled["next_file"]),
    }
    return out


def fmt(p: dict[str, Any]) -> str:
    prec = "-" if p["precision"] is None else f"{p['precision']:.3f}"
    rec = "-" if p["recall"] is None else f"{p['recall']:.3f}"
    return f"P {prec} R {rec} ({p['right']}/{p['warnings']} warnings, {p['missing']} missing)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("/work/bench-data"))
    ap.add_argument("--bench", type=Path, default=Path("/work/shared/bench"))
    ap.add_argument("--sets", default="history,history2")
    ap.add_argument("--variants", default="commits,online,sessions")
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    load_avg = os.getloadavg()
    results: dict[str, Any] = {"threshold": REVIEW_MIN_CONFIDENCE, "load": load_avg}
    t0 = time.monotonic()
    for which in args.sets.split(","):
        repos = load(args.bench, args.data, which)
        for variant in args.variants.split(","):
            per_repo = {}
            for repo, (src, rows) in repos.items():
                per_repo[repo] = run_repo(src, rows, variant, args.splits, which)
                print(f"  {which}/{variant}/{repo}: {fmt(prf([it for it in per_repo[repo]['scored'] if it['split'] == 0], REVIEW_MIN_CONFIDENCE))}",
                      file=sys.stderr, flush=True)
            summary = summarise(per_repo)
            results[f"{which}/{variant}"] = summary
            pooled = summary["pooled"]
            print(f"\n## {which}, {variant} (threshold {REVIEW_MIN_CONFIDENCE})")
            for repo, r in summary["repos"].items():
                print(f"  {repo:18s} {fmt(r['default'])}; single-file commits warned "
                      f"{r['single_file_warned']}/{r['single_file_commits']}; "
                      f"next-file R@5 {r['next_file_r5']}")
            print(f"  {'pooled':18s} {fmt(pooled['default'])}; single-file commits warned "
                  f"{pooled['single_file_warned']}/{pooled['single_file_commits']}")
            splits = pooled["splits"]
            precs = [s["precision"] for s in splits if s["precision"] is not None]
            recs = [s["recall"] for s in splits if s["recall"] is not None]
            if precs:
                print(f"  over {len(splits)} half-splits: precision {min(precs):.3f}-{max(precs):.3f} "
                      f"(mean {statistics.mean(precs):.3f}), recall {min(recs):.3f}-{max(recs):.3f}")
            print("  curve: " + "; ".join(f"{t}: {fmt(p)}" for t, p in pooled["curve"].items()))
            b = pooled["cochange_top5"]
            print(f"  co-change baseline, top 5 of the same change sets: P {b['precision']:.3f} "
                  f"R {b['recall']:.3f}")
            print(f"  next-file R@5 of the review's ranking: {pooled['next_file_r5']:.3f} "
                  f"(n {pooled['next_file_n']}; co-change here "
                  f"{pooled['next_file_cochange_r5']:.3f}, README {README_COCHANGE_R5[which]})")
    print(f"\n[{time.monotonic() - t0:.0f} s; load average at start "
          f"{load_avg[0]:.1f} {load_avg[1]:.1f} {load_avg[2]:.1f}]")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
