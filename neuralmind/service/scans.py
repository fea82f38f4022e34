"""Decision scans: when HEAD moves, the decisions its commits changed the ground under go STALE.

The service scans at start (HEAD as it is), after each full build, and whenever the
HeadWatcher (or a watched-files event under `.git/`) sees HEAD move; each scan covers
every commit since the last one it saw (`Workspace.scan_commits`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from neuralmind.service.git_watch import HeadWatcher

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
    """The HEAD watcher and the scans it triggers."""

    def __init__(self, thread: EngineThread, workspace: Callable[[], Awaitable[Workspace]],
                 changed: Callable[[], None]) -> None:
        self._thread = thread
        self._workspace = workspace
        self._changed = changed          # decisions may have changed status
        self._head: HeadWatcher | None = None
        self._last_head: str | None = None

    def watch(self, root: Path) -> None:
        self._head = HeadWatcher(root, self.scan)
        self._head.start()

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

    async def head_touched(self) -> None:
        """A watched file under `.git/` changed: check HEAD now."""
        if self._head is not None:
            await self._head.check()

    async def stop(self) -> None:
        if self._head is not None:
            await self._head.stop()
