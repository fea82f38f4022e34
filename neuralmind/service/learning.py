"""Learning from the editor and agents: document events become synapse updates.

Events pass through one EditDebouncer per session (keystrokes become one edit per
file and window, a quiet window closes a co-activation batch), then wait in one
ordered queue drained by one task onto the engine thread. Learning fails open: a
broken synapse store logs a warning and editing goes on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from neuralmind.events import bus, publish
from neuralmind.service.editing import EditDebouncer

if TYPE_CHECKING:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.engine import Workspace
    from neuralmind.service.engine_thread import EngineThread

log = logging.getLogger("neuralmind.service")

BATCH_END = ""       # a queued learning event that closes the session's co-activation batch
Event = tuple[str, str, str]      # (session, kind, repo-relative file)


def apply_events(ws: Workspace, events: list[Event]) -> None:
    """Apply queued events in order (engine thread)."""
    for session, kind, rel in events:
        if kind == BATCH_END:
            _flush_session(ws, session)
        else:
            ws.editing_event(session, kind, rel)


def _flush_session(ws: Workspace, session: str) -> None:
    try:
        ws.synapses.flush(session)
    except Exception as e:  # learning fails open
        log.warning("could not learn the editing batch: %s", e)


def record_query(ws: Workspace, session: str, question: str, ids: list[str]) -> None:
    """A session's question and its hits, so later edits and feedback learn from them."""
    try:
        ws.synapses.record_query(session, question, ids)
    except Exception as e:  # learning fails open
        log.warning("could not record the question: %s", e)


def _end_sessions(ws: Workspace, queued: list[Event], last_edits: dict[str, str | None]) -> None:
    """Apply what is still queued, send the last unsent edits and end the sessions,
    which learns their batches."""
    apply_events(ws, queued)
    for session, path in last_edits.items():
        if path is not None:
            ws.editing_event(session, "edit", path)
        ws.editing_event(session, "session_end", "")


class Learning:
    """Per-session debouncers and the ordered queue of learning events."""

    def __init__(self, thread: EngineThread, workspace: Callable[[], Awaitable[Workspace]],
                 config: WorkspaceConfig) -> None:
        self._thread = thread
        self._workspace = workspace
        self._config = config
        self._debouncers: dict[str, EditDebouncer] = {}
        self._queue: list[Event] = []     # not applied yet
        self._task: asyncio.Task[None] | None = None
        self.events = 0
        self.batches = 0

    def _on(self) -> bool:
        return self._config.learning and not self._thread.closed

    def debouncer(self, session: str) -> EditDebouncer:
        deb = self._debouncers.get(session)
        if deb is None:
            deb = EditDebouncer(functools.partial(self._event, session),
                                self._config.debounce_seconds,
                                functools.partial(self._batch_done, session))
            self._debouncers[session] = deb
            self._event(session, "session_start", "")
        return deb

    def flush_edit(self, session: str) -> None:
        """The document closed: its pending edit is sent now."""
        deb = self._debouncers.get(session)
        if deb is not None:
            deb.flush_edit()

    def set_window(self, seconds: float) -> None:
        for deb in self._debouncers.values():
            deb.window = seconds

    def _event(self, session: str, kind: str, rel: str) -> None:
        if rel and bus.active:
            publish("file_activity", session=session, action=kind, file=rel)
        if not self._on():
            return
        self.events += 1
        self._enqueue(session, kind, rel)

    def _batch_done(self, session: str) -> None:
        """A window of quiet: what the session touched is learned as one batch."""
        publish("file_activity", session=session, action="batch_end")
        if self._on():
            self._enqueue(session, BATCH_END, "")

    def _enqueue(self, session: str, kind: str, rel: str) -> None:
        """Learning events wait in one ordered list, drained by one task: a burst costs one
        hop to the engine thread, and a backlog is a list of tuples, not a pending task per
        event (~4.5 KB each: RSS +60 MB after 14,000 fast file switches)."""
        self._queue.append((session, kind, rel))
        if self._task is None or self._task.done():
            self._task = self._thread.spawn(self._drain(), "learning")

    async def _drain(self) -> None:
        ws = await self._workspace()
        while self._queue:
            events, self._queue = self._queue, []
            await self._thread.run(apply_events, ws, events)
            self.batches += sum(1 for _, kind, _ in events if kind == BATCH_END)

    def take_unsent(self) -> tuple[list[Event], dict[str, str | None]]:
        """At close: the queue and each session's last unsent edit (nothing is sent after)."""
        last_edits = {s: deb.take_pending() for s, deb in self._debouncers.items()}
        queued, self._queue = self._queue, []
        return queued, last_edits

    async def end_sessions(self, ws: Workspace, queued: list[Event],
                           last_edits: dict[str, str | None], timeout: float) -> None:
        await asyncio.wait_for(self._thread.run(_end_sessions, ws, queued, last_edits),
                               timeout=timeout)
