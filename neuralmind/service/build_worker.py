"""The full build, run as a child process of the server.

Why a process: tree-sitter holds the GIL while it parses, so a full build on a
thread of the server stalls its event loop (the editor's keystrokes) for as
long as the biggest file takes to parse. A child has its own GIL; the server
only reads one JSON line per event from the child's stdout and swaps in the
new graph when the child says it is written. Killing the child cancels the
build; the state files are replaced atomically, so a killed build leaves the
previous generation readable.

Events, one JSON object per line on stdout:
    {"event": "progress", "phase": str, "done": int, "total": int}
    {"event": "graph_ready", "files": int, "nodes": int}   graph + keyword index written
    {"event": "vectors_saved", "vectors": int}             a slice of embeddings written

From `graph_ready` on the parent serves that graph and keyword index and applies saves to
them (they are its files); the child only writes `vectors.npz` (index/vector_handoff.py).
    {"event": "done", "files": int, "nodes": int, "seconds": float}
    {"event": "error", "code": str, "message": str}

Requests from the parent, one JSON object per line on stdin:
    {"attention": [path, ...]}   embed these files' nodes first (index/embed_order.py)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from neuralmind.config import load_workspace_config
from neuralmind.errors import EngineError
from neuralmind.log import setup_logging

PROGRESS_INTERVAL_S = 0.1  # at most ten progress lines a second per phase
NICENESS = 10              # the build yields the CPU to the editor and its server
# ...and every thread of it this much more once its graph is served and it embeds (19, the
# lowest): its model runs on both cores for ~25 min on the Linux kernel, and the server's
# answers competing with it had p95 243-563 ms (BENCHMARKS.md LIVE9; LIVE10: no change seen)
BUILD_EMBED_NICE = 10


class _Emitter:
    """Writes events to the parent, throttling progress lines."""

    def __init__(self, out: Any) -> None:
        self._out = out
        self._last: dict[str, float] = {}

    def send(self, event: str, **fields: Any) -> None:
        self._out.write(json.dumps({"event": event, **fields}) + "\n")
        self._out.flush()

    def progress(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last.get(phase, 0.0) < PROGRESS_INTERVAL_S:
            return
        self._last[phase] = now
        self.send("progress", phase=phase, done=int(done), total=int(total))


class Attention:
    """The files the parent wants embedded first, read from stdin by a thread of its own."""

    def __init__(self) -> None:
        self._files: list[str] = []

    def files(self) -> list[str]:
        return self._files

    def listen(self, stream: Any) -> None:
        threading.Thread(target=self._read, args=(stream,), name="attention",
                         daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            try:
                files = json.loads(line).get("attention")
            except (ValueError, AttributeError):
                continue
            if isinstance(files, list):
                self._files = [f for f in files if isinstance(f, str)]   # one atomic swap


def run(root: Path, config_values: dict[str, Any], embed: bool, out: Any,
        attention: Attention | None = None, changed: list[str] | None = None) -> int:
    # after fd 1 became stderr (main): nothing the engine's imports print reaches the pipe
    from neuralmind.engine import Workspace, coverage
    from neuralmind.graph.store import pause_point

    emit = _Emitter(out)
    config = load_workspace_config(root)
    for problem in config.update(config_values):
        logging.getLogger("neuralmind.service").warning("build worker: %s", problem)
    started = time.monotonic()
    try:
        ws = Workspace(root, config)
        report = ws.build(changed=changed, progress=emit.progress, embed=False)
        graph = report.graph
        pause_point("graph_ready")
        emit.send("graph_ready", files=len(graph.files), nodes=len(graph.nodes))
        if embed:
            lower_priority(BUILD_EMBED_NICE)
            pause_point("embed")
            coverage.embed_pending(
                graph, ws.index, ws.config, attention=(attention or Attention()).files,
                progress=lambda done, total: emit.progress("embed", done, total),
                saved=lambda vectors: emit.send("vectors_saved", vectors=vectors),
                settle=False)
        emit.send("done", files=len(graph.files), nodes=len(graph.nodes),
                  seconds=round(time.monotonic() - started, 3))
        return 0
    except EngineError as e:
        emit.send("error", code=e.code, message=e.message)
        return 2
    except Exception as e:  # reported to the parent, which keeps serving the old state
        logging.getLogger("neuralmind.service").exception("build failed")
        emit.send("error", code="build_failed", message=f"{type(e).__name__}: {e}")
        return 1


def lower_priority(nice: int) -> None:
    """Raise every thread's niceness by `nice` (on Linux a thread's own; threads started
    later inherit their starter's): the serving process's engine thread wins the cores."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [0]
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
        except OSError:     # a thread gone meanwhile, or no such interface: best effort
            pass


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(143)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="neuralmind-build-worker")
    parser.add_argument("root")
    parser.add_argument("--config", default="{}", help="JSON object of WorkspaceConfig values")
    parser.add_argument("--no-embed", action="store_true")
    parser.add_argument("--log-file", default=None)
    parser.add_argument("--changed", default=None,
                        help="a JSON file listing the only paths to look at (a checkout)")
    args = parser.parse_args(argv)
    if not args.no_embed:
        # numpy and the embedder's module: only a build that embeds needs them
        from neuralmind.index.embedder import bulk_embedding_process

        bulk_embedding_process()        # before any thread starts (see its docstring)
    # SIGTERM (cancel) raises SystemExit so atomic writes in flight remove their temp files.
    signal.signal(signal.SIGTERM, _terminate)
    # Background work: the editor (and its server's event loop) goes first for the CPU.
    try:
        os.nice(NICENESS)
    except OSError:
        pass
    # Our stdout is the event pipe: keep it for events only, send stray prints to stderr.
    events = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    setup_logging(0, args.log_file)
    try:
        values = json.loads(args.config)
        if not isinstance(values, dict):
            raise ValueError("--config must be a JSON object")
        changed = None
        if args.changed:
            changed = json.loads(Path(args.changed).read_text(encoding="utf-8"))
            if not isinstance(changed, list) or not all(isinstance(p, str) for p in changed):
                raise ValueError("--changed must name a JSON list of paths")
    except (OSError, ValueError) as e:
        print(f"neuralmind-build-worker: {e}", file=sys.stderr)
        return 2
    attention = Attention()
    attention.listen(sys.stdin)
    return run(Path(args.root), values, not args.no_embed, events, attention, changed)


if __name__ == "__main__":
    sys.exit(main())
