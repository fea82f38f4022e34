"""MCP over streamable HTTP on loopback, inside the process that owns the EngineService.

The editor's `neuralmind-lsp` calls `serve_http` after `initialized`: uvicorn runs as a
task on the server's own event loop (no thread, no second engine), never installs
signal handlers (SIGINT/SIGTERM stay the LSP process's), and binds 127.0.0.1 only.
Every request must carry the random bearer token written to the discovery file;
requests whose Host or Origin is not this loopback endpoint are refused (DNS
rebinding). `stop()` removes the discovery file first, then the listener.

Listening costs uvicorn only: the MCP SDK (with pydantic and starlette) is imported
and the MCP app built on the first authenticated request to the MCP path (`LazyApp`),
on the engine thread, so editor sessions no agent connects to never pay for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import importlib
import importlib.util
import json
import logging
import os
import secrets
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from neuralmind.discovery import (
    CLI_PATH,
    DISCOVERY_NAME,
    HEALTH_PATH,
    MCP_PATH,
    OBSERVATORY_LOGIN_PATH,
    OBSERVATORY_PATH,
    Discovery,
    remove_discovery,
    write_discovery,
)
from neuralmind.heap import no_gc
from neuralmind.hookwire import HOOK_PATH
from neuralmind.mcp.asgi import ASGIApp, Receive, Scope, Send, plain
from neuralmind.mcp.cli_route import CliRoute
from neuralmind.mcp.hook_route import HookRoute, hook_route
from neuralmind.mcp.lazyapp import LazyApp
from neuralmind.observatory.app import ObservatoryApp

if TYPE_CHECKING:
    import uvicorn

    from neuralmind.service.engine_service import EngineService

log = logging.getLogger("neuralmind.mcp")

LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
START_TIMEOUT_SECONDS = 5.0
STOP_TIMEOUT_SECONDS = 0.8
APP_STOP_TIMEOUT_SECONDS = 0.3


class Guard:
    """ASGI wrapper: loopback Host/Origin, then the bearer token, then the MCP app.

    Also answers the health route the stdio bridge probes (token required too), so
    a stale discovery file can be told from a live one without speaking MCP, and the
    CLI's route (`cli_route.py`, plain JSON) and the hook route agent hooks POST to
    (`hook_route.py`). Only the MCP path reaches the app: anything else is answered
    here, so that neither a refusal nor a probe nor a hook nor a stray path builds the
    (lazy) app. The observatory page (`/observatory`, a browser: session cookie, not the
    token) passes the Host/Origin checks and goes to its own app; a login URL for it is
    minted, with the token, at OBSERVATORY_LOGIN_PATH.
    """

    def __init__(self, app: ASGIApp, token: str, port: int, health: dict[str, Any],
                 cli: ASGIApp | None = None, hook: HookRoute | None = None,
                 observatory: ObservatoryApp | None = None) -> None:
        self.app = app
        self.cli = cli
        self.hook = hook
        self.observatory = observatory
        self.token = token.encode()
        self.hosts = {f"{h}:{port}".encode() for h in LOOPBACK_HOSTS}
        self.health = json.dumps(health).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":                    # websockets are not served at all
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        if headers.get(b"host") not in self.hosts:
            await plain(send, 421, b"refused: Host must be this loopback endpoint")
            return
        origin = headers.get(b"origin")
        if origin is not None and not _loopback_origin(origin):
            await plain(send, 403, b"refused: Origin is not loopback")
            return
        path = scope.get("path", "")
        if self.observatory is not None and (path == OBSERVATORY_PATH
                                             or path.startswith(OBSERVATORY_PATH + "/")):
            await self.observatory(scope, receive, send)
            return
        auth = headers.get(b"authorization", b"")
        scheme, _, given = auth.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.token):
            await plain(send, 401, b"a bearer token is required (see .neuralmind/mcp.json)",
                         [(b"www-authenticate", b'Bearer realm="neuralmind"')])
            return
        if path == HEALTH_PATH:
            await plain(send, 200, self.health, [(b"content-type", b"application/json")])
            return
        if path == CLI_PATH and self.cli is not None:
            await self.cli(scope, receive, send)
            return
        if path == HOOK_PATH and self.hook is not None:
            await self.hook(scope.get("method", ""), receive, send)
            return
        if path == OBSERVATORY_LOGIN_PATH and self.observatory is not None:
            if scope.get("method") != "POST":
                await plain(send, 405, b"POST for a login URL", [(b"allow", b"POST")])
                return
            url = self.observatory.login_url(_query_value(scope, "view"))
            await plain(send, 200, json.dumps({"url": url}).encode(),
                        [(b"content-type", b"application/json")])
            return
        if path != MCP_PATH:
            await plain(send, 404, f"not found: MCP is served at {MCP_PATH}".encode())
            return
        await self.app(scope, receive, send)


def _query_value(scope: Scope, name: str) -> str | None:
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get(name)
    return values[0] if values else None


def _loopback_origin(origin: bytes) -> bool:
    try:
        parts = urlsplit(origin.decode("latin-1"))
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.hostname in ("127.0.0.1", "localhost")


def _quiet_server_class() -> type[uvicorn.Server]:
    import uvicorn  # loaded by serve_http on the engine thread (~20-500 ms)

    class QuietServer(uvicorn.Server):
        """uvicorn without signal handlers: the hosting process owns SIGINT/SIGTERM."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return QuietServer


@dataclass
class McpEndpoint:
    """A running loopback MCP endpoint; `await stop()` ends it and removes the discovery file."""

    url: str
    token: str
    root: Path
    read_only: bool
    discovery_file: Path | None
    app: LazyApp = field(repr=False)
    observatory: ObservatoryApp = field(repr=False)
    _server: Any = field(repr=False)
    _task: asyncio.Task[None] = field(repr=False)
    discovery_name: str = field(default=DISCOVERY_NAME, repr=False)
    _stopped: bool = field(default=False, repr=False)

    @property
    def port(self) -> int:
        return urlsplit(self.url).port or 0

    def login_url(self, view: str | None = None) -> str:
        """A one-time login URL of the observatory page served beside MCP."""
        return self.observatory.login_url(view)

    @property
    def app_built(self) -> bool:
        """Whether an authenticated MCP request has made this process import the SDK."""
        return self.app.built

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self.discovery_file is not None:
            remove_discovery(self.root, self.token, self.discovery_name)
        self.observatory.close()            # open event streams end now, not at the timeout
        await self.app.refuse_new()
        self._server.should_exit = True
        done, _ = await asyncio.wait({self._task}, timeout=STOP_TIMEOUT_SECONDS)
        if not done:        # connections that would not close (an open SSE stream)
            self._server.force_exit = True
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=0.2)
        elif not self._task.cancelled() and self._task.exception() is not None:
            log.info("MCP endpoint ended with %s", self._task.exception())
        await self.app.aclose()     # already done by uvicorn's lifespan unless it was cut short

    close = stop


def _bind(host: str, port: int) -> socket.socket:
    if host not in LOOPBACK_HOSTS:
        raise ValueError(f"MCP over HTTP binds loopback only (127.0.0.1), not {host!r}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit it: small JSON-RPC replies must not wait for delayed ACKs.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    sock.setblocking(False)
    return sock


async def serve_http(service: EngineService, host: str = "127.0.0.1", port: int = 0,
                     read_only: bool = False, write_discovery_file: bool = True,
                     discovery_name: str = DISCOVERY_NAME) -> McpEndpoint:
    """Serve MCP for `service` on 127.0.0.1:`port` (0: ephemeral) on the running loop.

    Read-only when asked, or when the workspace setting `mcp_read_only` says so. Only
    uvicorn is imported now (on the engine thread when not yet loaded: ~50 ms); the
    SDK waits for the first authenticated MCP request.
    """
    read_only = read_only or bool(getattr(service.config, "mcp_read_only", False))
    sock = _bind(host, port)
    try:
        if "uvicorn" not in sys.modules:
            await service.run_serialised(functools.partial(importlib.import_module, "uvicorn"))
        protocol_version = sdk_protocol_version()
    except BaseException:
        sock.close()
        raise
    import uvicorn  # loaded just above, on the engine thread

    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}{MCP_PATH}"
    token = secrets.token_urlsafe(32)
    app = LazyApp(_app_factory(service, read_only, port), stop_timeout=APP_STOP_TIMEOUT_SECONDS)
    health = {"name": "neuralmind", "root": str(service.root), "pid": os.getpid(),
              "read_only": read_only}
    observatory = ObservatoryApp(service, port)
    guard = Guard(app, token, port, health, CliRoute(service), hook_route(service), observatory)
    config = uvicorn.Config(guard, log_config=None, log_level="warning", access_log=False,
                            lifespan="on",
                            timeout_graceful_shutdown=0.3, ws="none", loop="none")
    # serve() would load the config on the loop: importing the HTTP protocol (h11 or
    # httptools) and lifespan modules there held the GIL ~60 ms at start-up
    await service.run_serialised(config.load)
    server = _quiet_server_class()(config)
    task = asyncio.get_running_loop().create_task(_serve(server, sock), name="mcp-http")
    try:
        await _wait_started(server, task)
    except BaseException:
        server.should_exit = True
        task.cancel()
        sock.close()
        raise
    endpoint = McpEndpoint(url=url, token=token, root=service.root, read_only=read_only,
                           discovery_file=None, app=app, observatory=observatory,
                           _server=server, _task=task, discovery_name=discovery_name)
    if write_discovery_file:
        entry = Discovery(url=url, pid=os.getpid(), token=token,
                          protocol_version=protocol_version, root=str(service.root),
                          read_only=read_only)
        try:
            endpoint.discovery_file = write_discovery(service.root, entry, discovery_name)
        except OSError:           # an endpoint nobody can find must not keep running
            await endpoint.stop()
            raise
    log.info("MCP endpoint %s (%s)", url, "read-only" if read_only else "read-write")
    return endpoint


def _app_factory(service: EngineService, read_only: bool,
                 port: int) -> Callable[[], Awaitable[ASGIApp]]:
    async def build() -> ASGIApp:
        # The engine thread, after the engine work queued before it: the imports hold
        # the GIL for ~1 s in all, and one busy thread at a time keeps the loop responsive.
        return await service.run_serialised(
            functools.partial(_build_app, service, read_only, port))
    return build


def _build_app(service: EngineService, read_only: bool, port: int) -> ASGIApp:
    """Import the SDK and build the MCP app: the ~40 MB an agent's first request costs.

    With the cyclic GC paused, then the ~86k objects it leaves frozen: otherwise the
    imports trigger a full collection that holds the GIL 25-45 ms (the editor's loop
    stalls that long), and every later full pass walks them again. The ~3k cyclic
    garbage objects the imports leave (well under 1 MB) are frozen with them.
    """
    with no_gc(freeze=True):
        # the MCP SDK (~0.8 s, ~40 MB) loads with the first agent request (LazyApp)
        from mcp.server.transport_security import TransportSecuritySettings

        from neuralmind.mcp.server import build_mcp_server

        mcp_server = build_mcp_server(service, read_only=read_only)
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{h}:{port}" for h in LOOPBACK_HOSTS],
            allowed_origins=[f"http://{h}:{port}" for h in LOOPBACK_HOSTS])
        return mcp_server.streamable_http_app(streamable_http_path=MCP_PATH,
                                              host="127.0.0.1", transport_security=security)


def sdk_protocol_version() -> str:
    """The SDK's newest protocol revision, for the discovery file.

    `mcp_types/__init__` imports every protocol type (~14 MB, 0.25 s) while the
    constant lives in its stdlib-only `version` module: that file is run alone,
    unless the package is loaded already (or laid out differently than expected).
    """
    if "mcp_types" not in sys.modules:
        with contextlib.suppress(Exception):
            return _run_version_module()
    from mcp_types import LATEST_PROTOCOL_VERSION  # the SDK is loaded already here

    return LATEST_PROTOCOL_VERSION


def _run_version_module() -> str:
    spec = importlib.util.find_spec("mcp_types")
    if spec is None or not spec.submodule_search_locations:
        raise LookupError("mcp_types is not a package here")
    path = Path(list(spec.submodule_search_locations)[0]) / "version.py"
    version_spec = importlib.util.spec_from_file_location("_nm_mcp_types_version", path)
    if version_spec is None or version_spec.loader is None:
        raise LookupError(f"cannot load {path}")
    module = importlib.util.module_from_spec(version_spec)
    version_spec.loader.exec_module(module)
    return str(module.LATEST_PROTOCOL_VERSION)


async def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
    try:
        await server.serve(sockets=[sock])
    except SystemExit as e:  # uvicorn exits the process on a startup failure; not ours to exit
        raise RuntimeError(f"the MCP endpoint could not start (exit {e.code})") from None
    finally:
        sock.close()


async def _wait_started(server: uvicorn.Server, task: asyncio.Task[None]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_TIMEOUT_SECONDS
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("the MCP endpoint stopped while starting")
        if loop.time() > deadline:
            raise TimeoutError("the MCP endpoint did not start in time")
        await asyncio.sleep(0.005)
