"""Entry point of the `neuralmind` command.

Each command group lives in its own module with a `register(subparsers)`
function; a command's handler takes the parsed arguments and returns an exit
code. Handlers translate arguments into engine calls and results into text or
JSON; they hold no behaviour of their own.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sqlite3
import sys

from neuralmind import __version__
from neuralmind.cli.errors import UsageError
from neuralmind.errors import EngineError
from neuralmind.log import setup_logging

log = logging.getLogger("neuralmind.cli")

# Modules registering subcommands, in the order `--help` lists them.
__all__ = ["UsageError", "main"]

COMMAND_MODULES = [
    "neuralmind.cli.graph_cmds",
    "neuralmind.cli.query_cmds",
    "neuralmind.cli.synapse_cmds",
    "neuralmind.cli.decision_cmds",
    "neuralmind.cli.server_cmds",
    "neuralmind.cli.mcp_cmds",
    "neuralmind.cli.doctor_cmds",
    "neuralmind.cli.team_cmds",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neuralmind",
        description="Local code-context engine: the right code in the fewest tokens, offline.",
    )
    parser.add_argument("--version", action="version", version=f"neuralmind {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)")
    parser.add_argument("-q", "--quiet", action="count", default=0, help="less output")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            continue  # command group not built yet
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(args.verbose - args.quiet)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.handler(args) or 0)
    except UsageError as e:
        print(f"neuralmind: error: {e}", file=sys.stderr)
        return 2
    except EngineError as e:
        print(f"neuralmind: error: {e.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("neuralmind: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except (OSError, sqlite3.Error) as e:  # a read-only or full disk, a vanished folder
        log.debug("command failed", exc_info=True)
        print(f"neuralmind: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
