"""Answers scored by use, as the server sees them: answers recorded, files credited.

Every answer the server gives (context, search, recall) is recorded with the files it
returned and the time it was given. Answers and the opens and changes of files (editor
documents, saves, files changed on disk or by an agent) wait on the loop and are drained
onto the engine thread in one go (answers first), where the uses credit the answers of
the last USE_WINDOW_SECONDS; answers alone wait for the engine to be idle
(USE_RECORD_IDLE_SECONDS), so recording one never delays the next request. A HEAD move
that is a commit (the new HEAD's first parent is the old one) says which touched files
were kept. Every
USE_SETTLE_SECONDS the answers whose use is known settle (and teach the synapse layer),
and the codebase's token count is brought up to date a slice at a time, once questions
pause (USE_COUNT_AFTER_ASKS_SECONDS: a first count of the Linux kernel is ~20 min of slices
that every answer waited behind);
the status's savings summary is then taken from the engine's report, which is only read
again from usage.db when answers or their use changed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.config import (
    CODEBASE_SLICE_SECONDS,
    USE_COUNT_AFTER_ASKS_SECONDS,
    USE_RECORD_IDLE_SECONDS,
    USE_RECORD_MAX_WAIT_SECONDS,
    USE_SETTLE_SECONDS,
)
from neuralmind.errors import EngineError
from neuralmind.repo.git import diff_names, run_git

if TYPE_CHECKING:
    from neuralmind.engine import Workspace
    from neuralmind.service.engine_thread import EngineThread

log = logging.getLogger("neuralmind.service")

STATUS_DAYS = 7               # days of the savings report a status shows (the CLI has all)


def _first_parent(root: Path, commit: str) -> str | None:
    out = run_git(root, "rev-parse", "--verify", "--quiet", f"{commit}^1")
    return out.strip() or None if out else None


def recall_hits(out: dict[str, Any]) -> dict[str, Any]:
    """A decision answer's files as hits (the files its decisions govern, best first)."""
    files = [f for r in out.get("results", []) for f in (r.get("files_affected") or r.get("files")
                                                          or [])]
    return {"hits": [{"file": f, "line": 1, "symbol": ""} for f in dict.fromkeys(files)]}


class UseTracking:
    """Answers recorded, opens and changes credited, answers settled (event loop side)."""

    def __init__(self, root: Path, thread: EngineThread,
                 workspace: Callable[[], Awaitable[Workspace]],
                 saves_paused: Callable[[], Awaitable[None]] | None = None) -> None:
        self.root = root
        self._thread = thread
        self._workspace = workspace
        self._saves_paused = saves_paused   # the periodic work waits for it: no save needs it
        # (kind, file) -> first and last time since the last drain: a burst of keystrokes
        # is two credits, not one per keystroke
        self._queue: dict[tuple[str, str], tuple[float, float]] = {}
        self._answers: list[tuple[str, str | None, str, dict[str, Any], float]] = []
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._record_timer: asyncio.TimerHandle | None = None
        self._waiting_since: float | None = None    # the first answer not recorded yet
        self._last_ask = -USE_COUNT_AFTER_ASKS_SECONDS   # when a question last came or ended
        self.answers = 0
        self.commits = 0
        self.summary: dict[str, Any] | None = None     # the savings report, as last made

    def start(self) -> None:
        """The first settle and count wait one period: start-up has enough to do."""
        self._timer = self._thread.restart_timer(self._timer, USE_SETTLE_SECONDS, self._tick)

    def stop(self) -> None:
        for timer in (self._timer, self._record_timer):
            if timer is not None:
                timer.cancel()

    # --- what happened ------------------------------------------------------------------
    def asked(self) -> None:
        """A question came now: the codebase count waits until questions pause."""
        self._last_ask = time.monotonic()

    def answered(self, kind: str, session: str | None, question: str,
                 out: dict[str, Any]) -> None:
        """An answer was given now (recorded with this time, before any use after it)."""
        self.asked()
        self.answers += 1
        self._answers.append((kind, session, question, out, time.time()))
        self._record_later()

    def _record_later(self) -> None:
        """Record the answers once the engine is idle (config USE_RECORD_IDLE_SECONDS): not
        in the engine's queue ahead of the next request."""
        now = time.monotonic()
        if self._waiting_since is None:
            self._waiting_since = now
        if now - self._waiting_since >= USE_RECORD_MAX_WAIT_SECONDS:
            self._wake()
        else:
            self._record_timer = self._thread.restart_timer(
                self._record_timer, USE_RECORD_IDLE_SECONDS, self._wake)

    def used(self, kind: str, rel: str) -> None:
        """A file was opened ("open") or changed ("edit") now."""
        now = time.time()
        first, _ = self._queue.get((kind, rel), (now, now))
        self._queue[(kind, rel)] = (first, now)
        self._wake()

    def _wake(self) -> None:
        if self._record_timer is not None:
            self._record_timer.cancel()
            self._record_timer = None
        if self._task is None or self._task.done():
            self._task = self._thread.spawn(self._drain(), "answer-use")

    async def head_moved(self, old: str | None, new: str | None) -> None:
        if not old or not new or old == new:
            return
        if await asyncio.to_thread(_first_parent, self.root, new) != old:
            return                      # a checkout, pull or rebase: not a commit of the work
        changed = await asyncio.to_thread(diff_names, self.root, old, new)
        await self._drain()             # the edits before the commit count first
        self.commits += 1
        await self._engine(lambda ws: ws.use.commit_made(changed or []))

    # --- engine work ----------------------------------------------------------------------
    async def _engine(self, fn: Callable[[Workspace], Any]) -> Any:
        ws = await self._workspace()
        try:
            return await self._thread.run(fn, ws)
        except EngineError:
            return None                 # shutting down
        except Exception:
            log.exception("scoring answers by use failed")
            return None

    async def flush(self) -> None:
        """Record what waits on the loop now (a report asked for counts the answers given)."""
        await self._drain()

    async def _drain(self) -> None:
        """Answers first, then the uses: a use only credits answers given before it, so
        this order loses nothing."""
        while self._queue or self._answers:
            answers, self._answers = self._answers, []
            self._waiting_since = None
            queued, self._queue = self._queue, {}
            events = [(kind, rel, t) for (kind, rel), times in queued.items()
                      for t in dict.fromkeys(times)]
            await self._engine(lambda ws, a=answers, e=events: _apply(ws, a, e))

    def _tick(self) -> None:
        self._timer = self._thread.restart_timer(self._timer, USE_SETTLE_SECONDS, self._tick)
        self._thread.spawn(self._periodic(), "answer-settle")

    async def _periodic(self) -> None:
        if self._saves_paused is not None:      # 0.5-0.7 s on the kernel: not before a save
            await self._saves_paused()
        await self._engine(lambda ws: ws.use.settle())
        while True:
            await self._asks_paused()
            if await self._engine(lambda ws: ws.use.count_codebase(
                    ws.graph, seconds=CODEBASE_SLICE_SECONDS)) is not False:
                break                   # None: an error (logged) or shutting down
        report = await self._engine(lambda ws: ws.savings(count=False))
        if report is not None:
            self.keep(report)

    async def _asks_paused(self) -> None:
        """Until no question has come for USE_COUNT_AFTER_ASKS_SECONDS: a slice of the count
        goes between series of questions, never into one (each answer waited for one)."""
        while (left := self._last_ask + USE_COUNT_AFTER_ASKS_SECONDS - time.monotonic()) > 0:
            await asyncio.sleep(left)

    def keep(self, report: dict[str, Any]) -> None:
        """The status's savings: overall and the last STATUS_DAYS days."""
        self.summary = {"overall": report["overall"], "days": report["days"][-STATUS_DAYS:],
                        "codebase_tokens_now": report["codebase_tokens_now"]}


def _apply(ws: Workspace, answers: list[tuple[str, str | None, str, dict[str, Any], float]],
           events: list[tuple[str, str, float]]) -> None:
    for kind, session, question, out, ts in answers:
        ws.use.record(kind, session, question, out, now=ts)
    ws.use.note(events)
