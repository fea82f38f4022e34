"""Unsaved editor buffers: kept as the editor sends them, extracted once typing pauses.

didOpen gives a document's text, didChange its edits. On the event loop an edit only
joins a list (no text is touched per keystroke: applying edits to pygls' copy cost
~30 ms a keystroke in a 370 KB file). Once edits pause for OVERLAY_IDLE_SECONDS, every
buffer with new edits goes to the engine thread, which applies the edits and extracts
the text in place of the file (`Workspace.set_buffer`): its names are searchable when
that returns; embeddings follow on save. Each pass ends by settling the heap, as saves
do when they pause (`Workspace.settle_after_buffers`). A buffer whose text equals the
file on disk is not unsaved (an undo back to the saved text drops what was extracted);
a closed buffer that was never saved goes back to the file on disk.

A document's `version` counts edits; `extracted` is the version the index holds;
`edited` says edits came since the last extraction or save, so an answer knows which
buffers have edits it has not seen (their hits are stale) and a buffer just opened or
saved is not listed as unsaved while its extraction waits.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from neuralmind.config import OVERLAY_IDLE_SECONDS
from neuralmind.engine.edits import TextChange, apply_changes
from neuralmind.errors import EngineError

if TYPE_CHECKING:
    from neuralmind.engine import Workspace
    from neuralmind.service.engine_thread import EngineThread

log = logging.getLogger("neuralmind.service")


@dataclass
class Buffer:
    text: str                                   # as of the last extraction (or didOpen)
    edits: list[TextChange] = field(default_factory=list)   # not applied to `text` yet
    version: int = 0
    extracted: int = 0                          # the version `text` (and the index) is at
    unsaved: bool = False                       # differs from the file, as last extracted
    # edits since the last extraction or save: the text may differ from the file and the
    # index. An opened buffer is the file's text (a restored unsaved one is found when it
    # is extracted), and a save puts the text in the file and re-indexes it from there.
    edited: bool = False


class Buffers:
    """Open documents' texts and edits, and the idle timer that extracts them."""

    def __init__(self, thread: EngineThread, workspace: Callable[[], Awaitable[Workspace]],
                 updated: Callable[[list[str]], None]) -> None:
        self._thread = thread
        self._workspace = workspace
        self._updated = updated                 # files whose buffer text is searchable now
        self.encoding = "utf-16"                # position units the client uses
        self.open: dict[str, Buffer] = {}
        self.extractions = 0
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    # --- what answers are stamped with ------------------------------------------------
    @property
    def unsaved(self) -> set[str]:
        """Buffers whose text is not the file's (or that have edits not looked at yet)."""
        return {r for r, b in self.open.items() if b.unsaved or b.edited}

    @property
    def not_indexed(self) -> set[str]:
        """Buffers with edits the index has not seen."""
        return {r for r, b in self.open.items() if b.edited}

    def texts(self) -> Callable[[], dict[str, str]]:
        """The unsaved buffers' texts for a review of the pending change, as a call for the
        engine thread (path -> text): edits not extracted yet are applied to a copy there,
        so a review right after typing sees what the editor shows, not the file on disk."""
        pending = {r: (b.text, list(b.edits)) for r, b in self.open.items()
                   if b.unsaved or b.edited}
        encoding = self.encoding
        return lambda: {r: apply_changes(text, edits, encoding) if edits else text
                        for r, (text, edits) in pending.items()}

    # --- document events (event loop) -------------------------------------------------
    def opened(self, rel: str, text: str) -> None:
        """The editor's text may differ from the file (a buffer restored unsaved)."""
        self.open[rel] = Buffer(text, version=1, extracted=0)
        self._restart()

    def changed(self, rel: str, edits: list[TextChange]) -> None:
        buf = self.open.get(rel)
        if buf is None:
            return              # opened before this server started: nothing to apply to
        buf.edits.extend(edits)
        buf.version += 1
        buf.edited = True
        self._restart()

    def saved(self, rel: str) -> None:
        """The file now holds the buffer's text; the save path re-reads it from disk."""
        buf = self.open.get(rel)
        if buf is not None:
            buf.unsaved = buf.edited = False
            if not buf.edits:
                buf.extracted = buf.version

    def closed(self, rel: str) -> None:
        """A buffer closed unsaved is gone: the index goes back to the file."""
        buf = self.open.pop(rel, None)
        if buf is not None and (buf.unsaved or buf.edited or buf.version != buf.extracted):
            self._thread.spawn(self._revert(rel), "buffer-revert")

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    # --- extraction ---------------------------------------------------------------------
    def _restart(self) -> None:
        self._timer = self._thread.restart_timer(self._timer, OVERLAY_IDLE_SECONDS, self._due)

    def _due(self) -> None:
        self._timer = None
        if self._task is None or self._task.done():
            self._task = self._thread.spawn(self._extract(), "buffer-extract")
        else:
            self._restart()             # one pass at a time; the next follows it

    async def _extract(self) -> None:
        ws = await self._workspace()
        extracted = self.extractions
        for rel, buf in list(self.open.items()):
            if buf.version == buf.extracted:
                continue
            version, edits, buf.edits = buf.version, buf.edits, []
            try:
                text, unsaved = await self._thread.run(_apply, ws, rel, buf.text, edits,
                                                       self.encoding)
            except EngineError:
                return                  # shutting down
            except Exception:
                log.exception("extracting the unsaved buffer of %s failed", rel)
                buf.extracted = version     # not retried until it changes again
                continue
            buf.text, buf.extracted, buf.unsaved = text, version, unsaved
            buf.edited = buf.version != version     # edits that came in meanwhile
            self.extractions += 1
            self._updated([rel])
        if extracted != self.extractions:
            await self._settle(ws)

    async def _settle(self, ws: Workspace) -> None:
        """The heap settled once the pass is done (`Workspace.settle_after_buffers`)."""
        try:
            await self._thread.run(ws.settle_after_buffers)
        except EngineError:
            pass                        # shutting down

    async def _revert(self, rel: str) -> None:
        ws = await self._workspace()
        try:
            await self._thread.run(ws.drop_buffer, rel)
        except EngineError:
            return
        self._updated([rel])


def _apply(ws: Workspace, rel: str, text: str, edits: list[TextChange],
           encoding: str) -> tuple[str, bool]:
    """(the buffer's text, whether it differs from the file) after extracting it."""
    text = apply_changes(text, edits, encoding) if edits else text
    return text, ws.set_buffer(rel, text)
