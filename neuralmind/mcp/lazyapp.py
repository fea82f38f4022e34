"""An ASGI app built on the first request that reaches it.

Most editor sessions never see an agent, yet the MCP app means importing the SDK
with pydantic and starlette (~36 MB resident). The loopback endpoint therefore
listens with only this stand-in behind its Guard: health probes and refused
requests never get here, and the first authenticated MCP request pays the build.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from neuralmind.mcp.asgi import AppLifespan, ASGIApp, Receive, Scope, Send, plain

log = logging.getLogger("neuralmind.mcp")

STOPPED = "the MCP endpoint is stopping"


class LazyApp:
    """Stands in for the app `factory` builds (off the loop: the factory's own business).

    Concurrent first requests share one build. The built app's lifespan is started
    before any request reaches it and stopped when the server shuts down; a build
    still running then is cancelled and its app never started. A failed build is
    not retried: every request gets 503 with the reason (the log has it once).
    """

    def __init__(self, factory: Callable[[], Awaitable[ASGIApp]],
                 stop_timeout: float = 0.3) -> None:
        self._factory = factory
        self._stop_timeout = stop_timeout
        self._app: ASGIApp | None = None
        self._lifespan: AppLifespan | None = None
        self._building: asyncio.Task[ASGIApp] | None = None
        self._closed = False
        self.build_seconds: float | None = None

    @property
    def built(self) -> bool:
        return self._app is not None

    @property
    def building(self) -> bool:
        """A first request has started the build and it has not ended yet."""
        return self._building is not None and not self._building.done()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._serve_lifespan(receive, send)
            return
        try:
            app = await self.ready()
        except Exception as e:
            await plain(send, 503, f"the MCP server is not available: {e}".encode())
            return
        await app(scope, receive, send)

    async def ready(self) -> ASGIApp:
        """The built app, building it first if no request has yet."""
        if self._app is not None:
            return self._app
        if self._closed:
            raise RuntimeError(STOPPED)
        if self._building is None:
            self._building = asyncio.get_running_loop().create_task(self._build(),
                                                                    name="mcp-app-build")
            self._building.add_done_callback(_log_failure)
        building = self._building
        try:
            # shielded: a client that hangs up must not cancel the build the others wait for
            return await asyncio.shield(building)
        except asyncio.CancelledError:
            if building.cancelled():        # aclose() cut the build short, not our caller
                raise RuntimeError(STOPPED) from None
            raise

    async def _build(self) -> ASGIApp:
        t0 = time.perf_counter()
        app = await self._factory()
        lifespan = AppLifespan(app)
        try:
            await lifespan.start()
            if self._closed:
                raise RuntimeError(STOPPED)
        except BaseException:
            await lifespan.stop(self._stop_timeout)
            raise
        self._app, self._lifespan = app, lifespan
        self.build_seconds = time.perf_counter() - t0
        log.info("MCP app built on first use in %.2f s", self.build_seconds)
        return app

    async def _serve_lifespan(self, receive: Receive, send: Send) -> None:
        """The server's lifespan: nothing to start; shutdown stops whatever was built."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def refuse_new(self) -> None:
        """Before the server drains: no build from now on, and one under way is abandoned
        (its waiters get 503 at once). A built app keeps serving what is in flight."""
        self._closed = True
        building = self._building
        if building is not None and not building.done():
            building.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await building

    async def aclose(self) -> None:
        """Stop the built app (its sessions); safe to call again."""
        await self.refuse_new()
        lifespan, self._lifespan = self._lifespan, None
        if lifespan is not None:
            await lifespan.stop(self._stop_timeout)


def _log_failure(task: asyncio.Task[ASGIApp]) -> None:
    if task.cancelled():
        return
    error = task.exception()        # retrieved here even when every waiter hung up
    if error is not None and str(error) != STOPPED:
        log.warning("the MCP app could not be built: %s", error, exc_info=error)
