"""`neuralmind serve [PATH] [--no-browser]`: the observatory without an editor.

The brain is one process: when the editor's server runs for PATH (its discovery file
names a live endpoint), the page is that server's, and this command only asks it for
a login URL and waits. Otherwise this process serves the workspace itself: the
EngineService, the loopback endpoint with MCP (agents' `neuralmind mcp` bridge to it)
and the page, keeping the index fresh as files change. Either way it prints the
one-time login URL, opens it unless `--no-browser`, and runs until interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING

from neuralmind.cli.common import root_argument
from neuralmind.discovery import Discovery, live_endpoint, observatory_login, pid_alive
from neuralmind.events import bus

if TYPE_CHECKING:
    from neuralmind.service.engine_service import EngineService

log = logging.getLogger("neuralmind.cli")

WATCH_PID_SECONDS = 1.0          # how often a borrowed server's process is checked


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="the observatory: watch the brain work in a browser page "
                                     "(runs until interrupted)")
    p.add_argument("path", nargs="?", default=".", help="workspace root (default: .)")
    p.add_argument("--no-browser", action="store_true",
                   help="print the login URL without opening a browser")
    p.set_defaults(handler=cmd_serve)


def say(text: str) -> None:
    print(text, flush=True)


def cmd_serve(args: argparse.Namespace) -> int:
    root = root_argument(args.path)
    entry, problem = live_endpoint(root)
    if problem:
        print(f"[neuralmind] ignoring the recorded endpoint: {problem}", file=sys.stderr)
    try:          # Ctrl+C is how serving ends: a normal exit, whenever it comes
        if entry is not None:
            return _borrow(entry, open_browser=not args.no_browser)
        return asyncio.run(_serve(root, open_browser=not args.no_browser))
    except KeyboardInterrupt:
        return 0


def _show(url: str, open_browser: bool) -> None:
    say(f"Observatory: {url}")
    say("(a one-time login link; run `neuralmind serve` again for another. Ctrl+C stops.)")
    if open_browser:
        with contextlib.suppress(Exception):        # no browser here: the URL is printed
            webbrowser.open(url)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _borrow(entry: Discovery, open_browser: bool) -> int:
    """The editor's server serves the page: a login URL from it, then wait.

    SIGINT and SIGTERM end the wait even when this process was started with them ignored
    (a background job of a non-interactive shell inherits SIGINT ignored, and Python then
    raises no KeyboardInterrupt), as the serving branch's loop handlers do.
    """
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)
    url = observatory_login(entry)
    say(f"NeuralMind's server for this workspace runs already (pid {entry.pid}); "
        "the page is served by it.")
    _show(url, open_browser)
    while pid_alive(entry.pid):
        time.sleep(WATCH_PID_SECONDS)
    say(f"The server (pid {entry.pid}) stopped.")
    return 0


async def _serve(root: Path, open_browser: bool) -> int:
    # the service, uvicorn and the endpoint: only `serve` and the servers load them (~0.5 s)
    from neuralmind.mcp.http import serve_http
    from neuralmind.service.agent_edits import AgentEditWatcher
    from neuralmind.service.engine_service import EngineService

    bus.set_label("serve")
    service = EngineService(root)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await service.start(index=True)
    endpoint = await serve_http(service)
    service.mcp_endpoint = endpoint.url
    watcher = loop.create_task(AgentEditWatcher(service, lambda: None).run(), name="file-poll")
    try:
        say(f"Serving {root} (pid {os.getpid()}); MCP for agents at {endpoint.url}")
        _show(endpoint.login_url(), open_browser)
        await stop.wait()
    finally:
        watcher.cancel()
        await _close(service, endpoint)
    say("Stopped.")
    return 0


async def _close(service: EngineService, endpoint: object) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(endpoint.stop(), timeout=2.0)      # type: ignore[attr-defined]
    with contextlib.suppress(Exception):
        await asyncio.wait_for(service.close(), timeout=2.0)
