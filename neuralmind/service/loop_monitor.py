"""Measure how late the event loop runs a ticker: the editor-visible stall.

Off by default (a 10 ms ticker costs wake-ups); `NEURALMIND_LOOP_MONITOR=1`
turns it on and `status()` then reports the figures. The benchmark uses it to
check the 20 ms stall target while a full index runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import Any

ENV = "NEURALMIND_LOOP_MONITOR"
TICK_SECONDS = 0.010
RECORD_OVER_SECONDS = 0.005   # stalls longer than this are kept with their time
MAX_RECORDED = 1000


class LoopMonitor:
    def __init__(self, tick: float = TICK_SECONDS) -> None:
        self.tick = tick
        self.max_stall = 0.0
        self.ticks = 0
        self.late_20ms = 0
        self.recorded: list[tuple[float, float]] = []  # (time.monotonic() at wake-up, stall s)
        self._task: asyncio.Task[None] | None = None

    @staticmethod
    def wanted() -> bool:
        return os.environ.get(ENV, "") not in ("", "0")

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="loop-monitor")

    def reset(self) -> None:
        self.max_stall, self.ticks, self.late_20ms = 0.0, 0, 0
        self.recorded.clear()

    async def _run(self) -> None:
        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(self.tick)
            stall = time.perf_counter() - t0 - self.tick
            self.ticks += 1
            self.max_stall = max(self.max_stall, stall)
            if stall > 0.020:
                self.late_20ms += 1
            if stall > RECORD_OVER_SECONDS and len(self.recorded) < MAX_RECORDED:
                self.recorded.append((time.monotonic(), stall))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def to_json(self) -> dict[str, Any]:
        return {"max_stall_ms": round(self.max_stall * 1000, 2), "ticks": self.ticks,
                "stalls_over_20ms": self.late_20ms,
                "stalls": [[round(t, 4), round(s * 1000, 2)] for t, s in self.recorded]}
