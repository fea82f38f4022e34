"""`neuralmind doctor`: the health of a workspace's state, each problem with its fix."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from neuralmind.cli.common import print_json, root_argument
from neuralmind.config import DOCTOR_PROBE_SAMPLE

if TYPE_CHECKING:
    from neuralmind.doctor import Check

MARKS = {"ok": "ok", "warning": "WARN", "error": "ERROR"}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("doctor", help="check the workspace's stores, model, server and hook; "
                                      "exit 1 when something is broken")
    p.add_argument("path", nargs="?", help="workspace folder (default: current folder)")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.add_argument("--no-model", action="store_true",
                   help="skip loading the embedding model (faster; implies --no-probe)")
    p.add_argument("--no-probe", action="store_true",
                   help="skip the retrieval probe (a few seconds of questions)")
    p.set_defaults(handler=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from neuralmind.doctor import ERROR, as_json, run_doctor, worst  # ~25 ms, for `doctor` alone

    root = root_argument(args.path)
    checks = run_doctor(root, model=not args.no_model)
    if not (args.no_model or args.no_probe) and not any(
            c.status == ERROR for c in checks) and (root / ".neuralmind" / "graph.db").exists():
        checks.append(probe_check(root))
    if args.json:
        print_json(as_json(checks))
    else:
        width = max(len(c.name) for c in checks)
        for c in checks:
            print(f"{MARKS[c.status]:<5}  {c.name:<{width}}  {c.message}")
            if c.fix and c.status != "ok":
                print(f"{'':<5}  {'':<{width}}  fix: {c.fix}")
        status = worst(checks)
        print(f"\n{root}: {'healthy' if status == 'ok' else status + 's found'}", file=sys.stderr)
    return 1 if any(c.status == ERROR for c in checks) else 0


def probe_check(root: Path) -> Check:
    """A small retrieval probe as one doctor check: is the index finding code by meaning?"""
    # the engine and the model, for the probe only
    from neuralmind.doctor import OK, WARNING, Check
    from neuralmind.engine import Workspace, probe

    try:
        out = probe.health(Workspace(root), DOCTOR_PROBE_SAMPLE)
    except Exception as e:  # a probe that breaks is a finding, not a crash
        return Check("retrieval probe", WARNING, f"the probe failed: {e}",
                     f"neuralmind -vv probe {root}")
    if not out["n"]:
        return Check("retrieval probe", OK, "no documented symbols to ask (nothing to judge)")
    if out["healthy"]:
        return Check("retrieval probe", OK, out["summary"])
    return Check("retrieval probe", WARNING,
                 f"{out['summary']}: retrieval looks unhealthy (MRR under "
                 f"{out['healthy_mrr']})", f"neuralmind build {root} && neuralmind probe {root}")
