"""Notice when git HEAD moves (commit, checkout, pull, rebase) without any hook.

Polling a handful of `stat` calls is cheaper and more reliable than relying on
the editor: clients usually exclude `.git/` from file watching. A move is the
pair (HEAD's content, the mtime of the ref it points to, packed-refs' mtime)
changing; the callback then resolves what actually changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from neuralmind.repo.git import git_dir, head_signature

log = logging.getLogger("neuralmind.service")

POLL_SECONDS = 0.5


class HeadWatcher:
    """Calls `on_move` (a coroutine) after each observed HEAD move; one call at a time."""

    def __init__(self, root: Path, on_move: Callable[[], Awaitable[None]],
                 interval: float = POLL_SECONDS) -> None:
        self.root = root
        self._on_move = on_move
        self._interval = interval
        self._task: asyncio.Task[None] | None = None
        self._gdir = git_dir(root)
        self._last = head_signature(self._gdir) if self._gdir else None
        self.moves = 0

    @property
    def active(self) -> bool:
        return self._gdir is not None

    def start(self) -> None:
        if self._gdir is None:
            log.debug("%s is not a git work tree: HEAD watching is off", self.root)
            return
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="head-watch")

    async def check(self) -> bool:
        """Poll once now (also used on didChangeWatchedFiles for .git/HEAD)."""
        if self._gdir is None:
            return False
        sig = head_signature(self._gdir)
        if sig == self._last:
            return False
        self._last = sig
        self.moves += 1
        log.info("git HEAD moved")
        try:
            await self._on_move()
        except Exception:
            log.exception("handling a HEAD move failed")
        return True

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.check()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
