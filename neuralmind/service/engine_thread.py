"""The one engine thread, and the service's background tasks.

Every engine call runs on one dedicated thread, in submission order, so the engine
never sees two callers at once (the single writer) and the event loop never waits
on engine work. Background tasks are kept (a task nobody references can be
collected mid-flight) and their failures logged.
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
        self.closed = False

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn` on the engine thread (after everything submitted before it)."""
        if self.closed:
            raise EngineError("shutting_down", "the server is shutting down")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

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
