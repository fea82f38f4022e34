"""`neuralmind mcp [PATH]`: MCP over stdio for agents that spawn their servers.

When the editor's server for the workspace is live (its discovery file names a
running pid whose endpoint accepts the token), stdio is bridged to it: same
index, same learned associations, no second copy in memory. Otherwise this
process runs an EngineService over the same on-disk state (no LSP) and serves the
same tools itself, polling for the files the agent changes (see `watch`) since no
editor reports them; it also serves the hook route on loopback (`.neuralmind/hooks.json`)
so the agent's hooks are answered by this warm process. One line on stderr says which. stdout carries only protocol
frames: fds 0/1 are taken private first, fd 1 then points at stderr.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import sys
from pathlib import Path
from typing import Any

from neuralmind.config import load_workspace_config
from neuralmind.discovery import HOOKS_DISCOVERY_NAME, live_endpoint
from neuralmind.events import bus
from neuralmind.mcp.bridge import Bridge
from neuralmind.mcp.profiles import wanted
from neuralmind.stdio import claim_stdio

log = logging.getLogger("neuralmind.mcp")


def notice(text: str) -> None:
    sys.stderr.write(f"[neuralmind] mcp: {text}\n")
    sys.stderr.flush()


def run_stdio(root: Path, read_only: bool = False, tools: str | None = None) -> int:
    """Serve one agent on this process's stdio until EOF; returns the exit code. `tools`
    (a profile, see profiles.py) narrows a bridged server's list, or picks a standalone
    server's; None: the workspace setting."""
    config = load_workspace_config(root)
    allowed = wanted(tools or config.mcp_tools)      # ValueError before stdio is taken
    in_fd, out_fd = claim_stdio()
    read_only = read_only or config.mcp_read_only
    entry, problem = live_endpoint(root)
    if problem:
        notice(f"ignoring the recorded endpoint: {problem}")
    if entry is not None:
        role = " (read-only)" if read_only else ""
        notice(f"bridging to the running NeuralMind server {entry.url} (pid {entry.pid}){role}")
        return _bridge(entry.url, entry.token, in_fd, out_fd, read_only,
                       allowed if tools else None)
    notice(f"no running server for {root}; serving the workspace from this process"
           + (" (read-only)" if read_only else ""))
    return _standalone(root, in_fd, out_fd, read_only, tools)


def _bridge(url: str, token: str, in_fd: int, out_fd: int, read_only: bool,
            allowed: set[str] | None) -> int:
    stdin = os.fdopen(in_fd, "rb")
    stdout = os.fdopen(out_fd, "wb")
    bridge = Bridge(url, token, stdout, read_only=read_only, allowed=allowed)
    try:
        bridge.pump(stdin)
    except KeyboardInterrupt:
        return 130
    return 0


def _standalone(root: Path, in_fd: int, out_fd: int, read_only: bool,
                tools: str | None) -> int:
    try:
        code = asyncio.run(_serve_here(root, in_fd, out_fd, read_only, tools))
    except KeyboardInterrupt:
        code = 130
    logging.shutdown()
    sys.stderr.flush()
    # Engine threads inside a long call would hold interpreter exit; all state on disk is
    # written atomically, so leave now (as the LSP server does).
    os._exit(code)


async def _serve_here(root: Path, in_fd: int, out_fd: int, read_only: bool,
                      tools: str | None) -> int:
    # standalone only (~0.5 s: the SDK's stdio server, the service, the walker): the
    # bridge to an editor's server, the usual case, must answer at once
    import anyio
    from mcp.server.stdio import stdio_server

    from neuralmind.mcp.server import build_mcp_server
    from neuralmind.service.agent_edits import AgentEditWatcher
    from neuralmind.service.engine_service import EngineService

    bus.set_label("mcp")
    service = EngineService(root)
    server = build_mcp_server(service, read_only=read_only, tools=tools)
    loop = asyncio.get_running_loop()
    start = loop.create_task(service.start(index=True), name="start")
    hooks = loop.create_task(_hook_endpoint(service, read_only), name="hook-endpoint")
    toolset = server.neuralmind_tools
    watcher = AgentEditWatcher(service, lambda: toolset.last_session)
    watch = loop.create_task(_watch_after(start, watcher), name="agent-edits")
    stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(in_fd, "rb"), encoding="utf-8",
                                             errors="replace"))
    stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(out_fd, "wb"), encoding="utf-8"))
    try:
        async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
            await server.serve_streams(read_stream, write_stream)
    finally:
        watch.cancel()
        if not hooks.done():
            hooks.cancel()
        elif not hooks.cancelled() and hooks.result() is not None:
            await hooks.result().stop()      # hooks.json goes first
        if not start.done():
            start.cancel()
        try:
            await asyncio.wait_for(service.close(), timeout=1.5)
        except Exception as e:  # TimeoutError included
            log.warning("clean-up did not finish: %s", e or "timeout")
    if start.done() and not start.cancelled() and start.exception() is not None:
        notice(f"cannot open the workspace {root}: {start.exception()}")
        return 1
    return 0


async def _hook_endpoint(service: Any, read_only: bool) -> Any:
    """The hook route on loopback, named by `.neuralmind/hooks.json`: this agent's own hooks
    are then answered by this warm process (no editor needed). None when it cannot start."""
    # uvicorn (~50 ms on the engine thread), after the workspace opened
    from neuralmind.mcp.http import serve_http

    try:
        return await serve_http(service, read_only=read_only,
                                discovery_name=HOOKS_DISCOVERY_NAME)
    except Exception as e:  # the stdio server works without it: hooks then read the disk
        log.warning("no hook endpoint: %s", e)
        return None


async def _watch_after(start: asyncio.Task[None], watcher: Any) -> None:
    """Poll for the agent's edits once the workspace is open (never if it failed to open)."""
    try:
        await asyncio.shield(start)
    except Exception:
        return
    await watcher.run()
