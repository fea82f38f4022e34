"""Saving one big file again and again through the real language server.

    python benchmarks/big_save_bench.py --root /work/bench-tmp/h_bigparse/django-20k \
        [--file tests/admin_views/tests.py] [--saves 200]

Starts the server on an indexed workspace (its `.neuralmind` already built: a copy, the
file is rewritten and restored), then saves FILE N times, each time with a new function
appended (the size stays put), and prints didSave-to-searchable p50/p95, the event loop's
largest stall during the saves (the server's own ticker, NEURALMIND_LOOP_MONITOR=1) with
its culprits, the server's RSS before and after, the big-file worker's RSS and the load
average. Files over 128 KB are what graph.big_file_worker takes off the server's GIL.
`--ticker`: no server, the same file extracted in this process and through the worker
next to a 1 ms ticker thread (less noise from a loaded machine).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_bench import (  # noqa: E402
    SEARCHABLE_K,
    Client,
    found_first,
    pct,
    print_results,
    stall_culprits,
    stalls_between,
    top_stalls,
)


def children_rss_mb(pid: int) -> dict[int, float]:
    """RSS of the server's child processes (the big-file worker, when it runs)."""
    out: dict[int, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids = (task / "children").read_text().split()
        except OSError:
            continue
        for kid in kids:
            try:
                status = Path(f"/proc/{kid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    out[int(kid)] = int(line.split()[1]) / 1024
    return out


def running(pid: int) -> bool:
    """Alive: not exited (an orphan's zombie waits for init to reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] not in "ZX"
    except OSError:
        return False


async def save_rounds(c: Client, path: Path, original: str, rounds: int,
                      rss_every: int) -> tuple[list[float], list[tuple[int, float]]]:
    lat: list[float] = []
    rss: list[tuple[int, float]] = []
    for i in range(rounds):
        name = f"big_marker_{i:05d}_{int(time.time() * 1000) % 100000:05d}"
        path.write_text(original + f"\n\ndef {name}(value):\n    return value\n")
        t0 = time.perf_counter()
        c.notify("textDocument/didSave", {"textDocument": {"uri": path.as_uri()}})
        while True:
            found = await c.request("neuralmind/search", {"query": name, "k": SEARCHABLE_K})
            if found_first(found["hits"], name) is not None:
                break
            if time.perf_counter() - t0 > 60:
                raise TimeoutError(f"{name} never became searchable")
        lat.append(time.perf_counter() - t0)
        if (i + 1) % rss_every == 0:
            rss.append((i + 1, c.rss_mb()))
    return lat, rss


async def run(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(args.root).resolve()
    if not (root / ".neuralmind").is_dir():
        sys.exit(f"{root} has no .neuralmind index: index a copy first")
    path = root / args.file
    original = path.read_text()
    env = {**os.environ, "NEURALMIND_LOOP_MONITOR": "1", "ORT_DISABLE_TELEMETRY": "1"}
    log = open(args.server_log, "ab") if args.server_log else None  # noqa: SIM115
    results: dict[str, Any] = {"file": args.file, "bytes": len(original.encode())}
    c = Client(root, env, log)
    try:
        await c.start()
        await c.initialize()
        results["index_update_s"] = await c.wait_indexed()
        for _ in range(3):       # settle: model, tokenizer and search paths warm
            await c.request("neuralmind/search", {"query": "admin view test", "k": 3})
        assert c.proc is not None
        results["rss_before_mb"] = c.rss_mb()
        t0 = time.monotonic()
        lat, rss = await save_rounds(c, path, original, args.saves, max(1, args.saves // 5))
        t1 = time.monotonic()
        results["saves"] = len(lat)
        results["save_to_searchable_p50_ms"] = 1000 * statistics.median(lat)
        results["save_to_searchable_p95_ms"] = 1000 * pct(lat, 95)
        results["save_to_searchable_max_ms"] = 1000 * max(lat)
        results["first_save_ms"] = 1000 * lat[0]
        results["rss_after_mb"] = c.rss_mb()
        results["rss_by_save_mb"] = [(n, round(mb, 1)) for n, mb in rss]
        results["worker_rss_mb"] = {pid: round(mb, 1)
                                    for pid, mb in children_rss_mb(c.proc.pid).items()}
        status = await c.request("neuralmind/status", {})
        results["max_stall_during_saves_ms"] = stalls_between(status, t0, t1)
        loop = status.get("event_loop", {})
        results["stalls_over_20ms_during_saves"] = sum(
            1 for t, ms in loop.get("stalls", []) if t0 <= t <= t1 and ms > 20)
        # GIL-watcher samples (>= 15 ms late) taken while some thread ran the extractor
        results["late_samples_in_extractor"] = sum(
            1 for c in loop.get("culprits", []) if t0 <= c["t"] <= t1 and any(
                "extract.py:" in f for frames in c["threads"].values() for f in frames))
        results["top_stalls_s_ms"] = top_stalls(status, t0)
        results["stall_culprits"] = stall_culprits(status, t0, 3)
        results["load_average"] = tuple(round(x, 2) for x in os.getloadavg())
        results["shutdown_s"] = await c.stop()
        t_exit = time.monotonic()      # the worker leaves when its socket closes
        while any(running(pid) for pid in results["worker_rss_mb"]):
            if time.monotonic() - t_exit > 5:
                break
            await asyncio.sleep(0.005)
        results["workers_alive_after_exit"] = [
            pid for pid in results["worker_rss_mb"] if running(pid)]
        results["worker_exited_after_server_s"] = time.monotonic() - t_exit
    finally:
        path.write_text(original)
        if c.proc is not None and c.proc.returncode is None:
            c.proc.kill()
    return results


def ticker_figures(path: Path, rounds: int) -> dict[str, Any]:
    """Without the server: a 1 ms ticker thread's largest gap (the server's switch interval)
    while FILE is extracted in-process (chunked parse) and through the worker."""
    import threading

    from neuralmind.graph import big_file_worker
    from neuralmind.graph.extract import extract_file

    sys.setswitchinterval(0.001)
    data = path.read_bytes()
    gaps: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            time.sleep(0.0005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    def worst(fn: Any) -> tuple[float, float]:
        stalls, took = [], []
        for _ in range(rounds):
            time.sleep(0.05)
            gaps.clear()
            t0 = time.perf_counter()
            fn()
            took.append(time.perf_counter() - t0)
            time.sleep(0.01)
            stalls.append(max(gaps))
        return 1000 * max(stalls), 1000 * statistics.median(took)

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        big_file_worker.extract(path.name, data, "python")      # started: saves reuse it
        out = {}
        for label, fn in (("in_process", lambda: extract_file(path.name, data, "python")),
                          ("worker", lambda: big_file_worker.extract(path.name, data, "python"))):
            stall, took = worst(fn)
            out[f"{label}_max_stall_ms"] = stall
            out[f"{label}_extract_p50_ms"] = took
        out["load_average"] = tuple(round(x, 2) for x in os.getloadavg())
        return out
    finally:
        stop.set()
        big_file_worker.shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True, help="an indexed copy of a workspace")
    parser.add_argument("--file", default="tests/admin_views/tests.py")
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--server-log", default=None, help="append the server's stderr here")
    parser.add_argument("--ticker", action="store_true",
                        help="no server: a ticker thread's stall, in-process vs worker")
    args = parser.parse_args()
    results = (ticker_figures(Path(args.root) / args.file, min(args.saves, 20)) if args.ticker
               else asyncio.run(run(args)))
    print_results(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
