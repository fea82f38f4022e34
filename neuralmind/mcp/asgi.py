"""ASGI plumbing the loopback endpoint needs without importing any web framework.

The types and the plain-text responder let the Guard refuse requests and answer the
health route with the stdlib alone; `AppLifespan` runs an ASGI app's lifespan
protocol (startup, then shutdown) outside the server, for an app built after the
server started and so never offered the server's own lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

log = logging.getLogger("neuralmind.mcp")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LIFESPAN_SCOPE: dict[str, Any] = {"type": "lifespan",
                                  "asgi": {"version": "3.0", "spec_version": "2.0"}}


async def plain(send: Send, status: int, body: bytes,
                headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """A complete response: text/plain unless `headers` name another content type."""
    base = [(b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode())]
    extra = headers or []
    names = {k for k, _ in extra}
    await send({"type": "http.response.start", "status": status,
                "headers": [h for h in base if h[0] not in names] + extra})
    await send({"type": "http.response.body", "body": body})


async def posted_body(method: str, receive: Receive, send: Send, limit: int) -> bytes | None:
    """The body of a POST of at most `limit` bytes; anything else is answered here (405,
    413) and gives None."""
    if method != "POST":
        await plain(send, 405, b"POST a JSON request", [(b"allow", b"POST")])
        return None
    body = await read_body(receive, limit)
    if body is None:
        await plain(send, 413, f"a request is at most {limit} bytes".encode())
    return body


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """A request's whole body (b"" when the client left), or None past `limit` bytes."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b""
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


class AppLifespan:
    """Drives one app's lifespan from a task of its own, the way a server would.

    The app's lifespan (the MCP session manager's task group) must be entered and
    left by the same task: `start()` creates that task and waits for
    startup.complete; `stop()` asks for shutdown and waits, then cancels.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._inbox: asyncio.Queue[Message] = asyncio.Queue()
        self._started = asyncio.Event()     # startup answered, complete or failed
        self._ended = asyncio.Event()
        self._failure: str | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Raises RuntimeError when the app reports (or dies with) a startup failure."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="mcp-app-lifespan")
        await self._inbox.put({"type": "lifespan.startup"})
        started = asyncio.ensure_future(self._started.wait())
        try:
            await asyncio.wait({started, self._task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            started.cancel()
        if self._failure is not None or not self._started.is_set():   # failed, or returned
            await self._finish(0.0)
            raise RuntimeError(f"the MCP app did not start: {self._failure or 'it returned'}")

    async def stop(self, timeout: float) -> None:
        if self._task is None or self._task.done():
            return
        await self._inbox.put({"type": "lifespan.shutdown"})
        await self._finish(timeout)

    async def _finish(self, timeout: float) -> None:
        assert self._task is not None
        ended = asyncio.ensure_future(self._ended.wait())
        try:
            await asyncio.wait({ended, self._task}, timeout=timeout,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
        if not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    async def _run(self) -> None:
        try:
            await self.app({**LIFESPAN_SCOPE, "state": {}}, self._inbox.get, self._send)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self._failure = self._failure or f"{type(e).__name__}: {e}"
            log.warning("the MCP app's lifespan failed: %s", self._failure)
        finally:
            self._ended.set()

    async def _send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "lifespan.startup.complete":
            self._started.set()
        elif kind == "lifespan.startup.failed":
            self._failure = message.get("message") or "startup failed"
            self._started.set()
        elif kind in ("lifespan.shutdown.complete", "lifespan.shutdown.failed"):
            if kind.endswith("failed"):
                log.warning("the MCP app's shutdown failed: %s", message.get("message"))
            self._ended.set()
