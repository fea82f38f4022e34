"""The work tree as answers are stamped with it: HEAD, the change set, checkouts.

HEAD and the change set (`git status`) are read off the event loop and kept here, so
stamping an answer costs nothing: the change set is re-read DIRTY_REFRESH_SECONDS after
the last write the server heard of (a save, a watched file, an agent's edit), HEAD when
the HeadWatcher sees it move. A move to another commit (checkout, pull, rebase) re-indexes
exactly the files that differ between the two commits (`git diff --name-only old new`)
and whose bytes on disk are not what the index holds (a commit rewrites nothing; a
checkout rewrites what differs): a few through the per-save path, more through the
background build's child process, `partial` answers until they are in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from neuralmind.config import CHECKOUT_INLINE_MAX_FILES, DIRTY_REFRESH_SECONDS
from neuralmind.repo.git import changed_files, diff_names, head_commit
from neuralmind.service.git_watch import HeadWatcher

if TYPE_CHECKING:
    from neuralmind.engine import Workspace
    from neuralmind.service.engine_thread import EngineThread

log = logging.getLogger("neuralmind.service")

Reindex = Callable[[list[str]], None]
Rebuild = Callable[[list[str] | None], None]    # None: every file


class WorkTree:
    """HEAD, the change set, and the re-indexing a checkout needs (event loop only)."""

    def __init__(self, root: Path, thread: EngineThread,
                 workspace: Callable[[], Awaitable[Workspace]],
                 inline: Reindex, background: Rebuild,
                 moved: Callable[[str | None, str | None], Awaitable[None]]) -> None:
        self.root = root
        self._thread = thread
        self._workspace = workspace
        self._inline = inline              # a few files: the per-save path
        self._background = background      # many: the background build's child
        self._moved = moved                # after a move (old, new): what else it means
        self.head: str | None = None
        self.dirty: list[str] | None = None
        self.checkout_pending: set[str] = set()   # files a checkout changed, not indexed yet
        self.checkouts = 0
        self._timer: asyncio.TimerHandle | None = None
        self._refresh: asyncio.Task[None] | None = None
        self._watcher: HeadWatcher | None = None

    async def start(self, watch: bool) -> None:
        self.head = await asyncio.to_thread(head_commit, self.root)
        await self._read_dirty()
        if watch:
            self._watcher = HeadWatcher(self.root, self.head_moved)
            self._watcher.start()

    async def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._watcher is not None:
            await self._watcher.stop()

    # --- the change set -----------------------------------------------------------------
    def touched(self) -> None:
        """Something wrote to the work tree: read the change set again once writes pause."""
        self._timer = self._thread.restart_timer(self._timer, DIRTY_REFRESH_SECONDS, self._due)

    def _due(self) -> None:
        self._timer = None
        if self._refresh is None or self._refresh.done():
            self._refresh = self._thread.spawn(self._read_dirty(), "change-set")
        else:
            self.touched()           # one read at a time; this one follows it

    async def _read_dirty(self) -> None:
        self.dirty = await asyncio.to_thread(changed_files, self.root)

    # --- HEAD ---------------------------------------------------------------------------
    async def check_head(self) -> None:
        """A watched file under `.git/` changed: look at HEAD now."""
        if self._watcher is not None:
            await self._watcher.check()

    async def head_moved(self) -> None:
        old = self.head
        self.head = await asyncio.to_thread(head_commit, self.root)
        self.touched()
        if old and self.head and old != self.head:
            await self._reindex_checkout(old, self.head)
        await self._moved(old, self.head)

    async def _reindex_checkout(self, old: str, new: str) -> None:
        differ = await asyncio.to_thread(diff_names, self.root, old, new)
        if differ is None:
            log.info("HEAD moved from %s to %s, which git cannot compare: full update",
                     old[:12], new[:12])
            self._background(None)
            return
        ws = await self._workspace()
        changed = sorted(await self._thread.run(ws.stale_files, differ)) if differ else []
        if not changed:
            return
        self.checkouts += 1
        log.info("HEAD moved %s -> %s: re-indexing the %d files that differ",
                 old[:12], new[:12], len(changed))
        self.checkout_pending.update(changed)
        if len(changed) > CHECKOUT_INLINE_MAX_FILES:
            self._background(changed)
        else:
            self._inline(changed)

    def indexed(self, paths: list[str]) -> None:
        """These files are searchable as they are now."""
        self.checkout_pending.difference_update(paths)

    def all_indexed(self) -> None:
        """A background build finished: whatever a checkout changed is in."""
        self.checkout_pending.clear()
