"""`neuralmind query | wakeup | search`: the retrieval commands."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

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

    p = sub.add_parser("savings", help="answers served, tokens saved, and how well answers "
                                       "were used, per day and overall")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_savings)

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


def _stamped(ws: Workspace, out: dict[str, Any]) -> dict[str, Any]:
    """The answer with its freshness stamp; a stale hit or an unindexed change is said on
    stderr (the text output has no room for it)."""
    out = ws.stamp_answer(out, **ws.work_tree_now())
    stale = sorted({h["file"] for h in out.get("hits", []) if h.get("stale")})
    pending = out["freshness"]["counts"]["pending"]
    if stale or pending:
        what = f"stale hits (changed since indexed): {', '.join(stale)}; " if stale else ""
        print(f"[neuralmind] {what}{pending} changed files not indexed: run `neuralmind build`",
              file=sys.stderr)
    return out


def cmd_query(args: argparse.Namespace) -> int:
    ws = _built_workspace(args.path)
    result = ws.query(args.question, budget=args.budget, explain=args.explain)
    publish_query(ws.graph, args.question, result, "cli")
    _mode_notice(result.mode, result.notice)
    out = _stamped(ws, result.to_json())
    ws.use.record("context", "cli", args.question, out)
    if args.json:
        print_json(out)
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
    out = _stamped(ws, {"mode": mode, "hits": [h.to_json() for h in hits]})
    ws.use.record("search", "cli", args.question, out)
    if args.json:
        print_json(out)
        return 0
    for i, h in enumerate(hits, 1):
        n = h.node
        print(f"{i:2}. {h.score:.4f}  {n.file}:{n.start_line}  {n.qualname or n.name} ({n.kind})")
    return 0


def cmd_savings(args: argparse.Namespace) -> int:
    report = open_workspace(args.path).savings()
    if args.json:
        print_json(report)
        return 0
    cols = ("answers", "tokens_served", "codebase_tokens", "ratio", "files_used_per_answer",
            "precision_at_5")
    print("| day | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for row in [*report["days"], {"day": "overall", **report["overall"]}]:
        cells = ("-" if row[c] is None else f"{row[c]:,}" if isinstance(row[c], int)
                 else str(row[c]) for c in cols)
        print(f"| {row['day']} | " + " | ".join(cells) + " |")
    overall = report["overall"]
    print(f"\n{overall['acted_on']} of {overall['settled']} settled answers were followed by "
          f"work; the whole codebase is {report['codebase_tokens_now'] or 0:,} tokens (o200k).",
          file=sys.stderr)
    return 0
