"""Decision scans: when HEAD moves, the decisions its commits changed the ground under go STALE.

The service scans at start (HEAD as it is), after each full build, and whenever HEAD
moves (the WorkTree's HeadWatcher, or a watched-files event under `.git/`); each scan
covers every commit since the last one it saw (`Workspace.scan_commits`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neuralmind.engine import Workspace
    from neuralmind.service.engine_thread import EngineThread

log = logging.getLogger("neuralmind.service")


def _scan(ws: Workspace, previous: str | None) -> str | None:
    """Scan the commits since `previous`; the new HEAD (None outside git)."""
    reports = ws.scan_commits(previous)
    if not reports:
        return previous            # HEAD has not moved
    last = reports[-1]
    if last.error and not last.commit:
        log.debug("no decision scan: %s", last.error)
        return None
    return last.commit


class DecisionScans:
    """Decision scans, each from the last HEAD scanned."""

    def __init__(self, thread: EngineThread, workspace: Callable[[], Awaitable[Workspace]],
                 changed: Callable[[], None]) -> None:
        self._thread = thread
        self._workspace = workspace
        self._changed = changed          # decisions may have changed status
        self._last_head: str | None = None

    def spawn(self) -> None:
        self._thread.spawn(self.scan(), "decision-scan")

    async def scan(self) -> None:
        ws = await self._workspace()
        try:
            self._last_head = await self._thread.run(_scan, ws, self._last_head)
        except Exception as e:
            log.warning("decision scan failed: %s", e)
            return
        self._changed()
