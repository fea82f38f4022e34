"""`neuralmind query | wakeup | search`: the retrieval commands."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from neuralmind.cli.common import Progress, open_workspace, print_json
from neuralmind.engine.activity import publish_query

if TYPE_CHECKING:
    from neuralmind.engine import Workspace


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("query", help="the context a question needs, within a token budget")
    p.add_argument("question")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--budget", type=int, default=None, help="total tokens (default 1500)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--explain", action="store_true", help="why each piece is in the context")
    p.set_defaults(handler=cmd_query)

    p = sub.add_parser("wakeup", help="L0 + L1: the pack for the start of a session")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_wakeup)

    p = sub.add_parser("search", help="ranked symbols for a question")
    p.add_argument("question")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_search)


def _built_workspace(path: str) -> Workspace:
    """The workspace of PATH, built first when it never was (so `query` just works)."""
    ws = open_workspace(path)
    progress = Progress()
    try:
        ws.ensure_built(progress=progress)
    finally:
        progress.finish()
    return ws


def _mode_notice(mode: str, notice: str) -> None:
    if notice:
        print(f"[neuralmind] {notice}", file=sys.stderr)
    if mode != "hybrid":
        print(f"[neuralmind] search mode: {mode}", file=sys.stderr)


def cmd_query(args: argparse.Namespace) -> int:
    ws = _built_workspace(args.path)
    result = ws.query(args.question, budget=args.budget, explain=args.explain)
    publish_query(ws.graph, args.question, result, "cli")
    _mode_notice(result.mode, result.notice)
    if args.json:
        print_json(result.to_json())
        return 0
    print(result.context)
    layers = ", ".join(f"{k} {v}" for k, v in result.layers.items())
    print(f"\n[{result.tokens} tokens: {layers}; mode {result.mode}]", file=sys.stderr)
    if args.explain:
        print("\n# Why this context", file=sys.stderr)
        for line in result.explain:
            print(line, file=sys.stderr)
    return 0


def cmd_wakeup(args: argparse.Namespace) -> int:
    ws = _built_workspace(args.path)
    result = ws.wakeup()
    if args.json:
        print_json(result.to_json())
    else:
        print(result.context)
        print(f"\n[{result.tokens} tokens]", file=sys.stderr)
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    ws = _built_workspace(args.path)
    hits, mode, notice = ws.search(args.question, k=args.k)
    _mode_notice(mode, notice)
    if args.json:
        print_json({"mode": mode, "hits": [h.to_json() for h in hits]})
        return 0
    for i, h in enumerate(hits, 1):
        n = h.node
        print(f"{i:2}. {h.score:.4f}  {n.file}:{n.start_line}  {n.qualname or n.name} ({n.kind})")
    return 0
