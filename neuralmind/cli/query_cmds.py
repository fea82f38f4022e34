"""`neuralmind query | wakeup | search`: the retrieval commands.

`query` and `search` ask the workspace's running server first (`remote.py`): it
answers at once from its warm index; without one they answer from disk.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from neuralmind.cli.common import Progress, open_workspace, print_json
from neuralmind.cli.remote import from_server, local_argument

if TYPE_CHECKING:
    from neuralmind.engine import Workspace


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("query", help="the context a question needs, within a token budget")
    p.add_argument("question")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--budget", type=int, default=None, help="total tokens (default 1500)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--explain", action="store_true", help="why each piece is in the context")
    local_argument(p)
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
    local_argument(p)
    p.set_defaults(handler=cmd_search)


def _built_workspace(path: str) -> Workspace:
    """The workspace of PATH, built first when it never was (so `query` just works).

    This process answers one question and exits: the model is loaded the quick way."""
    ws = open_workspace(path)
    progress = Progress()
    try:
        ws.ensure_built(progress=progress)
    finally:
        progress.finish()
    ws.index.one_shot = True
    return ws


def _mode_notice(mode: str, notice: str) -> None:
    if notice:
        print(f"[neuralmind] {notice}", file=sys.stderr)
    if mode != "hybrid":
        print(f"[neuralmind] search mode: {mode}", file=sys.stderr)


def cmd_query(args: argparse.Namespace) -> int:
    out = from_server(args, "query", {"question": args.question, "budget": args.budget,
                                      "explain": args.explain})
    if out is None:
        # the event bus only when this process answers (the warm path imports no engine)
        from neuralmind.engine.activity import publish_query

        ws = _built_workspace(args.path)
        result = ws.query(args.question, budget=args.budget, explain=args.explain)
        publish_query(ws.graph, args.question, result, "cli")
        out = result.to_json()
    _mode_notice(out["mode"], out.get("notice", ""))
    if args.json:
        print_json(out)
        return 0
    print(out["context"])
    layers = ", ".join(f"{k} {v}" for k, v in out["layers"].items())
    print(f"\n[{out['tokens']} tokens: {layers}; mode {out['mode']}]", file=sys.stderr)
    if args.explain:
        print("\n# Why this context", file=sys.stderr)
        for line in out.get("explain", []):
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
    out = from_server(args, "search", {"question": args.question, "k": args.k})
    if out is None:
        hits, mode, notice = _built_workspace(args.path).search(args.question, k=args.k)
        out = {"mode": mode, "notice": notice, "hits": [h.to_json() for h in hits]}
    _mode_notice(out["mode"], out.get("notice", ""))
    if args.json:
        print_json({"mode": out["mode"], "hits": out["hits"]})
        return 0
    for i, h in enumerate(out["hits"], 1):
        print(f"{i:2}. {h['score']:.4f}  {h['file']}:{h['line']}  {h['symbol']} ({h['kind']})")
    return 0
