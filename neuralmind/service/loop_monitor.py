"""Measure how late the event loop runs a ticker: the editor-visible stall.

Off by default (a 10 ms ticker costs wake-ups); `NEURALMIND_LOOP_MONITOR=1`
turns it on and `status()` then reports the figures. The benchmark uses it to
check the 20 ms stall target while a full index runs.

A stall has two causes: the loop thread itself runs a long callback, or another
thread holds the GIL in one long C call (a parse, a model load, a GC pass). To
say which, the GC's passes over RECORD_OVER_SECONDS are timed ("gc_passes": a pass
runs inside whichever allocation set it off and is over before any other thread
runs, so no sample can name it), and a watcher thread sleeps 2 ms at a time and records every thread's
innermost frames ("culprits" in `status()`) when it wakes more than
WATCH_LATE_SECONDS late (whoever held the GIL just let go), or when the loop's
ticker has not beaten for that long (the loop thread is busy: its frames say
with what).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import threading
import time
import traceback
from typing import Any

ENV = "NEURALMIND_LOOP_MONITOR"
TICK_SECONDS = 0.010
RECORD_OVER_SECONDS = 0.005   # stalls longer than this are kept with their time
MAX_RECORDED = 1000
WATCH_SLEEP_SECONDS = 0.002
WATCH_LATE_SECONDS = 0.015
WATCH_FRAMES = 4               # innermost frames kept per thread


class GilWatcher:
    """A daemon thread recording which threads ran when it could not get the GIL."""

    def __init__(self) -> None:
        self.culprits: list[dict[str, Any]] = []
        self.beat = time.perf_counter()     # the loop's ticker sets it on every tick
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nm-gil-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        me = threading.get_ident()
        reported_beat = 0.0
        while not self._stop.is_set():
            t0 = time.perf_counter()
            time.sleep(WATCH_SLEEP_SECONDS)
            now = time.perf_counter()
            late = now - t0 - WATCH_SLEEP_SECONDS
            beat = self.beat
            loop_busy = now - beat > TICK_SECONDS + WATCH_LATE_SECONDS and beat != reported_beat
            if (late < WATCH_LATE_SECONDS and not loop_busy) or len(self.culprits) >= MAX_RECORDED:
                continue
            if loop_busy:
                reported_beat = beat
                late = now - beat - TICK_SECONDS
            names = {t.ident: t.name for t in threading.enumerate()}
            threads = {}
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                stack = traceback.extract_stack(frame)[-WATCH_FRAMES:]
                threads[names.get(ident, str(ident))] = [
                    f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in stack]
            self.culprits.append({"t": round(time.monotonic(), 4),
                                  "late_ms": round(late * 1000, 2), "threads": threads})


class GcTimer:
    """The cyclic GC's passes longer than RECORD_OVER_SECONDS: when, which generation, how
    long, in which thread (gc.callbacks run in the thread whose allocation set it off)."""

    def __init__(self) -> None:
        self.passes: list[dict[str, Any]] = []
        self._t0 = 0.0

    def start(self) -> None:
        gc.callbacks.append(self._timed)

    def stop(self) -> None:
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._timed)

    def _timed(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
            return
        took = time.perf_counter() - self._t0
        if took > RECORD_OVER_SECONDS and len(self.passes) < MAX_RECORDED:
            self.passes.append({"t": round(time.monotonic(), 4), "ms": round(took * 1000, 2),
                                "generation": info.get("generation"),
                                "collected": info.get("collected"),
                                "thread": threading.current_thread().name})


class LoopMonitor:
    def __init__(self, tick: float = TICK_SECONDS) -> None:
        self.tick = tick
        self.max_stall = 0.0
        self.ticks = 0
        self.late_20ms = 0
        self.recorded: list[tuple[float, float]] = []  # (time.monotonic() at wake-up, stall s)
        self._task: asyncio.Task[None] | None = None
        self.watcher = GilWatcher()
        self.gc = GcTimer()

    @staticmethod
    def wanted() -> bool:
        return os.environ.get(ENV, "") not in ("", "0")

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="loop-monitor")
            self.watcher.start()
            self.gc.start()

    def reset(self) -> None:
        self.max_stall, self.ticks, self.late_20ms = 0.0, 0, 0
        self.recorded.clear()

    async def _run(self) -> None:
        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(self.tick)
            self.watcher.beat = time.perf_counter()
            stall = self.watcher.beat - t0 - self.tick
            self.ticks += 1
            self.max_stall = max(self.max_stall, stall)
            if stall > 0.020:
                self.late_20ms += 1
            if stall > RECORD_OVER_SECONDS and len(self.recorded) < MAX_RECORDED:
                self.recorded.append((time.monotonic(), stall))

    async def stop(self) -> None:
        self.watcher.stop()
        self.gc.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def to_json(self) -> dict[str, Any]:
        return {"max_stall_ms": round(self.max_stall * 1000, 2), "ticks": self.ticks,
                "stalls_over_20ms": self.late_20ms,
                "stalls": [[round(t, 4), round(s * 1000, 2)] for t, s in self.recorded],
                "culprits": self.watcher.culprits, "gc_passes": self.gc.passes}
