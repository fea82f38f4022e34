"""`neuralmind mcp-config`: the snippet that registers NeuralMind with an MCP client.

The registered command is the stdio one (`neuralmind mcp <root>`): it works with or
without an editor running, and bridges to the editor's warm server when there is
one. The HTTP endpoint is reported too while a server runs, but its token changes
at every start, so clients should not store it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuralmind.discovery import DISCOVERY_NAME, live_endpoint
from neuralmind.launcher import neuralmind_argv

CLIENTS = ("claude", "cursor", "vscode", "generic")
WHERE = {
    "claude": "add to .mcp.json in the project (Claude Code) or claude_desktop_config.json, "
              "or run: claude mcp add neuralmind -- {command}",
    "cursor": "add to .cursor/mcp.json in the project (or ~/.cursor/mcp.json)",
    "vscode": "add to .vscode/mcp.json in the project",
    "generic": "any MCP client: spawn `command` with `args` and speak MCP on its stdio",
}


def stdio_command(root: Path, read_only: bool = False) -> list[str]:
    """The argv an agent spawns: the installed `neuralmind`, else this interpreter."""
    return [*neuralmind_argv(), "mcp", str(root)] + (["--read-only"] if read_only else [])


def snippet(root: Path, client: str, read_only: bool = False) -> dict[str, Any]:
    """The configuration object for `client`, plus the live HTTP endpoint when there is one."""
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r} (expected one of {', '.join(CLIENTS)})")
    command, *args = stdio_command(root, read_only)
    if client == "vscode":
        out: dict[str, Any] = {"servers": {"neuralmind": {"type": "stdio", "command": command,
                                                          "args": args}}}
    elif client == "generic":
        out = {"name": "neuralmind", "transport": "stdio", "command": command, "args": args}
    else:
        out = {"mcpServers": {"neuralmind": {"command": command, "args": args}}}
    entry, _ = live_endpoint(root)
    if entry is not None and client == "generic":
        out["http"] = {"url": entry.url, "pid": entry.pid,
                       "token": f"Authorization: Bearer <token from {root}/.neuralmind/"
                                f"{DISCOVERY_NAME}; it changes at every server start>"}
    return out


def where(client: str, root: Path, read_only: bool = False) -> str:
    return WHERE[client].format(command=" ".join(stdio_command(root, read_only)))


def http_note(root: Path) -> str:
    entry, _ = live_endpoint(root)
    if entry is None:
        return "no NeuralMind server is running for this workspace (the stdio command works anyway)"
    return (f"a server is running: MCP over HTTP at {entry.url} (pid {entry.pid}); bearer token in "
            f"{root}/.neuralmind/{DISCOVERY_NAME}, new at every start")
