"""The language server's process entry: `neuralmind lsp --stdio` and `neuralmind-lsp`.

Here the LSP adapter is started with MCP served beside it (the LSP does not know
MCP; it receives `mcp_over_http` as its agent endpoint). stdio is claimed first,
before the server's modules are imported (see `neuralmind.stdio`), so nothing
they do can write into the protocol stream. `python -m neuralmind.cli.server_cmds
--stdio` is `neuralmind-lsp --stdio`.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from neuralmind.stdio import claim_stdio

if TYPE_CHECKING:
    from neuralmind.service import EngineService
    from neuralmind.service.endpoint import AgentEndpoint, EndpointStarter


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true",
                        help="speak LSP on stdin/stdout (the default and only transport)")
    parser.add_argument("--log-file", default=None,
                        help="write logs to this file instead of stderr")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lsp", help="run the language server (LSP over stdio) for editors")
    add_arguments(p)
    p.set_defaults(handler=cmd_lsp)


def cmd_lsp(args: argparse.Namespace) -> int:
    in_fd, out_fd = claim_stdio()
    return _serve(args.log_file, args.verbose, in_fd, out_fd)


def lsp_main(argv: list[str] | None = None) -> int:
    """`neuralmind-lsp`: the process the editor starts."""
    args_in = sys.argv[1:] if argv is None else argv
    wants_help = any(a in ("-h", "--help") for a in args_in)
    # --help is for a person at a terminal: it may use stdout; serving never does.
    in_fd, out_fd = (-1, -1) if wants_help else claim_stdio()
    parser = argparse.ArgumentParser(prog="neuralmind-lsp",
                                     description="NeuralMind language server (LSP over stdio).")
    add_arguments(parser)
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more logging (-vv: debug)")
    args = parser.parse_args(args_in)
    return _serve(args.log_file, args.verbose, in_fd, out_fd)


def _serve(log_file: str | None, verbosity: int, in_fd: int, out_fd: int) -> int:
    # Imported after stdio is claimed, and only by the commands that serve: pygls, the
    # service and the model runtime take ~0.3 s that the other commands must not pay.
    from neuralmind.lsp.entry import serve

    return serve(log_file, verbosity, in_fd, out_fd, agent_endpoint=mcp_over_http)


def mcp_over_http() -> EndpointStarter:
    """The LSP's agent endpoint: MCP on loopback HTTP. Called on the engine thread: it
    imports uvicorn (~50 ms, ~3 MB); the MCP SDK (~40 MB) waits for the first agent
    request (`mcp.lazyapp`)."""
    # loaded here, on the engine thread, off the event loop (~60 ms warm, ~0.5 s cold)
    import uvicorn  # noqa: F401

    from neuralmind.mcp.http import serve_http

    async def start(service: EngineService, read_only: bool) -> AgentEndpoint:
        return await serve_http(service, host="127.0.0.1", port=0, read_only=read_only)

    return start


if __name__ == "__main__":
    sys.exit(lsp_main())
