"""Live events for open pages: the bus (and the log of other processes) as Server-Sent Events.

The hub subscribes to the bus and starts tailing the event log only while at least
one page is connected, so an editor nobody watches pays nothing. Events reach it in
the publisher's thread (engine thread, event loop, the tailer); each is encoded once
and handed to every page's queue on the event loop. A page that falls behind loses
its oldest events (it is a live view, not a queue).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
from pathlib import Path
from typing import Any

from neuralmind.config import OBSERVATORY_CLIENT_QUEUE, OBSERVATORY_HEARTBEAT_SECONDS
from neuralmind.events import Event, EventBus, bus
from neuralmind.events.log import EventLogTailer

log = logging.getLogger("neuralmind.observatory")

Send = Any          # the ASGI send/receive callables (typed in app.py)


class Page:
    """One connected page: its queue of encoded events, filled on the event loop."""

    def __init__(self) -> None:
        self.queue: collections.deque[bytes] = collections.deque(maxlen=OBSERVATORY_CLIENT_QUEUE)
        self.ready = asyncio.Event()
        self.closed = False
        self.dropped = 0

    def put(self, frame: bytes) -> None:
        if len(self.queue) == self.queue.maxlen:
            self.dropped += 1
        self.queue.append(frame)
        self.ready.set()

    def take(self) -> bytes:
        frames = b"".join(self.queue)
        self.queue.clear()
        self.ready.clear()
        return frames


class EventHub:
    """The pages of one server and the subscription that feeds them."""

    def __init__(self, root: Path, target: EventBus = bus) -> None:
        self.root = Path(root)
        self.bus = target
        self.pages: set[Page] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: Any = None
        self._tailer: EventLogTailer | None = None

    def open(self) -> Page:
        page = Page()
        self.pages.add(page)
        if self._unsubscribe is None:
            self._loop = asyncio.get_running_loop()
            self._unsubscribe = self.bus.subscribe(self._deliver)
            self._tailer = EventLogTailer(self.root, self.bus)
            self._tailer.start()
        return page

    def close(self, page: Page) -> None:
        page.closed = True
        page.ready.set()
        self.pages.discard(page)
        if not self.pages and self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
            tailer, self._tailer = self._tailer, None
            if tailer is not None:
                tailer.stop(wait=False)     # its thread ends within one poll interval

    def shutdown(self) -> None:
        """The server stops: every stream ends now."""
        for page in list(self.pages):
            self.close(page)

    def _deliver(self, event: Event) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        frame = (f"id: {event.id}\ndata: ".encode()
                 + json.dumps(event.to_json(), ensure_ascii=False, separators=(",", ":"),
                              default=str).encode("utf-8") + b"\n\n")
        with contextlib.suppress(RuntimeError):      # the loop closed meanwhile
            loop.call_soon_threadsafe(self._fan_out, frame)

    def _fan_out(self, frame: bytes) -> None:
        for page in self.pages:
            page.put(frame)


async def serve_events(hub: EventHub, receive: Send, send: Send) -> None:
    """One SSE response: events as they come, a comment when idle, until the page leaves."""
    page = hub.open()
    disconnected = asyncio.ensure_future(_wait_disconnect(receive))
    try:
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff")]})
        await send({"type": "http.response.body", "body": b"retry: 2000\n: connected\n\n",
                    "more_body": True})
        while not page.closed and not disconnected.done():
            waiting = asyncio.ensure_future(page.ready.wait())
            await asyncio.wait({waiting, disconnected}, timeout=OBSERVATORY_HEARTBEAT_SECONDS,
                               return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
            if disconnected.done():
                break
            body = page.take() or b": idle\n\n"
            await send({"type": "http.response.body", "body": body, "more_body": True})
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    except OSError:
        pass                    # the page went away mid-write
    finally:
        disconnected.cancel()
        hub.close(page)


async def _wait_disconnect(receive: Send) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return
