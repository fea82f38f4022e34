"""`neuralmind init [PATH] [--agent A] [--remove] [--dry-run]`: set a project up for an agent.

The plan and the writing are `hooks/install.py`; this module builds the index first (the
hooks have nothing to say without one), gathers what the workspace learned, and prints.
"""

from __future__ import annotations

import argparse
import sys

from neuralmind.cli.common import Progress, open_workspace, print_json
from neuralmind.errors import InvalidArgument


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("init", help="set a project up for an agent: MCP server, hooks, git hook, "
                                    "instructions block, memory export (--remove undoes it)")
    p.add_argument("path", nargs="?", help="the project folder (default: current folder)")
    p.add_argument("--agent", default="claude", help="claude (default) or gemini")
    p.add_argument("--remove", action="store_true",
                   help="take it all out again: files init wrote get their exact bytes back")
    p.add_argument("--dry-run", action="store_true", help="print the changes; write nothing")
    p.add_argument("--no-build", action="store_true", help="do not build the index first")
    p.add_argument("--json", action="store_true", help="print the changes as JSON")
    p.set_defaults(handler=cmd_init)


def cmd_init(args: argparse.Namespace) -> int:
    # the installer and the engine it gathers from (~0.3 s), for `init` alone
    from neuralmind.hooks import install
    from neuralmind.hooks.agents import agent

    try:
        adapter = agent(args.agent)
    except ValueError as e:
        raise InvalidArgument(str(e)) from None
    ws = open_workspace(args.path)
    root, skipped = ws.root, []
    if args.remove:
        changes = install.plan_remove(root, adapter)
    else:
        if not args.no_build and not args.dry_run:
            progress = Progress(quiet=args.json)
            ws.ensure_built(progress=progress)
            progress.finish()
        learned = install.gather(ws) if not args.dry_run else install.Learned()
        changes, skipped = install.plan_init(root, adapter, learned)
    if not args.dry_run:
        install.apply(root, adapter, changes, remove=args.remove)
    if args.json:
        print_json({"agent": adapter.NAME, "root": str(root), "remove": args.remove,
                    "dry_run": args.dry_run, "changes": [c.to_json(root) for c in changes],
                    "skipped": skipped})
        return 0
    verb = "would " if args.dry_run else ""
    for c in changes:
        if c.action == "unchanged":
            print(f"unchanged  {c.to_json(root)['path']}")
            continue
        print(f"{verb}{c.action:<8} {c.to_json(root)['path']}  ({'; '.join(c.notes)})")
        if args.dry_run:
            sys.stdout.write(c.diff(root))
    for note in skipped:
        print(f"skipped  {note}", file=sys.stderr)
    if not args.dry_run and not args.remove:
        print(f"\n{adapter.NAME}: NeuralMind is set up in {root}; `neuralmind init --agent "
              f"{adapter.NAME} --remove` takes it out again.", file=sys.stderr)
    return 0
