"""The team brain in a server: a long-lived sync when a team store is configured.

The sync (`neuralmind.team.sync.SyncTask`) runs on a thread of its own, never on the
event loop or the engine thread: it connects, LISTENs, pushes what the stores queued
and writes what teammates learned into them (`SynapseBridge`), reconnecting with
backoff. An unreachable store only delays sharing: the server serves exactly as
without one, and learning keeps queueing in the outbox. A local shared write wakes
the sync (`SynapseLayer.on_share` -> `kick`); teammates' record versions, when a sync pulls
some, notify the adapters (decisions may have changed) on the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from neuralmind.errors import EngineError

if TYPE_CHECKING:
    from neuralmind.engine import Workspace
    from neuralmind.service.engine_thread import EngineThread
    from neuralmind.team.sync import SyncTask

log = logging.getLogger("neuralmind.service")


class TeamSyncJob:
    """Starts, reports and stops a server's team sync."""

    def __init__(self, thread: EngineThread, workspace: Callable[[], Awaitable[Workspace]],
                 changed: Callable[[int], None]) -> None:
        self._thread = thread
        self._workspace = workspace
        self._changed = changed          # on the loop: events from teammates were applied
        self._loop: asyncio.AbstractEventLoop | None = None
        self.task: SyncTask | None = None
        self.error: str | None = None    # why no sync runs although one is configured

    async def start(self) -> None:
        """Start the sync when a store is configured (off the loop: the team component
        and git load on the engine thread)."""
        self._loop = asyncio.get_running_loop()
        ws = await self._workspace()
        try:
            self.task = await self._thread.run(ws.team_sync_task, self._pulled)
        except EngineError as e:
            self.error = e.message
            log.warning("team store configured but not used: %s", e.message)
            return
        if self.task is not None:
            self.task.start()

    def _pulled(self, n: int) -> None:
        """On the sync's thread: hand the news to the loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._changed, n)

    def status(self) -> dict[str, Any]:
        if self.task is None:
            return {"configured": self.error is not None, "running": False,
                    "last_error": self.error}
        return {"configured": True, "running": self.task.alive(), **self.task.status()}

    async def stop(self, timeout: float) -> None:
        task, self.task = self.task, None
        if task is not None:
            await asyncio.to_thread(task.stop, timeout)
