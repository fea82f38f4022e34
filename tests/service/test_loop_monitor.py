"""The loop monitor names the cyclic GC's long passes: no thread sample can (a pass is
over before any other thread runs)."""

from __future__ import annotations

import asyncio
import gc
import time

from neuralmind.service.loop_monitor import RECORD_OVER_SECONDS, LoopMonitor


def _cycles(n: int) -> list[list[object]]:
    out: list[list[object]] = []
    for _ in range(n):
        a: list[object] = []
        a.append(a)
        out.append(a)
    return out


def test_a_long_gc_pass_is_recorded_with_its_generation_and_thread() -> None:
    monitor = LoopMonitor()

    async def run() -> float:
        monitor.start()
        try:
            kept = _cycles(300_000)         # tracked objects a full pass must walk
            t0 = time.perf_counter()
            gc.collect()
            took = time.perf_counter() - t0
            del kept
            await asyncio.sleep(0.03)
            return took
        finally:
            await monitor.stop()

    took = asyncio.run(run())
    assert took > RECORD_OVER_SECONDS     # the pass is long enough to be kept
    full = [p for p in monitor.to_json()["gc_passes"] if p["generation"] == 2]
    assert full, monitor.to_json()["gc_passes"]
    assert full[-1]["thread"] == "MainThread" and full[-1]["ms"] > RECORD_OVER_SECONDS * 1000
    assert all(p["ms"] > RECORD_OVER_SECONDS * 1000 for p in monitor.to_json()["gc_passes"])
    assert monitor.gc._timed not in gc.callbacks        # stop() takes the timer out
