"""Per-save graph cost and GIL stalls in a long-lived process (issue 6).

    python benchmarks/graph_save_bench.py [--repos rich,django] [--data DIR] [--saves N]
                                          [--json FILE]

What the language server does with the graph, in one process, on a copy of each pinned
sdist (the sdists stay pristine):
  load      load_graph() of the stored graph, as the server does on start;
  prepare   prepare_incremental(): the resolution state saves patch (when available);
  young-gc  a few thousand allocations right after the load: the first (young) GC pass,
            which traverses whatever the load built and left in the young generation;
  full-gc   gc.collect(): the full pass CPython runs by itself every so often;
  reload    drop that graph (Graph.release() when available) and load the stored one again,
            as the server does when a background build wrote a new generation;
  saves     GraphBuilder.build(changed=[f], previous=graph) on one file, `--saves` rounds
            of five edits: body (a comment appended: same outline), add (a function that
            calls one of the file's own functions), remove (that function removed), import
            (a workspace import added), unimport (removed again), and a new file next to
            it (newfile: imports the edited module and calls into it) deleted again (delfile).
A thread ticking every 1 ms runs alongside: "stall" is how late its largest tick came,
i.e. the longest the GIL was held away from another thread (the editor's event loop runs
on one). Targets: stall < 20 ms everywhere, add/remove on Django < 300 ms.
Wall times move with the load of this shared 2-core machine (printed).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPOS = {
    # name: (sdist root dir, file edited, an import of a workspace module)
    "rich": ("rich-13.7.1", "rich/console.py", "from rich.text import Text as _BenchText\n"),
    "django": ("Django-5.1", "django/db/models/query.py",
               "from django.utils.functional import cached_property as _bench_cp\n"),
}


class Ticker:
    """A thread that sleeps 1 ms at a time and records how late it wakes."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ticker", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            t0 = time.perf_counter()
            time.sleep(0.001)
            self.worst = max(self.worst, time.perf_counter() - t0 - 0.001)

    def __enter__(self) -> Ticker:
        self._thread.start()
        time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def take(self) -> float:
        """The worst lateness since the last call, in ms."""
        time.sleep(0.005)            # let a tick that is waiting for the GIL land
        worst, self.worst = self.worst, 0.0
        return worst * 1000


def rss_mb() -> float:
    """This process's resident memory now (not the peak)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def timed(ticker: Ticker, fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, ms, worst stall ms) of one call."""
    ticker.take()
    t0 = time.perf_counter()
    result = fn()
    ms = (time.perf_counter() - t0) * 1000
    return result, ms, ticker.take()


def bench_repo(name: str, data: Path, saves: int) -> dict[str, Any]:
    import neuralmind.graph.build as build_mod
    from neuralmind.config import WorkspaceConfig
    from neuralmind.graph.store import load_graph

    sdist, target, import_line = REPOS[name]
    src = data / sdist
    if not src.is_dir():
        raise SystemExit(f"{src} is missing: bash /work/shared/bench/fetch_sdists.sh {data}")
    tmp = Path(tempfile.mkdtemp(prefix=f"nm-savebench-{name}-"))
    root = tmp / sdist
    shutil.copytree(src, root, ignore=shutil.ignore_patterns(".neuralmind"))
    try:
        build_mod.GraphBuilder(root, WorkspaceConfig()).build()
        build_mod._warm.clear()                 # a fresh process holds no graph yet
        state = root / ".neuralmind"
        out: dict[str, Any] = {"repo": name}
        with Ticker() as ticker:
            # the floor: how late ticks come with nothing running here (other processes)
            _, _, out["idle_stall_ms"] = timed(ticker, lambda: time.sleep(1.0))
            graph, out["load_ms"], out["load_stall_ms"] = timed(ticker, lambda: load_graph(state))
            out["nodes"] = len(graph.nodes)
            out["rss_loaded_mb"] = rss_mb()
            prepare = getattr(build_mod, "prepare_incremental", None)
            if prepare is not None:
                _, out["prepare_ms"], out["prepare_stall_ms"] = timed(ticker, lambda: prepare(graph))
                out["rss_prepared_mb"] = rss_mb()
            _, out["young_gc_ms"], out["young_gc_stall_ms"] = timed(
                ticker, lambda: [[i] for i in range(5_000)])
            _, out["full_gc_ms"], out["full_gc_stall_ms"] = timed(ticker, gc.collect)

            def reload() -> Any:
                nonlocal graph
                old, graph = graph, None
                if hasattr(old, "release"):
                    old.release()
                del old
                return load_graph(state)

            graph, out["reload_ms"], out["reload_stall_ms"] = timed(ticker, reload)
            _, _, out["reload_young_gc_stall_ms"] = timed(ticker, lambda: [[i] for i in range(5_000)])
            _, _, out["reload_full_gc_stall_ms"] = timed(ticker, gc.collect)
            if prepare is not None:
                timed(ticker, lambda: prepare(graph))
            out["saves"] = run_saves(root, target, import_line, graph, saves, ticker)
            out["rss_after_saves_mb"] = rss_mb()
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_saves(root: Path, target: str, import_line: str, graph: Any, rounds: int,
              ticker: Ticker) -> dict[str, dict[str, float]]:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.graph.build import GraphBuilder

    path = root / target
    original = path.read_text(encoding="utf-8")
    own = re.findall(r"^def ([A-Za-z]\w*)\(", original, re.M) or ["len"]
    builder = GraphBuilder(root, WorkspaceConfig())
    times: dict[str, list[float]] = {}
    stalls: dict[str, list[float]] = {}

    sibling = str(Path(target).with_name("_bench_new_module.py"))
    module = target[:-3].replace("/", ".")

    def save(kind: str, text: str | None, rel: str = target) -> None:
        nonlocal graph
        if text is None:
            (root / rel).unlink()
        else:
            (root / rel).write_text(text, encoding="utf-8")
        report, ms, stall = timed(ticker, lambda: builder.build(changed=[rel],
                                                                previous=graph))
        graph = report.graph
        times.setdefault(kind, []).append(ms)
        stalls.setdefault(kind, []).append(stall)

    for i in range(rounds):
        save("body", original + f"\n# benchmark edit {i}\n")
        save("add", original + f"\n\ndef _bench_added_{i}(x):\n    return {own[0]}(x)\n")
        save("remove", original)
        save("import", import_line + original)
        save("unimport", original)
        save("newfile", f"from {module} import {own[0]}\n\n\ndef _bench_new(x):\n"
                        f"    return {own[0]}(x)\n", sibling)
        save("delfile", None, sibling)
    return {kind: {"p50_ms": statistics.median(ms), "max_ms": max(ms),
                   "stall_max_ms": max(stalls[kind]), "n": len(ms)}
            for kind, ms in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", default="rich,django")
    ap.add_argument("--data", type=Path, default=Path("/work/bench-data"))
    ap.add_argument("--saves", type=int, default=5, help="rounds of the five edits")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, python {sys.version.split()[0]}")
    results = []
    for name in args.repos.split(","):
        r = bench_repo(name.strip(), args.data, args.saves)
        results.append(r)
        print(f"\n{name} ({r['nodes']:,} nodes)          ms     stall ms")
        print(f"  {'idle (noise floor)':20s} {'':8s} {r['idle_stall_ms']:8.1f}")
        for label, key in (("load", "load"), ("prepare", "prepare"),
                           ("young GC after load", "young_gc"), ("full GC after load", "full_gc"),
                           ("reload", "reload")):
            if f"{key}_ms" in r:
                print(f"  {label:20s} {r[key + '_ms']:8.1f} {r[key + '_stall_ms']:8.1f}")
        for label, key in (("young GC after reload", "reload_young_gc"),
                           ("full GC after reload", "reload_full_gc")):
            print(f"  {label:20s} {'':8s} {r[key + '_stall_ms']:8.1f}")
        print("  RSS MB: loaded {:.0f}, prepared {}, after the saves {:.0f}".format(
            r["rss_loaded_mb"], f"{r['rss_prepared_mb']:.0f}" if "rss_prepared_mb" in r else "-",
            r["rss_after_saves_mb"]))
        print("  save           p50 ms   max ms  stall max ms")
        for kind, s in r["saves"].items():
            print(f"  {kind:12s} {s['p50_ms']:8.1f} {s['max_ms']:8.1f} {s['stall_max_ms']:8.1f}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
