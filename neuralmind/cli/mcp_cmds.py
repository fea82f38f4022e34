"""`neuralmind mcp` (MCP over stdio for agents) and `neuralmind mcp-config`."""

from __future__ import annotations

import argparse
import sys

from neuralmind.cli.common import print_json, root_argument
from neuralmind.errors import InvalidArgument


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="serve MCP over stdio for AI agents (bridges to a running "
                                   "editor server when there is one)")
    p.add_argument("path", nargs="?", default=None, help="workspace root (default: .)")
    p.add_argument("--read-only", action="store_true",
                   help="serve only the consulting tools; recording tools are refused")
    p.set_defaults(handler=cmd_mcp)

    c = sub.add_parser("mcp-config", help="print the snippet that registers NeuralMind with an "
                                          "MCP client")
    c.add_argument("path", nargs="?", default=None, help="workspace root (default: .)")
    c.add_argument("--client", default="generic",
                   choices=("claude", "cursor", "vscode", "generic"),
                   help="the client's configuration format (default: generic)")
    c.add_argument("--read-only", action="store_true",
                   help="register the read-only role")
    c.set_defaults(handler=cmd_mcp_config)


def cmd_mcp(args: argparse.Namespace) -> int:
    from neuralmind.mcp.stdio import run_stdio  # ~0.1 s, for `mcp` alone

    return run_stdio(root_argument(args.path), read_only=args.read_only)


def cmd_mcp_config(args: argparse.Namespace) -> int:
    from neuralmind.mcp import config  # ~45 ms, for `mcp-config` alone

    root = root_argument(args.path)
    try:
        out = config.snippet(root, args.client, read_only=args.read_only)
    except ValueError as e:
        raise InvalidArgument(str(e)) from None
    print(f"# {config.where(args.client, root, args.read_only)}", file=sys.stderr)
    print(f"# {config.http_note(root)}", file=sys.stderr)
    print_json(out)
    return 0
