"""Turn the editor's keystroke stream into learning events and batches.

didChange arrives on every keystroke; the synapse layer wants one `edit` per
burst of typing in a file. A burst ends when another file is touched (so the
order of files — the transitions — is kept), on save or close, or when the
session has been quiet for `window` seconds. That quiet also closes the
co-activation batch: everything touched within one window of activity is
learned together (`on_idle`), as the product brief defines it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger("neuralmind.service")

EmitFn = Callable[[str, str], None]  # (kind, repo-relative file)


class EditDebouncer:
    """Coalesces one session's events; runs on the event loop only."""

    def __init__(self, emit: EmitFn, window: float, on_idle: Callable[[], None]) -> None:
        self._emit = emit
        self._on_idle = on_idle
        self.window = window
        self._pending: str | None = None           # file with an edit not yet emitted
        self._timer: asyncio.TimerHandle | None = None
        self._active = False                       # something happened since the last idle
        self.emitted = 0
        self.batches = 0

    def edit(self, path: str) -> None:
        if self._pending is not None and self._pending != path:
            self.flush_edit()
        self._pending = path
        self._touch()

    def event(self, kind: str, path: str) -> None:
        """open / save: flush any edit first so the order is kept."""
        self.flush_edit()
        self._send(kind, path)
        self._touch()

    def flush(self) -> None:
        """Emit what is pending and close the batch now (close of a document, shutdown)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._idle()

    def take_pending(self) -> str | None:
        """Stop the timer and hand over the unsent edit (shutdown sends it itself)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        path, self._pending = self._pending, None
        return path

    def _touch(self) -> None:
        self._active = True
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(max(0.0, self.window), self._idle)

    def _idle(self) -> None:
        self._timer = None
        self.flush_edit()
        if self._active:
            self._active = False
            self.batches += 1
            try:
                self._on_idle()
            except Exception as e:  # learning fails open
                log.warning("could not close the editing batch: %s", e)

    def flush_edit(self) -> None:
        path, self._pending = self._pending, None
        if path is not None:
            self._send("edit", path)

    def _send(self, kind: str, path: str) -> None:
        self.emitted += 1
        try:
            self._emit(kind, path)
        except Exception as e:  # learning fails open
            log.warning("could not queue %s event for %s: %s", kind, path, e)
