"""Freshness without an editor (standalone `neuralmind mcp`): the files an agent changes.

With an editor, didSave keeps the index fresh and edits teach the synapses. A
stdio MCP process serving an agent alone hears of neither, so an agent that edits
and asks again would get stale line numbers, and what its questions led to would
never be learned. Every few seconds the workspace is walked with the build's own
rules (one stat per file); a changed file is handed to the service as a save in the
agent's session (re-indexed, and learned after the question that session asked),
a deleted one as a watched-file change.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from neuralmind.errors import EngineError
from neuralmind.graph.walk import walk

if TYPE_CHECKING:
    from neuralmind.service.engine_service import EngineService

log = logging.getLogger("neuralmind.service")

POLL_SECONDS = 2.0
POLL_COST_FACTOR = 10       # a walk taking t seconds is repeated no sooner than 10 t later


class AgentEditWatcher:
    """Polls the workspace for the service; `session()` names the agent session to credit."""

    def __init__(self, service: EngineService, session: Callable[[], str | None],
                 interval: float = POLL_SECONDS) -> None:
        self.service = service
        self.session = session
        self.interval = interval
        self.changes = 0

    def _stat(self, known: dict[str, tuple[int, int]] | None) -> dict[str, tuple[int, int]]:
        return walk(self.service.root, self.service.config, known).sizes

    async def run(self) -> None:
        before = await asyncio.to_thread(self._stat, None)
        while True:
            await asyncio.sleep(self.interval)
            t0 = time.monotonic()
            try:
                now = await asyncio.to_thread(self._stat, before)
            except Exception as e:  # a walk failing (permissions, a vanished dir) is retried
                log.info("workspace poll failed: %s", e)
                continue
            self.interval = max(self.interval, POLL_COST_FACTOR * (time.monotonic() - t0))
            changed = sorted(r for r, stamp in now.items() if before.get(r) != stamp)
            gone = sorted(r for r in before if r not in now)
            before = now
            if changed or gone:
                await self._apply(changed, gone)

    async def _apply(self, changed: list[str], gone: list[str]) -> None:
        self.changes += len(changed) + len(gone)
        session = self.session()
        for rel in changed:
            try:
                if session:
                    await self.service.did_save(rel, session=session)
                else:
                    await self.service.files_changed([rel])
            except EngineError as e:
                log.info("ignoring a change to %s: %s", rel, e.message)
        if gone:
            await self.service.files_changed(gone)
