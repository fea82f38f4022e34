"""The one engine thread, and the service's background tasks.

Every engine call runs on one dedicated thread, in submission order, so the engine
never sees two callers at once (the single writer) and the event loop never waits
on engine work. Background tasks are kept (a task nobody references can be
collected mid-flight) and their failures logged.

One exception, for a long job that only prepares state (the warm-up's resolution state:
33-57 s on the Linux kernel, which held `status` and answers): `aside` runs it on a thread
of its own while the engine thread takes only `read` jobs (answers, status); every other
job waits until it ends, so there is still one writer.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from neuralmind.errors import EngineError

log = logging.getLogger("neuralmind.service")

T = TypeVar("T")


class EngineThread:
    """Runs engine calls one at a time, off the loop; owns the service's background tasks."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="neuralmind-engine")
        self._tasks: set[asyncio.Task[Any]] = set()
        self._aside: asyncio.Future[None] | None = None   # set while an `aside` job runs
        self.warming_up = 0     # warm-ups running (service/warming.py): saves wait, status says
        self.closed = False

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn` on the engine thread (after everything submitted before it, and after
        the `aside` job running, if any)."""
        while self._aside is not None:
            await asyncio.shield(self._aside)
        return await self.read(fn, *args, **kwargs)

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn`, which changes no engine state (an answer, the status), on the engine
        thread: after everything submitted before it, but while an `aside` job runs."""
        if self.closed:
            raise EngineError("shutting_down", "the server is shutting down")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    async def aside(self, fn: Callable[[], T]) -> T:
        """Run `fn` on a thread of its own, after everything submitted before it; until it
        ends, the engine thread runs `read` jobs only and other jobs wait. `fn` may read the
        engine's state and prepare its own, but changes nothing that a read job reads."""
        while self._aside is not None:
            await asyncio.shield(self._aside)
        done = self._aside = asyncio.get_running_loop().create_future()
        try:
            await self.read(lambda: None)       # the jobs submitted before it have run
            return await asyncio.to_thread(fn)
        finally:
            self._aside = None
            done.set_result(None)

    def spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    def cancel_tasks(self, *more: asyncio.Task[Any] | None) -> None:
        for task in [*self._tasks, *(t for t in more if t is not None)]:
            task.cancel()

    def restart_timer(self, timer: asyncio.TimerHandle | None, delay: float,
                      fn: Callable[[], None]) -> asyncio.TimerHandle | None:
        """Cancel `timer` and call `fn` after `delay` instead (nothing once closed)."""
        if timer is not None:
            timer.cancel()
        return None if self.closed else asyncio.get_running_loop().call_later(delay, fn)

    def shutdown(self) -> None:
        self.closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)
