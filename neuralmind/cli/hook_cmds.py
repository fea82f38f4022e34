"""`neuralmind hook EVENT [--agent NAME]`: what an agent's hook runs (see hooks/client.py).

The console script serves `hook` before this parser is even built (`cli/entry.py`); it
is registered here so that `--help` documents it and `python -m neuralmind.cli.main
hook ...` works the same way.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("hook", help="answer one agent hook (JSON on stdin; installed by "
                                    "`neuralmind init`); never fails, errors go to "
                                    ".neuralmind/hooks.log")
    p.add_argument("event", help="the agent's event name, e.g. UserPromptSubmit")
    p.add_argument("--agent", default="claude", help="claude (default) or gemini")
    p.set_defaults(handler=cmd_hook)


def cmd_hook(args: argparse.Namespace) -> int:
    from neuralmind.hooks.client import main as hook_main  # ~10 ms, for `hook` alone

    return hook_main([args.event, "--agent", args.agent])
