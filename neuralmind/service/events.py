"""What the service tells its adapters: indexing state and change notifications."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neuralmind.service.child_build import BuildOutcome


@dataclasses.dataclass
class IndexingState:
    phase: str
    done: int
    total: int
    semantic: float | None = None    # share of nodes with a vector in the served index
    graph_ready: bool = False        # the build's graph is served: saves apply at once

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"phase": self.phase, "done": self.done, "total": self.total,
                               "graph_ready": self.graph_ready}
        if self.semantic is not None:
            out["semantic"] = self.semantic
        return out


class ServiceListener:
    """Notifications from the service, called on the event loop. Subclass it and override
    what you need; the rest stay no-ops."""

    def indexing_started(self) -> None: ...

    def indexing_progress(self, state: IndexingState) -> None: ...

    def indexing_finished(self, outcome: BuildOutcome) -> None: ...

    def index_updated(self, paths: list[str]) -> None: ...

    def decisions_changed(self) -> None: ...

    def buffers_changed(self) -> None:
        """A buffer got unsaved changes, or was saved or closed."""
