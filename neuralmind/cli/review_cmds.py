"""`neuralmind review`: what the pending change probably misses, and the decisions it puts at risk."""

from __future__ import annotations

import argparse

from neuralmind.cli.common import open_workspace, print_json
from neuralmind.review.report import render_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help="files that usually change with your change but were not "
                                      "touched, and the decisions it puts at risk")
    p.add_argument("path", nargs="?", default=".")
    p.add_argument("--base", default=None, metavar="REF",
                   help="compare with the merge base of REF and HEAD (default: HEAD)")
    p.add_argument("--min-confidence", type=float, default=None, metavar="P",
                   help="warn from this estimated chance that a file belongs in the change "
                        "(default 0.6)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(handler=cmd_review)


def cmd_review(args: argparse.Namespace) -> int:
    ws = open_workspace(args.path)
    out = ws.review(base=args.base, min_confidence=args.min_confidence).to_json()
    if args.json:
        print_json(out)
    else:
        print(render_text(out))
    return 0
