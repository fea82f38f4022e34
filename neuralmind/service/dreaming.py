"""Idle dreams: the server consolidates memory when nobody has needed it for a while.

Every request and document event counts as activity. A timer checks every
`check_seconds`; once the server has been idle DREAM_IDLE_SECONDS and the store's last
dream is more than DREAM_INTERVAL_HOURS old (by the store's clock, so at most once a
night by default), it runs every phase on the engine thread. `dream_when_idle = false`
in `.neuralmind.toml` (or the editor setting) turns it off; a failed dream is logged and
retried at the next interval, never a crash.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from neuralmind.config import DREAM_IDLE_SECONDS, DREAM_INTERVAL_HOURS, WorkspaceConfig

if TYPE_CHECKING:
    from neuralmind.engine import Workspace
    from neuralmind.service.engine_thread import EngineThread

log = logging.getLogger("neuralmind.service")


def _due(ws: Workspace) -> bool:
    """Whether the store holds memories and its last dream is older than the interval."""
    memory = ws.memory
    if not memory.path.exists():
        return False
    stats = memory.stats()
    last = stats["last_dream"]
    return stats["atoms"] > 0 and (last is None
                                   or memory.clock.now() - last >= DREAM_INTERVAL_HOURS * 3600)


class IdleDreams:
    def __init__(self, thread: EngineThread, workspace: Callable[[], Awaitable[Workspace]],
                 config: WorkspaceConfig, idle_seconds: float = DREAM_IDLE_SECONDS) -> None:
        self._thread = thread
        self._workspace = workspace
        self._config = config
        self.idle_seconds = idle_seconds
        self.last_activity = time.monotonic()
        self.dreams = 0
        self._timer: asyncio.TimerHandle | None = None

    def touch(self) -> None:
        self.last_activity = time.monotonic()

    def start(self, check_seconds: float | None = None) -> None:
        self._check = check_seconds or max(1.0, self.idle_seconds / 4)
        self._arm()

    def _arm(self) -> None:
        self._timer = self._thread.restart_timer(self._timer, self._check, self._tick)

    def _tick(self) -> None:
        self._thread.spawn(self.maybe_dream(), "idle-dream")
        self._arm()

    async def maybe_dream(self) -> bool:
        """Dream now if the server is idle and the store is due; True when it dreamt."""
        if not self._config.dream_when_idle:
            return False
        if time.monotonic() - self.last_activity < self.idle_seconds:
            return False
        ws = await self._workspace()
        try:
            if not await self._thread.run(_due, ws):
                return False
            report = await self._thread.run(ws.dream, "all")
        except Exception as e:
            log.warning("idle dream failed: %s", e)
            return False
        self.dreams += 1
        log.info("dreamt while idle: %d merged, %d linked, %d summarised", len(report.merged),
                 len(report.linked), len(report.summarised))
        return True

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
