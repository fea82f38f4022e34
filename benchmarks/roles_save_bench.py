"""The first context answer after a structural save, in process (issues #21, #17).

    python benchmarks/roles_save_bench.py --repo W --file REL [--question Q] [--rounds 2]
                                          [--budget 1000] [--check]

`W` is an indexed workspace (`neuralmind build --no-embed` is enough) that this run may
write into: use a copy. Opens it as the server does (`open_for_serving`, `warm_up`), asks
one context answer (`Workspace.query`), then per round appends a new function to `REL`
(Python or C, by its suffix), `update_files([REL])` and asks the question again. Prints
per step the wall time of the save and of the answer, and how much of the answer was L1's
roles (`summary.community_roles`, timed by wrapping it), with the load average.

`--check` also computes each generation's roles the old way (`summary.roles_by_walk`,
one Python pass over every edge) and fails if they differ: the figures are then for the
same answers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from neuralmind.config import WorkspaceConfig
from neuralmind.context import summary
from neuralmind.engine.workspace import Workspace

spent: list[float] = []


def timed_roles(original: Any) -> Any:
    def wrapper(graph: Any) -> Any:
        t = time.perf_counter()
        try:
            return original(graph)
        finally:
            spent.append(time.perf_counter() - t)
    return wrapper


def added(rel: str, k: int) -> str:
    if rel.endswith((".c", ".h")):
        return f"\nint roles_bench_added_{k}(int x)\n{{\n\treturn x + {k};\n}}\n"
    return f"\n\ndef roles_bench_added_{k}(x):\n    return x + {k}\n"


def answer(ws: Workspace, question: str, budget: int) -> tuple[float, float]:
    spent.clear()
    t = time.perf_counter()
    ws.query(question, budget=budget)
    return time.perf_counter() - t, sum(spent)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--question", default="page fault")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    summary.community_roles = timed_roles(summary.community_roles)
    load = os.getloadavg()
    t = time.perf_counter()
    ws = Workspace.open_for_serving(args.repo, WorkspaceConfig())
    ws.warm_up()
    print(f"open + warm-up {time.perf_counter() - t:.1f} s, {len(ws.graph.nodes)} nodes, "
          f"{len(ws.graph.edges)} edges, {len(ws.graph.communities)} communities", flush=True)
    wall, roles = answer(ws, args.question, args.budget)
    print(f"first answer {wall * 1000:.0f} ms (roles {roles * 1000:.0f} ms)", flush=True)
    path = args.repo / args.file
    failed = False
    for k in range(1, args.rounds + 1):
        with path.open("a", encoding="utf-8") as f:
            f.write(added(args.file, k))
        t = time.perf_counter()
        ws.update_files([args.file])
        save = time.perf_counter() - t
        wall, roles = answer(ws, args.question, args.budget)
        print(f"round {k}: save {save * 1000:.0f} ms, answer {wall * 1000:.0f} ms "
              f"(roles {roles * 1000:.0f} ms)", flush=True)
        if args.check:
            held = ws.graph.roles_cache["roles"]
            t = time.perf_counter()
            plain = summary.roles_by_walk(ws.graph)
            same = plain == held
            failed |= not same
            print(f"  roles by walk {(time.perf_counter() - t) * 1000:.0f} ms, "
                  f"{'equal' if same else 'DIFFERENT'}", flush=True)
    print(f"load {load[0]:.2f} -> {os.getloadavg()[0]:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
