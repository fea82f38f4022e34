"""A full cold build as a timeline: phases, every embedding batch, CPU per half second.

Copies a source tree, runs `Workspace.build()` on it in this process with each phase and
each batch timestamped (the engine's functions wrapped, nothing else changed), samples the
process's CPU every 0.5 s, and prints where the wall time went: the phases before the first
batch, seconds with two / one / no batch in flight, batch time summed over the workers,
and cores busy per 10 s (BENCHMARKS.md "Cold index time, whole Django"). Run it under
`heavy --quiet`; `PYTHONPATH=<another checkout>` times another version of the engine.

    python benchmarks/build_timeline.py /work/bench-data/Django-5.1 /tmp/x/django [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from neuralmind.index.embedder import bulk_embedding_process

Event = dict[str, Any]


def instrument(events: list[Event], t0: float) -> None:
    """Timestamp the build's phases and every batch (`Embedder.run_batch`, else `_run`)."""
    from neuralmind.engine import workspace as wsmod
    from neuralmind.graph import build as gbuild
    from neuralmind.index import embedder as emb
    from neuralmind.index import search_index as si

    def wrap(obj: Any, attr: str, name: str, batch: bool = False) -> None:
        orig = getattr(obj, attr)

        def timed(*a: Any, **k: Any) -> Any:
            start = time.perf_counter()
            try:
                return orig(*a, **k)
            finally:
                extra = {"n": len(a[1]), "longest": max(map(len, a[1]))} if batch else {}
                events.append({"name": name, "t0": start - t0,
                               "t1": time.perf_counter() - t0, **extra})
        setattr(obj, attr, timed)

    wrap(gbuild.GraphBuilder, "build", "graph")
    wrap(wsmod.Workspace, "_seed_synapses", "synapse seeding")
    wrap(si.SearchIndex, "update", "keyword index")
    wrap(si.SearchIndex, "embed_pending", "embedding")
    wrap(si.SearchIndex, "_save", "index writes")
    run = "run_batch" if hasattr(emb.Embedder, "run_batch") else "_run"
    wrap(emb.Embedder, run, "batch", batch=True)


def report(events: list[Event], cpu: list[tuple[float, float]], summary: dict[str, Any]) -> None:
    print(json.dumps(summary))
    by: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by[e["name"]].append(e)
    for name, evs in by.items():
        print(f"{name:16} n={len(evs):5d} {sum(e['t1'] - e['t0'] for e in evs):8.1f} s "
              f"from {min(e['t0'] for e in evs):6.1f} to {max(e['t1'] for e in evs):6.1f}")
    batches = by["batch"]
    if batches and by["embedding"]:
        start, end = by["embedding"][0]["t0"], by["embedding"][0]["t1"]
        first = min(e["t0"] for e in batches)
        points = sorted([(e["t0"], 1) for e in batches] + [(e["t1"], -1) for e in batches])
        spans: Counter[int] = Counter()
        now, last = 0, first
        for t, step in points:
            spans[now] += t - last
            now, last = now + step, t
        spans[now] += end - last
        print(f"first batch at {first:.1f} s (embedding set-up {first - start:.1f} s); after it, "
              "batches in flight: " + ", ".join(f"{k}: {v:.1f} s" for k, v in sorted(spans.items())))
        print(f"padded word pieces {sum(e['n'] * e['longest'] for e in batches):,}, texts "
              f"{sum(e['n'] for e in batches):,}")
    windows: dict[int, list[float]] = defaultdict(list)
    for t, busy in cpu:
        windows[int(t // 10)].append(busy)
    print("cores busy per 10 s: " + " ".join(
        f"{k * 10}:{sum(v) / len(v):.2f}" for k, v in sorted(windows.items())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("copy", type=Path, help="where the fresh copy goes (replaced)")
    ap.add_argument("--json", type=Path, help="write every event and CPU sample here")
    args = ap.parse_args()
    bulk_embedding_process()            # as `neuralmind build` does, before any thread
    shutil.rmtree(args.copy, ignore_errors=True)
    shutil.copytree(args.source, args.copy, symlinks=True)
    shutil.rmtree(args.copy / ".neuralmind", ignore_errors=True)
    home = args.copy.with_name(args.copy.name + "-home")
    shutil.rmtree(home, ignore_errors=True)
    os.environ["NEURALMIND_HOME"] = str(home)
    from neuralmind.engine import Workspace

    events: list[Event] = []
    cpu: list[tuple[float, float]] = []
    t0 = time.perf_counter()
    instrument(events, t0)
    done = threading.Event()

    def sample() -> None:
        last, when = os.times(), time.perf_counter()
        while not done.wait(0.5):
            now, t = os.times(), time.perf_counter()
            cpu.append((t - t0, (now.user - last.user + now.system - last.system) / (t - when)))
            last, when = now, t

    threading.Thread(target=sample, daemon=True).start()
    load = os.getloadavg()[0]
    ws = Workspace(args.copy)
    ws.build()
    done.set()
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = {"wall_s": round(time.perf_counter() - t0, 1),
               "user_s": round(me.ru_utime + kids.ru_utime, 1),
               "sys_s": round(me.ru_stime + kids.ru_stime, 1),
               "peak_rss_mb": round(me.ru_maxrss / 1024), "workers_peak_rss_mb":
               round(kids.ru_maxrss / 1024), "nodes": len(ws.graph.nodes),
               "vectors": ws.index.vector_count, "load_before": load,
               "load_after": os.getloadavg()[0]}
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "events": events, "cpu": cpu}))
    report(events, cpu, summary)


if __name__ == "__main__":
    main()
