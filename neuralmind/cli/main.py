"""Entry point of the `neuralmind` command.

Each command group lives in its own module with a `register(subparsers)`
function; a command's handler takes the parsed arguments and returns an exit
code. Handlers translate arguments into engine calls and results into text or
JSON; they hold no behaviour of their own. Errors are mapped to an exit status
here and only here: an `EngineError`'s code picks it (`EXIT_STATUS`; a command
group may refine the table with an `exit_status` default).

The CLI is also the process entry of the servers (`neuralmind lsp`, `neuralmind
mcp`, and `neuralmind-lsp`, see `server_cmds`): the one place that starts the LSP
and MCP adapters and wires them together, so it sits one layer above them.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sqlite3
import sys
from types import ModuleType

from neuralmind import __version__
from neuralmind.errors import EngineError
from neuralmind.log import setup_logging

log = logging.getLogger("neuralmind.cli")

# Command groups (modules of neuralmind.cli), in the order `--help` lists them.
COMMAND_GROUPS = ("graph_cmds", "query_cmds", "review_cmds", "synapse_cmds", "memory_cmds",
                  "decision_cmds", "server_cmds", "mcp_cmds", "serve_cmds", "init_cmds",
                  "hook_cmds", "probe_cmds", "doctor_cmds", "team_cmds")
# The consulting commands a warm server answers: their group alone is imported and
# registered (all groups cost ~50-70 ms of imports, asyncio and the decision store's
# among them, on a path whose whole budget is the server's ~0.1 s round trip).
WARM_COMMANDS = {"query": "query_cmds", "search": "query_cmds", "next": "synapse_cmds",
                 "memory": "memory_cmds"}


def command_groups(argv: list[str] | None) -> list[ModuleType]:
    """The group modules to register: the command's own when it is a warm command (its
    parser is the same either way), else all of them."""
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    names = ((WARM_COMMANDS[words[0]],) if words and words[0] in WARM_COMMANDS
             else COMMAND_GROUPS)
    return [importlib.import_module(f"neuralmind.cli.{name}") for name in names]


def build_parser(groups: list[ModuleType] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neuralmind",
        description="Local code-context engine: the right code in the fewest tokens, offline.",
    )
    parser.add_argument("--version", action="version", version=f"neuralmind {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)")
    parser.add_argument("-q", "--quiet", action="count", default=0, help="less output")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for group in command_groups([]) if groups is None else groups:
        group.register(sub)
    return parser


# Exit status by error code: 2, the request was wrong (usage, arguments, paths); 1, it was
# fine but could not be served (git, the decision store, the model).
EXIT_STATUS = {"git_error": 1, "store_unavailable": 1, "read_only": 1, "model_unavailable": 1}
HINTS = {"model_unavailable": "semantic search needs the model; use --mode keyword or hybrid"}


def exit_status(e: EngineError, args: argparse.Namespace) -> int:
    """Print `e` as one line and return its exit status."""
    hint = HINTS.get(e.code)
    print(f"neuralmind: error: {e.message}" + (f" — {hint}" if hint else ""), file=sys.stderr)
    return {**EXIT_STATUS, **getattr(args, "exit_status", {})}.get(e.code, 2)


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """argparse, except that the optional PATH may also come after the options.

    argparse matches a command's positionals in one run, so in `decisions invalidate ID
    --reason R PATH` the run before `--reason` fills ID and leaves PATH at its default;
    PATH is then "unrecognized". One leftover word is taken as PATH when PATH was not given.
    """
    args, extra = parser.parse_known_args(argv)
    if (len(extra) == 1 and not extra[0].startswith("-")
            and getattr(args, "path", None) == "."):
        args.path = extra[0]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(command_groups(argv))
    args = parse(parser, argv)
    setup_logging(args.verbose - args.quiet)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.handler(args) or 0)
    except EngineError as e:
        return exit_status(e, args)
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
