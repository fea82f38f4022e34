#!/usr/bin/env python3
"""Latency of `neuralmind hook EVENT` as an agent runs it: p50/p95 with and without a server.

    python benchmarks/hook_bench.py [--repo PATH] [--runs 30] [--modes disk,editor,agent] [--json]

Each call is the real console script in a new process with Claude Code's documented JSON on
stdin, timed from spawn to exit (what the agent waits for), with the process's own CPU time
beside it (on a loaded machine the wall time is mostly waiting for a core). In the server
modes the same requests are also POSTed from this process: the route's round trip and the
server's own time. Modes:
- disk: no server; the hook answers from the on-disk index (target p95 <= 1.5 s);
- editor: the editor's `neuralmind-lsp` runs (its loopback endpoint answers; target
  p95 <= 150 ms);
- agent: the agent's own `neuralmind mcp` runs, no editor (its hook route answers).
The repository is brought up to date first (`neuralmind build`). Load averages are printed
beside every figure: on a shared machine, repeat and compare.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from sample_workspace import start_editor_server  # noqa: E402 - the tests' editor launcher

from neuralmind.discovery import (  # noqa: E402
    DISCOVERY_NAME,
    HOOKS_DISCOVERY_NAME,
    read_discovery,
)
from neuralmind.hooks import claude  # noqa: E402
from neuralmind.hooks.client import _post  # noqa: E402

BIN = Path(sys.executable).parent
HOOK = [str(BIN / "neuralmind") if (BIN / "neuralmind").exists() else "neuralmind", "hook"]
PROMPTS = [
    "how does the stdio bridge forward requests to the editor's endpoint",
    "where are stale decisions marked after a commit",
    "how is the context pack fitted into the token budget",
    "fix the hebbian learning rate decay for long sessions",
    "what happens when the synapse database is corrupted",
]
PATTERNS = ["def confine", "class SearchIndex", "record_query", "atomic_write"]


def loads() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


def payload(root: Path, event: str, i: int) -> dict[str, Any]:
    base = {"session_id": "bench", "cwd": str(root), "hook_event_name": event}
    if event == "SessionStart":
        return {**base, "source": "startup"}
    if event == "UserPromptSubmit":
        return {**base, "prompt": PROMPTS[i % len(PROMPTS)]}
    if event == "PreToolUse":
        return {**base, "tool_name": "Grep", "tool_input": {"pattern": PATTERNS[i % len(PATTERNS)]}}
    if event == "PostToolUse":
        path = str(root / "neuralmind" / "config.py")
        return {**base, "tool_name": "Edit", "tool_input": {"file_path": path}}
    return {**base, "stop_hook_active": False}


EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]


def time_event(root: Path, event: str, runs: int) -> dict[str, Any]:
    """Spawn to exit per call, and the hook process's own CPU (user + system: what the
    call would take on an idle machine, minus waits)."""
    times, sizes, cpu = [], [], []
    for i in range(runs):
        data = json.dumps(payload(root, event, i))
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        run = subprocess.run([*HOOK, event], input=data, capture_output=True, text=True,
                             cwd=root, timeout=120)
        times.append((time.perf_counter() - t0) * 1000)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
        sizes.append(len(run.stdout))
    times.sort()
    return {"event": event, "runs": runs, "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[max(0, int(round(0.95 * runs)) - 1)], 1),
            "max_ms": round(times[-1], 1), "cpu_p50_ms": round(statistics.median(cpu), 1),
            "answered": sum(1 for s in sizes if s),
            "load": loads()}


def time_route(root: Path, discovery: str, event: str, runs: int) -> dict[str, Any]:
    """The same requests POSTed from this process (no spawn): the route's round trip and
    the server's own time (`server_ms`), to tell process start-up from engine work."""
    entry = read_discovery(root, discovery)
    assert entry is not None
    trips, server = [], []
    for i in range(runs):
        req = claude.parse(event, payload(root, event, i))
        assert req is not None
        t0 = time.perf_counter()
        status, body = _post(entry.url, entry.token, json.dumps(req.to_json()).encode(), 30)
        trips.append((time.perf_counter() - t0) * 1000)
        assert status == 200, (status, body[:200])
        server.append(json.loads(body)["server_ms"])
    return {"route_p50_ms": round(statistics.median(trips), 1),
            "server_p50_ms": round(statistics.median(server), 1)}


def wait_for(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.2)


def warm(root: Path) -> bool:
    run = subprocess.run([*HOOK, "UserPromptSubmit"], input=json.dumps(payload(
        root, "UserPromptSubmit", 0)), capture_output=True, text=True, cwd=root, timeout=120)
    return bool(run.stdout)


def run_mode(root: Path, mode: str, runs: int) -> list[dict[str, Any]]:
    proc: subprocess.Popen[bytes] | None = None
    try:
        if mode == "editor":
            proc = start_editor_server(root)
            wait_for(lambda: read_discovery(root) is not None, 120, "the editor's endpoint")
        elif mode == "agent":
            proc = subprocess.Popen([*HOOK[:-1], "mcp", str(root)], stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    cwd=root)
            wait_for(lambda: read_discovery(root, HOOKS_DISCOVERY_NAME) is not None, 120,
                     "the agent process's hook endpoint")
        if proc is None:
            return [{"mode": mode, **time_event(root, e, runs)} for e in EVENTS]
        wait_for(lambda: warm(root), 300, "the first warm answer")
        name = DISCOVERY_NAME if mode == "editor" else HOOKS_DISCOVERY_NAME
        return [{"mode": mode, **time_event(root, e, runs), **time_route(root, name, e, runs)}
                for e in EVENTS]
    finally:
        if proc is not None:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=ROOT, help="an indexed repository (default: "
                                                            "this checkout)")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--modes", default="disk,editor,agent")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    root = args.repo.resolve()
    subprocess.run([*HOOK[:-1], "build", str(root)], check=True, capture_output=True)
    journal = root / ".neuralmind" / "agent_events.jsonl"
    rows = []
    for mode in args.modes.split(","):
        print(f"# {mode}: load {loads()}", file=sys.stderr)
        rows += run_mode(root, mode.strip(), args.runs)
    if journal.exists():
        journal.unlink()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"hook latency, {args.runs} runs per event, {root} (cpus {os.cpu_count()}, "
          f"{shutil.which('neuralmind') or HOOK[0]})")
    print(f"{'mode':<7} {'event':<17} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu p50':>8} "
          f"{'answered':>8} {'route p50':>9} {'server p50':>10}  load 1/5 min")
    for r in rows:
        route = f"{r['route_p50_ms']:>9.0f} {r['server_p50_ms']:>10.0f}" if "route_p50_ms" in r \
            else f"{'-':>9} {'-':>10}"
        print(f"{r['mode']:<7} {r['event']:<17} {r['p50_ms']:>8.0f} {r['p95_ms']:>8.0f} "
              f"{r['max_ms']:>8.0f} {r['cpu_p50_ms']:>8.0f} {r['answered']:>8} {route}  "
              f"{r['load']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
