"""`neuralmind mcp` (MCP over stdio for agents) and `neuralmind mcp-config`."""

from __future__ import annotations

import argparse
import asyncio
import sys

from neuralmind.cli.common import print_json, root_argument
from neuralmind.errors import InvalidArgument


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="serve MCP over stdio for AI agents (bridges to a running "
                                   "editor server when there is one)")
    p.add_argument("path", nargs="?", default=None, help="workspace root (default: .)")
    p.add_argument("--read-only", action="store_true",
                   help="serve only the consulting tools; recording tools are refused")
    p.add_argument("--tools", default=None, metavar="PROFILE",
                   help="minimal | default | all | a,b,c (default: the workspace setting "
                        "mcp_tools, else default)")
    p.set_defaults(handler=cmd_mcp)

    t = sub.add_parser("mcp-tools", help="print each MCP tool's cost in o200k tokens (what an "
                                         "agent pays for the tool list on every turn)")
    t.add_argument("path", nargs="?", default=None, help="workspace root (default: .)")
    t.add_argument("--tools", default=None, metavar="PROFILE",
                   help="minimal | default | all | a,b,c (default: the workspace setting)")
    t.add_argument("--read-only", action="store_true", help="the read-only role's list")
    t.add_argument("--json", action="store_true", help="machine-readable output")
    t.set_defaults(handler=cmd_mcp_tools)

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

    return run_stdio(root_argument(args.path), read_only=args.read_only, tools=args.tools)


def cmd_mcp_tools(args: argparse.Namespace) -> int:
    # the MCP SDK and the service (~1 s), for `mcp-tools` alone
    from neuralmind.mcp.listing import tool_tokens
    from neuralmind.mcp.server import wire_tool_list
    from neuralmind.service.engine_service import EngineService

    root = root_argument(args.path)
    service = EngineService(root)
    try:
        listed, instructions = asyncio.run(wire_tool_list(service, args.read_only, args.tools))
    except ValueError as e:
        raise InvalidArgument(str(e)) from None
    cost = tool_tokens(listed, instructions)
    profile = args.tools or service.config.mcp_tools
    if args.json:
        print_json({"profile": profile, "read_only": args.read_only, **cost})
        return 0
    width = max((len(n) for n in cost["tools"]), default=10)
    for name, tokens in cost["tools"].items():
        print(f"{name:<{width}}  {tokens:>6,}")
    print(f"{'tools (' + str(len(cost['tools'])) + ')':<{width}}  {cost['tools_total']:>6,}")
    print(f"{'instructions':<{width}}  {cost['instructions']:>6,}")
    print(f"{'total':<{width}}  {cost['total']:>6,}   o200k tokens, profile {profile}"
          + (", read-only" if args.read_only else ""))
    return 0


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
