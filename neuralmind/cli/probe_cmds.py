"""`neuralmind probe [PATH] [--sample N] [--json]`: the label-free retrieval self-test."""

from __future__ import annotations

import argparse
from typing import Any

from neuralmind.cli.common import open_workspace, print_json
from neuralmind.config import PROBE_K, PROBE_SAMPLE
from neuralmind.errors import InvalidArgument


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("probe", help="self-test retrieval: ask each sampled symbol's docstring "
                                     "(without its name) and report MRR, Recall@5, blind spots")
    p.add_argument("path", nargs="?", help="workspace folder (default: current folder)")
    p.add_argument("--sample", type=int, default=PROBE_SAMPLE, metavar="N",
                   help=f"documented symbols to ask (default {PROBE_SAMPLE})")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=cmd_probe)


def _groups(groups: dict[str, dict[str, Any]]) -> str:
    return "  ".join(f"{name} {g['mrr']:.2f}/{g['recall_at_5']:.2f} ({g['n']})"
                     for name, g in groups.items())


def cmd_probe(args: argparse.Namespace) -> int:
    from neuralmind.engine import probe  # the engine and the model (~1 s), for `probe` alone

    if args.sample < 1:
        raise InvalidArgument("--sample must be at least 1")
    ws = open_workspace(args.path)
    if not ws.graph.files:
        raise InvalidArgument(f"{ws.root} has no index: run `neuralmind build` first")
    out = probe.report(probe.run_probe(ws, args.sample), args.sample)
    if args.json:
        print_json({"root": str(ws.root), **out})
        return 0
    print(f"probe: {out['n']} documented symbols of {ws.root}; question = the docstring "
          f"without the symbol's name")
    print(f"MRR {out['mrr']:.3f}   Recall@5 {out['recall_at_5']:.3f}   "
          f"({'healthy' if out['healthy'] else 'UNHEALTHY'}: MRR >= {out['healthy_mrr']})")
    print(f"by kind (MRR/R@5, n):      {_groups(out['by_kind'])}")
    print(f"by language (MRR/R@5, n):  {_groups(out['by_language'])}")
    for key, label in (("directories", "directory"), ("communities", "community")):
        rows = out["blind_spots"][key]
        if rows:
            print(f"blind spots ({key}):")
            for r in rows:
                print(f"  R@5 {r['recall_at_5']:.2f}  MRR {r['mrr']:.2f}  ({r['n']})  {r[label]}")
    if out["missed"]:
        print(f"not in the top {PROBE_K}:")
        for m in out["missed"]:
            print(f"  {m['node']}: {m['question'][:100]}")
    return 0
