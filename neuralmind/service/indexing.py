"""Background indexing: full builds in a child process, swapped in on the engine thread.

The full build runs in a child process (see `build_worker`), because tree-sitter
holds the GIL while parsing; the parent relays its progress, and when the child
has written the graph and keyword index the engine thread swaps that generation
in and serves it while the child embeds. Only that graph phase makes saves wait
(`graph_phase`): from `graph_ready` on they are applied here at once, and the child's
vectors are merged in as they land (index/vector_handoff.py); when it ends, nothing is
swapped in again (the graph and keyword index served are newer than anything it
wrote). While a build runs, another requested one is queued to follow it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.engine import coverage
from neuralmind.service.child_build import ChildBuild
from neuralmind.service.events import IndexingState
from neuralmind.service.warming import warm_up

if TYPE_CHECKING:
    from neuralmind.engine import Workspace
    from neuralmind.index.search_index import VectorsRead
    from neuralmind.service.child_build import BuildOutcome
    from neuralmind.service.engine_thread import EngineThread

log = logging.getLogger("neuralmind.service")


class BackgroundIndexing:
    """Full builds, one at a time, with their progress as `state`."""

    def __init__(self, root: Path, thread: EngineThread,
                 workspace: Callable[[], Awaitable[Workspace]],
                 config_values: Callable[[], dict[str, Any]], log_file: str | None,
                 notify: Callable[..., None], after: Callable[[], None],
                 graph_served: Callable[[], None],
                 write_index: Callable[[], Awaitable[None]]) -> None:
        self.root = root
        self._thread = thread
        self._workspace = workspace
        self._config_values = config_values
        self._log_file = log_file
        self._notify = notify
        self._after = after                # every build ended: apply waiting saves, scan
        self._graph_served = graph_served  # the build's graph is served: saves apply now
        self._write_index = write_index    # the index written once saves pause (Freshness)
        self.graph_phase = False           # a build's graph phase runs: saves wait for it
        self._served = False               # this build's graph is served (it embeds now)
        self.state: IndexingState | None = None
        self.last_full_build: float | None = None
        self.last_error: str | None = None
        self.last_ok = False               # the last build ended complete
        self._build: ChildBuild | None = None
        self._task: asyncio.Task[None] | None = None
        self._requested = False
        self._paths: set[str] | None = None   # what the next build looks at (None: all)
        self._attention: list[str] = []
        self.semantic: float | None = None     # coverage the server has loaded, while embedding

    def attend(self, files: list[str]) -> None:
        """Files to embed first (service/focus.py), for this build and the next."""
        self._attention = list(files)
        if self._build is not None:
            self._build.attend(self._attention)

    def request(self, paths: list[str] | None = None) -> None:
        """Bring everything up to date in the background (unchanged files are skipped by
        hash), or only `paths` (a checkout); while a build runs, another one is queued to
        follow it (covering every path asked for meanwhile)."""
        if paths is None or self._paths is None and self._requested:
            self._paths = None
        else:
            self._paths = (self._paths or set()) | set(paths)
        if self._task is not None and not self._task.done():
            self._requested = True
            return
        self._task = self._thread.spawn(self._run(), "full-build")

    def cancel(self) -> None:
        self._requested = False
        if self._build is not None:
            self._thread.spawn(self._build.stop(), "cancel-build")

    async def stop(self) -> None:
        if self._build is not None:
            await self._build.stop()
        self._thread.cancel_tasks(self._task)

    async def _run(self) -> None:
        ws = await self._workspace()
        while True:
            self._requested = False
            paths, self._paths = self._paths, None
            self.state = IndexingState("starting", 0, 0)
            self._notify("indexing_started")
            self.graph_phase, self._served = True, False
            if ws.index_unsaved:          # the child starts from what is on disk
                await self._thread.run(ws.flush_index)
            self._build = ChildBuild(self.root, self._config_values(), log_file=self._log_file,
                                     changed=sorted(paths) if paths is not None else None)
            self._build.attend(self._attention)
            try:
                outcome = await self._build.run(self._on_progress, self._on_graph_ready,
                                                self._on_vectors)
            finally:
                self._build = None
                self.semantic = None
                self.graph_phase = False
            if self._served:      # its vectors merged, the pending list settled and written
                try:              # before "finished", as the child's last write was
                    await self._thread.run(ws.build_ended, outcome.ok)
                    # the keyword write off the engine thread (on the Linux kernel ~10 s that
                    # a save arriving at the build's end waited for, LIVE10: 10.9 s), once
                    # saves pause (a write beside saves shares the GIL with them, KERN11)
                    await self._write_index()
                except Exception as e:   # e.g. a read-only .neuralmind/: served from memory
                    log.warning("the index after the build not written: %s", e)
            elif outcome.ok:
                await self._thread.run(ws.swap_in)
            self._finished(ws, outcome)
            if not self._requested:
                break
        self._after()

    def _finished(self, ws: Workspace, outcome: BuildOutcome) -> None:
        self.last_ok = outcome.ok
        if outcome.ok:
            if not self._served:          # else warmed up when its graph was served
                self._thread.spawn(warm_up(self._thread, ws), "warm-up")
            self.last_full_build = time.time()
            self.last_error = None
        elif not outcome.cancelled:
            self.last_error = outcome.message
            log.warning("background build failed: %s", outcome.message)
        self.state = None
        self._notify("indexing_finished", outcome)

    def _on_progress(self, phase: str, done: int, total: int) -> None:
        self.state = IndexingState(phase, done, total, self.semantic, self._served)
        self._notify("indexing_progress", self.state)

    async def _on_vectors(self, vectors: int) -> None:
        """The child wrote a slice of vectors: serve them now, not at the end of the build."""
        ws = await self._workspace()
        # the file read off the engine thread (it grows with every slice); taken in on it
        read = await asyncio.to_thread(ws.index.read_vectors)
        self.semantic = await self._thread.run(_refreshed_coverage, ws, read)
        if self.state is not None:
            self._on_progress(self.state.phase, self.state.done, self.state.total)

    async def _on_graph_ready(self, event: dict[str, Any]) -> None:
        """The child wrote the graph and keyword index: serve them while it embeds, prepared
        for saves, which apply from now on (the ones that waited first)."""
        ws = await self._workspace()
        await self._thread.run(ws.serve_build)
        self._served, self.graph_phase = True, False
        if self.state is not None:
            self._on_progress(self.state.phase, self.state.done, self.state.total)
        self._thread.spawn(warm_up(self._thread, ws), "warm-up")
        self._graph_served()


def _refreshed_coverage(ws: Workspace, read: VectorsRead | None = None) -> float:
    """Load the vectors the build wrote (or take `read`); the share of nodes with one now."""
    coverage.refresh_index(ws.index, read)
    return float(ws.counts()["semantic_coverage"])
