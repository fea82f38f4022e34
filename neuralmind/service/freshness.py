"""Freshness: from a save to a searchable symbol, and to disk.

A saved file is re-extracted on the engine thread and its symbols are searchable
by name when that returns (keyword side only); its nodes are embedded once saves
pause (EMBED_IDLE_SECONDS; only those whose embedded text changed, the model run off the
engine thread: index/save_vectors.py), and the search index is written to disk once they
pause longer (`_flush_idle`: longer where a write takes longer, and never more than
FLUSH_MAX_DEFER_SECONDS after the first save the disk lacks), where other processes see
it: a write runs on a worker thread but shares the GIL with the saves' work on the engine
thread, so it waits for saves to pause, the build's at its end too. While a full
build's graph phase runs, saves wait and are applied once its graph is served; while it
embeds, they are applied at once (its vectors are merged around them:
index/vector_handoff.py).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from neuralmind.config import (
    EMBED_IDLE_SECONDS,
    FLUSH_IDLE_PER_FLUSH_SECOND,
    FLUSH_IDLE_SECONDS,
    FLUSH_MAX_DEFER_SECONDS,
)
from neuralmind.errors import EngineError

if TYPE_CHECKING:
    from neuralmind.engine import Workspace
    from neuralmind.service.engine_thread import EngineThread

log = logging.getLogger("neuralmind.service")

IGNORED_DIRS = (".git/", ".neuralmind/")


def write_problem(e: BaseException) -> str | None:
    """A one-line cause when `e` is the disk refusing a write (read-only or full
    `.neuralmind/`, a locked database): expected in the field, so no traceback."""
    if isinstance(e, OSError):
        return f"{e.strerror or e} ({e.filename})" if e.filename else str(e)
    if isinstance(e, sqlite3.OperationalError):
        return str(e)
    return None


class Freshness:
    """Pending saves, the drain that applies them, and the embed and flush timers."""

    def __init__(self, thread: EngineThread, workspace: Callable[[], Awaitable[Workspace]],
                 building: Callable[[], bool], updated: Callable[[list[str]], None]) -> None:
        self._thread = thread
        self._workspace = workspace
        self._building = building          # a build's graph phase runs: saves wait for it
        self._updated = updated            # files whose symbols are searchable now
        self.pending: set[str] = set()
        self.last_update: float | None = None
        self._drain_task: asyncio.Task[None] | None = None
        self._flush_timer: asyncio.TimerHandle | None = None
        self._embed_timer: asyncio.TimerHandle | None = None
        self._to_embed: set[str] = set()     # saved nodes whose text changed, not embedded yet
        self._embedding: asyncio.Task[None] | None = None
        self._flushing: asyncio.Task[bool] | None = None
        self._flush_s = 0.0                  # how long the last flush took (its write included)
        self._last_save: float | None = None       # monotonic: the last save applied
        self._unsaved_since: float | None = None   # monotonic: the first save the disk lacks

    def schedule(self, rels: Iterable[str]) -> None:
        self.pending.update(r for r in rels if not r.startswith(IGNORED_DIRS))
        if not self.pending or self._building():
            return          # applied after the running build swaps in
        self.resume()

    def resume(self) -> None:
        """Apply what is pending (after a build, what waited for it)."""
        if self.pending and (self._drain_task is None or self._drain_task.done()):
            self._drain_task = self._thread.spawn(self._drain(), "incremental-update")

    def stop(self) -> None:
        """Cancel the drain and the timers; `close` flushes what is loaded."""
        self._thread.cancel_tasks(self._drain_task, self._embedding, self._flushing)
        for timer in (self._flush_timer, self._embed_timer):
            if timer is not None:
                timer.cancel()

    async def _drain(self) -> None:
        ws = await self._workspace()
        while self.pending and not self._building():
            batch = sorted(self.pending)
            self.pending.clear()
            try:
                _, changed_ids = await self._thread.run(ws.update_files, batch)
            except EngineError as e:
                log.warning("update of %s refused: %s", ", ".join(batch), e.message)
                continue
            except Exception as e:
                if (cause := write_problem(e)) is None:
                    log.exception("incremental update of %s failed", ", ".join(batch))
                else:
                    log.warning("update of %s not written: %s; queries use what is loaded",
                                ", ".join(batch), cause)
                continue
            self.last_update = time.time()
            self._last_save = time.monotonic()
            if self._unsaved_since is None:
                self._unsaved_since = self._last_save
            self._updated(batch)
            self._to_embed.update(changed_ids)
        self._embed_timer = self._thread.restart_timer(self._embed_timer, EMBED_IDLE_SECONDS,
                                                       self._embed_when_idle)
        self._flush_timer = self._thread.restart_timer(self._flush_timer, self._flush_idle(ws),
                                                       self._flush_when_idle)

    async def saves_paused(self, seconds: float) -> None:
        """Return once no save waits or is being applied and none was applied for `seconds`:
        work a save causes that no save needs (the files near a first edit) runs then, not
        between a save and the answers that wait for it on the engine thread."""
        while True:
            if self._draining():
                wait = seconds
            elif self._last_save is None or (
                    wait := self._last_save + seconds - time.monotonic()) <= 0:
                return
            await asyncio.sleep(wait)

    def _draining(self) -> bool:
        return bool(self.pending) or (self._drain_task is not None
                                      and not self._drain_task.done())

    def _embed_when_idle(self) -> None:
        self._embed_timer = None
        if self._embedding is not None:     # one at a time: it restarts the timer at its end
            return
        if self._to_embed and not self._draining():   # else the drain restarts the timer
            self._embedding = self._thread.spawn(self._embed_saved(), "embed-saved")

    async def _embed_saved(self) -> None:
        """The saved nodes' vectors: texts taken and vectors stored on the engine thread, the
        model run on a worker thread meanwhile, so a save arriving is applied at once (the
        Linux kernel: a file's hundreds of symbols were seconds of ONNX a save waited for)."""
        ws = await self._workspace()
        ids = sorted(self._to_embed)
        self._to_embed.clear()
        try:
            plan = await self._thread.run(ws.save_plan, ids)
            if plan is not None:
                vectors = await asyncio.to_thread(plan.embed)
                await self._thread.run(ws.store_saved, plan, vectors)
        except EngineError:
            return          # shutting down; the next build embeds them
        except Exception as e:
            if (cause := write_problem(e)) is None:
                log.exception("embedding %d saved nodes failed", len(ids))
            else:
                log.warning("embeddings of %d saved nodes not written: %s", len(ids), cause)
        finally:
            self._embedding = None
        if self._to_embed:      # saves during it: theirs next, once saves pause again
            self._embed_timer = self._thread.restart_timer(self._embed_timer, EMBED_IDLE_SECONDS,
                                                           self._embed_when_idle)
        self._flush_timer = self._thread.restart_timer(self._flush_timer, self._flush_idle(ws),
                                                       self._flush_when_idle)

    def _flush_idle(self, ws: Workspace) -> float:
        """Seconds from now until a write may start: saves must have paused longer where a
        write is long (config.py; before any write is timed, as long as the index's size
        says: on the Linux kernel the first write, ~10-18 s on a worker thread, came 2 s
        after the saves at a build's end and slowed the next ones ~1.5-2x), but a write
        waits at most FLUSH_MAX_DEFER_SECONDS after the first save the disk lacks."""
        if self._last_save is None:
            return 0.0
        now = time.monotonic()
        pause = max(FLUSH_IDLE_SECONDS,
                    FLUSH_IDLE_PER_FLUSH_SECOND * max(self._flush_s, ws.expected_write_s()))
        wait = self._last_save + pause - now
        if self._unsaved_since is not None:
            wait = min(wait, self._unsaved_since + FLUSH_MAX_DEFER_SECONDS - now)
        return max(0.0, wait)

    async def write_when_quiet(self) -> None:
        """Write the index once saves pause as a flush waits for them (`_flush_idle`),
        after any write in flight: a build's end, before it is reported finished."""
        ws = await self._workspace()
        while True:
            if self._flushing is not None and not self._flushing.done():
                await asyncio.wait([self._flushing])
            elif (wait := self._flush_idle(ws)) > 0:
                await asyncio.sleep(wait)
            elif not ws.index_unsaved:
                return
            else:
                self._flushing = flushing = self._thread.spawn(self._flush_index(), "index-flush")
                await asyncio.wait([flushing])
                if flushing.cancelled() or flushing.result() is not False:
                    return      # (False: a save came first, so wait for the pause again)

    def _flush_when_idle(self) -> None:
        self._flush_timer = None
        if self._flushing is not None and not self._flushing.done():
            return                      # one at a time: it restarts the timer at its end
        if not self._draining():        # else the drain restarts the timer when it ends
            self._flushing = self._thread.spawn(self._flush_index(), "index-flush")

    async def _flush_index(self) -> bool:
        """Write the index: the keyword side's merge and write (~10 s on the Linux kernel)
        on a worker thread, so a save arriving meanwhile is applied at once
        (index/keyword_flush.py); the engine thread takes the snapshot and the result.
        False: a save was applied while the snapshot was queued (the Linux kernel: a build
        ending as saves began), so the write waits for saves to pause again."""
        ws = await self._workspace()
        try:
            t0 = time.perf_counter()
            since, self._unsaved_since = self._unsaved_since, None   # the snapshot has them
            last = self._last_save
            job = await self._thread.run(ws.begin_flush)
            if job is not None and self._last_save != last and self._flush_idle(ws) > 0:
                if since is not None:       # the snapshot is dropped; its saves still wait
                    self._unsaved_since = min(since, self._unsaved_since or since)
                self._flush_timer = self._thread.restart_timer(
                    self._flush_timer, self._flush_idle(ws), self._flush_when_idle)
                return False
            if job is not None:
                await asyncio.to_thread(job.run)
                await self._thread.run(ws.end_flush, job)
            self._flush_s = time.perf_counter() - t0
            if ws.index_unsaved:        # saves during it: written once they pause again
                self._flush_timer = self._thread.restart_timer(    # (never at once again:
                    self._flush_timer, max(FLUSH_IDLE_SECONDS, self._flush_idle(ws)),
                    self._flush_when_idle)  # the child's vectors stay unsaved during a build)
        except EngineError:
            pass            # shutting down: close() flushes
        except Exception as e:
            if (cause := write_problem(e)) is None:
                log.exception("writing the search index failed")
            else:
                log.warning("search index not written: %s", cause)
        return True


