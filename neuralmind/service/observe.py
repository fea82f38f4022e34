"""The service's notifications as `index` events for the observatory.

A ServiceListener like the LSP's features: build start, progress (at most every
INDEX_EVENT_INTERVAL_SECONDS, a build reports every file), the new generation
swapped in, and saved files made searchable.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from neuralmind.config import INDEX_EVENT_INTERVAL_SECONDS
from neuralmind.events import bus, publish
from neuralmind.service.events import IndexingState, ServiceListener

if TYPE_CHECKING:
    from neuralmind.service.child_build import BuildOutcome


class IndexEvents(ServiceListener):
    """Publishes what the indexing jobs report (on the event loop, like every listener)."""

    def __init__(self) -> None:
        self._last_progress = 0.0

    def indexing_started(self) -> None:
        publish("index", phase="started")

    def indexing_progress(self, state: IndexingState) -> None:
        if not bus.active:
            return
        now = time.monotonic()
        if now - self._last_progress >= INDEX_EVENT_INTERVAL_SECONDS or state.done == state.total:
            self._last_progress = now
            publish("index", phase=state.phase, done=state.done, total=state.total)

    def indexing_finished(self, outcome: BuildOutcome) -> None:
        publish("index", phase="swapped" if outcome.ok else "failed", files=outcome.files,
                nodes=outcome.nodes, seconds=round(outcome.seconds, 2),
                message=outcome.message, cancelled=outcome.cancelled)

    def index_updated(self, paths: list[str]) -> None:
        publish("index", phase="updated", files=paths)
