"""The in-process event bus: what the brain does, as it happens.

Emit points across the engine and the servers call `publish(kind, **data)`. With no
subscriber and no log writer (a CLI run with `NEURALMIND_EVENT_LOG=0`, most tests)
that is one attribute test and a return: nothing is built. Otherwise the event gets an
id unique across processes (`<process>-<n>`), subscribers are called in the
publisher's thread (they must be quick and thread-safe: the observatory hands events
to its event loop), and the writer appends it to `.neuralmind/events.jsonl` for the
other processes (`events.log`).
"""

from __future__ import annotations

import itertools
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger("neuralmind.events")

# What can happen (ARCHITECTURE.md, "Events"): a new kind is added here first.
KINDS = frozenset({
    "synapse",        # pairs reinforced or weakened (learning)
    "file_activity",  # open / edit / save events of a session, as learning sees them
    "query",          # a question -> files, tokens served and replaced
    "memory",         # remember, rate, state change, dream: {change, id, label, files?}
    "decision",       # recorded, stale, invalidated, restored
    "index",          # build progress, a generation swapped in, saved files re-indexed
    "editor",         # the active file of a session
    "hook",           # what an agent hook pushed, to which agent: {agent, event, pushed, ms}
    "request",        # an LSP request or MCP tool call answered, with its latency
})


@dataclass(frozen=True, slots=True)
class Event:
    id: str
    kind: str
    ts: float                   # seconds since the epoch
    origin: str                 # the process that published it ("lsp 1234", "cli 99", ...)
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "ts": self.ts, "origin": self.origin,
                "data": self.data}

    @classmethod
    def from_json(cls, obj: Any) -> Event | None:
        """The event a log line holds, or None when it is not one (a torn or foreign line)."""
        if not isinstance(obj, dict):
            return None
        eid, kind, ts, data = obj.get("id"), obj.get("kind"), obj.get("ts"), obj.get("data")
        if not isinstance(eid, str) or kind not in KINDS or not isinstance(ts, (int, float)):
            return None
        return cls(eid, kind, float(ts), str(obj.get("origin", "")),
                   data if isinstance(data, dict) else {})


Subscriber = Callable[[Event], None]


class Writer(Protocol):
    def append(self, event: Event) -> None: ...


class EventBus:
    """Publish/subscribe for one process; see the module docstring."""

    def __init__(self) -> None:
        self.process = secrets.token_hex(4)      # prefix of this process's event ids
        self.label = f"python {os.getpid()}"
        self._seq = itertools.count(1)           # next() is atomic under the GIL
        self._subscribers: tuple[Subscriber, ...] = ()   # replaced, never mutated
        self._writer: Writer | None = None
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """Someone would see an event: emit points may skip preparing one otherwise."""
        return bool(self._subscribers) or self._writer is not None

    def set_label(self, name: str) -> None:
        """What this process is ("lsp", "cli", "mcp", "hook", "serve"), shown with its events."""
        self.label = f"{name} {os.getpid()}"

    def set_writer(self, writer: Writer | None) -> None:
        self._writer = writer

    @property
    def writer(self) -> Writer | None:
        return self._writer

    def publish(self, kind: str, **data: Any) -> Event | None:
        """Tell whoever listens that `kind` happened; O(1) and nothing built when nobody does."""
        if not self._subscribers and self._writer is None:
            return None
        if kind not in KINDS:
            raise ValueError(f"unknown event kind {kind!r}")
        event = Event(f"{self.process}-{next(self._seq)}", kind, time.time(), self.label, data)
        self._dispatch(event)
        writer = self._writer
        if writer is not None:
            writer.append(event)
        return event

    def republish(self, event: Event) -> None:
        """Another process's event (read from the log): to subscribers only."""
        self._dispatch(event)

    def own(self, event_id: str) -> bool:
        return event_id.startswith(self.process + "-")

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call `subscriber(event)` for every event from now on; returns the unsubscribe."""
        with self._lock:
            self._subscribers = (*self._subscribers, subscriber)

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers = tuple(s for s in self._subscribers if s is not subscriber)
        return unsubscribe

    def _dispatch(self, event: Event) -> None:
        for subscriber in self._subscribers:
            try:
                subscriber(event)
            except Exception:           # a broken listener never breaks the publisher
                log.exception("event subscriber %r failed", subscriber)


bus = EventBus()
publish = bus.publish
