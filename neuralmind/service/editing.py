"""Turn the editor's keystroke stream into learning events.

didChange arrives on every keystroke; the synapse layer wants one `edit` per
burst of typing in a file. A burst ends after `window` seconds of quiet in that
file, or at once when another file is touched (so the order of files — the
transitions — is kept), or on save/close. Opens, saves and closes pass
straight through, after any edit they follow.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger("neuralmind.service")

EmitFn = Callable[[str, str], None]  # (kind, repo-relative file)


class EditDebouncer:
    """Coalesces edit events per file; runs on the event loop only."""

    def __init__(self, emit: EmitFn, window: float) -> None:
        self._emit = emit
        self.window = window
        self._pending: str | None = None           # file with an edit not yet emitted
        self._timer: asyncio.TimerHandle | None = None
        self.emitted = 0

    def edit(self, path: str) -> None:
        if self._pending is not None and self._pending != path:
            self.flush()
        self._pending = path
        self._restart_timer()

    def event(self, kind: str, path: str) -> None:
        """open / save / close: flush any edit first so the order is kept."""
        if self._pending is not None:
            self.flush()
        self._send(kind, path)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        path, self._pending = self._pending, None
        if path is not None:
            self._send("edit", path)

    def _restart_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(max(0.0, self.window), self.flush)

    def _send(self, kind: str, path: str) -> None:
        self.emitted += 1
        try:
            self._emit(kind, path)
        except Exception as e:  # learning fails open
            log.warning("could not queue %s event for %s: %s", kind, path, e)
