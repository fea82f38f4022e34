"""Why gold files are missed: each gold file's rank in the engine's three file lists
(symbols, whole-file keywords, meaning) and in the final ranking, grouped into classes.

A gold file missed at 5 falls in one class per line of the table: whether it is a test
file (and whether the pairing knows its source), the best rank any one list gave it
(<= 5: the fusion or a prior pushed it down; <= 20: the evidence is there but weak;
none in 20: no list finds it), and on history2 whether the question names an identifier
of the file (`query_mentions_gold`). Uses rank_lab's cached workspaces and signals.

    python benchmarks/rank_failures.py                  # hist-test and h2-test
    python benchmarks/rank_failures.py --sets h2-dev --json /tmp/fail.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import context_bench as cb  # noqa: E402
import rank_lab as rl  # noqa: E402
import ranking_variants as rv  # noqa: E402


def _rank(files: list[str], f: str) -> int | None:
    files = list(dict.fromkeys(files))
    return files.index(f) + 1 if f in files else None


def gold_rows(lab: rl.Lab) -> list[dict[str, Any]]:
    """One row per (question, gold file): its ranks, test-ness, pairing and mention flag."""
    from neuralmind.index.pairing import is_test_path

    mentions = {(r["repo"], r["query"]): r["query_mentions_gold"]
                for r in cb.load(cb.BENCH / "history2" / "queries.jsonl")}
    fn, defaults, _ = rv.VARIANTS["product"]
    out = []
    for q, s in zip(lab.qs, lab.sig, strict=True):
        repo = lab.repos[q.src]
        final = fn(repo, q, s, defaults)
        lists, pairs = s.extra["product_lists"]["lists"], s.extra["product_lists"]["pairs"]
        for g in q.gold:
            f = g[len(q.prefix):]
            ranks = {n: _rank(lists[n], f) for n in ("symbols", "keywords", "meaning")}
            out.append({"set": q.set, "repo": q.repo, "question": q.text[:160], "gold": f,
                        "test": g in q.gold_tests or is_test_path(f), "paired": f in pairs,
                        "final": _rank(final, f), **ranks,
                        "mentions": mentions.get((q.repo, q.text))})
    return out


def failure_class(r: dict[str, Any]) -> str:
    best = min([v for v in (r["symbols"], r["keywords"], r["meaning"]) if v] or [999])
    parts = ["test (paired)" if r["test"] and r["paired"] else "test" if r["test"] else "source",
             "a list <= 5" if best <= 5 else "a list <= 20" if best <= 20 else "no list in 20"]
    if r["mentions"]:
        parts.append("named in question")
    return ", ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["hist-test", "h2-test"])
    ap.add_argument("--json", type=Path, help="write every gold row here")
    args = ap.parse_args()
    rows = gold_rows(rl.Lab(args.sets))
    if args.json:
        args.json.write_text(json.dumps(rows))
    for s in args.sets:
        mine = [r for r in rows if r["set"] == s]
        miss5 = [r for r in mine if not r["final"] or r["final"] > 5]
        miss20 = sum(1 for r in mine if not r["final"] or r["final"] > 20)
        print(f"\n{s}: {len(mine)} gold files, missed at 5: {len(miss5)}, at 20: {miss20}")
        for cls, n in Counter(failure_class(r) for r in miss5).most_common():
            print(f"  {n:4}  {cls}")
        print("  by repo:", dict(Counter(r["repo"] for r in miss5).most_common()))


if __name__ == "__main__":
    main()
