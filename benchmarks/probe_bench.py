#!/usr/bin/env python3
"""The label-free probe (`neuralmind probe`) over this repository and the bench sdists.

    python benchmarks/probe_bench.py [--data /work/bench-data] [--work /tmp/probe-bench]
                                     [--sample 200] [--repos a,b] [--json]

Each sdist is copied to --work (the shared data stays untouched) and indexed there once
(reused on the next run); this checkout is probed in place (`neuralmind build` first).
Prints MRR and Recall@5 over the sample, by kind, and the weakest directory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from neuralmind.engine import Workspace
from neuralmind.engine.probe import report, run_probe

ROOT = Path(__file__).resolve().parents[1]
SDISTS = ["requests-2.32.3", "click-8.1.7", "flask-3.0.3", "rich-13.7.1", "Jinja2-2.9",
          "Werkzeug-2.0.0", "starlette-0.17.0"]


def prepared(name: str, data: Path, work: Path) -> Path:
    """The repository to probe, indexed."""
    if name == "neuralmind":
        root = ROOT
    else:
        root = work / name
        if not root.exists():
            shutil.copytree(data / name, root, ignore=shutil.ignore_patterns(".neuralmind"))
    Workspace(root).build()
    return root


def probe(name: str, root: Path, size: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    out = report(run_probe(Workspace(root), size), size)
    worst = (out["blind_spots"]["directories"] or [{}])[0]
    return {"repo": name, "n": out["n"], "mrr": out["mrr"], "recall_at_5": out["recall_at_5"],
            "by_kind": out["by_kind"], "by_language": out["by_language"],
            "weakest_directory": worst, "seconds": round(time.perf_counter() - t0, 1),
            "load": f"{os.getloadavg()[0]:.1f}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("/work/bench-data"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/probe-bench"))
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--repos", default=",".join(["neuralmind", *SDISTS]))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.repos.split(","):
        root = prepared(name.strip(), args.data, args.work)
        rows.append(probe(name.strip(), root, args.sample))
        if not args.json:
            r = rows[-1]
            w = r["weakest_directory"]
            print(f"{r['repo']:<18} n={r['n']:<4} MRR {r['mrr']:.3f}  R@5 {r['recall_at_5']:.3f}  "
                  f"weakest {w.get('directory', '-')} (R@5 {w.get('recall_at_5', 0):.2f}, "
                  f"n={w.get('n', 0)})  {r['seconds']} s, load {r['load']}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        n = sum(r["n"] for r in rows)
        mrr = sum(r["mrr"] * r["n"] for r in rows) / n if n else 0.0
        r5 = sum(r["recall_at_5"] * r["n"] for r in rows) / n if n else 0.0
        print(f"{'pooled':<18} n={n:<4} MRR {mrr:.3f}  R@5 {r5:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
