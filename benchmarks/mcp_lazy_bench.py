"""What the loopback MCP endpoint costs an editor session no agent connects to, and what
the first agent request pays, through a real `neuralmind-lsp --stdio` process.

    python benchmarks/mcp_lazy_bench.py [--repo rich-13.7.1] [--runs 3] [--json OUT]

On a copy of a benchmark repository (indexed first by `neuralmind build`), each run
starts the server with MCP off and once with MCP on, and reports the server's RSS once
the endpoint is up and idle, after a health probe (what the stdio bridge does), after
the first MCP request (initialize) and after the first tool call; the latency of
those two; and the event loop's largest stall in that window (the server's own
ticker, NEURALMIND_LOOP_MONITOR=1). Prints the 1-minute load average, since the
machine is shared. Run it with PYTHONPATH pointing at another tree to measure that
tree (e.g. the code before lazy building).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from lsp_bench import QUESTIONS, Client, copy_repo, stalls_between  # noqa: E402
from mcp_bench import HttpMcp  # noqa: E402

from neuralmind.discovery import Discovery, probe  # noqa: E402 - stdlib only, like the bridge

SETTLE_SECONDS = 3.0


class LspClient(Client):
    """lsp_bench's client with MCP on or off as asked."""

    def __init__(self, root: Path, env: dict[str, str], mcp: bool) -> None:
        super().__init__(root, env)
        self.mcp = mcp

    async def start(self) -> None:
        """The console script editors run: `python -m` from the project root would put
        the project on sys.path (the SDK would import this copy of rich, for one)."""
        self.proc = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).parent / "neuralmind-lsp"), "--stdio",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=self.log, env=self.env, cwd=self.root, limit=2 ** 26)
        self._reader = asyncio.create_task(self._read())

    async def initialize(self) -> float:
        t0 = time.perf_counter()
        await self.request("initialize", {
            "processId": os.getpid(), "rootUri": self.root.as_uri(),
            "capabilities": {"window": {"workDoneProgress": True}},
            "initializationOptions": {"neuralmind": {"mcp": self.mcp}}})
        self.notify("initialized", {})
        return time.perf_counter() - t0


def load1() -> float:
    return os.getloadavg()[0]


async def settled(lsp: Client) -> dict[str, Any]:
    """Wait until the index is loaded and, with MCP on, the endpoint is up; then settle."""
    await lsp.wait_indexed()
    status = await lsp.request("neuralmind/status", {})
    t0 = time.monotonic()
    while isinstance(lsp, LspClient) and lsp.mcp and not status.get("mcp_endpoint"):
        if time.monotonic() - t0 > 60:
            raise TimeoutError("the MCP endpoint did not come up")
        await asyncio.sleep(0.05)
        status = await lsp.request("neuralmind/status", {})
    await asyncio.sleep(SETTLE_SECONDS)
    return status


async def one_run(root: Path, env: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"load1_start": load1()}
    off = LspClient(root, env, mcp=False)
    await off.start()
    await off.initialize()
    await settled(off)
    out["rss_mcp_off_mb"] = off.rss_mb()
    await off.stop()

    lsp = LspClient(root, env, mcp=True)
    await lsp.start()
    await lsp.initialize()
    await settled(lsp)
    out["rss_idle_mb"] = lsp.rss_mb()
    discovery = json.loads((root / ".neuralmind" / "mcp.json").read_text())

    entry = Discovery(**discovery)
    problem = await asyncio.to_thread(probe, entry, root)
    assert problem is None, problem
    out["rss_after_health_mb"] = lsp.rss_mb()

    t0 = time.monotonic()
    client = HttpMcp(entry.url, entry.token)
    start = time.perf_counter()
    await asyncio.to_thread(client.initialize)
    out["first_initialize_s"] = time.perf_counter() - start
    out["rss_after_initialize_mb"] = lsp.rss_mb()
    start = time.perf_counter()
    await asyncio.to_thread(client.call, "neuralmind_query",
                            {"question": QUESTIONS[0], "budget": 1000})
    out["first_query_s"] = time.perf_counter() - start
    t1 = time.monotonic()
    out["rss_after_query_mb"] = lsp.rss_mb()
    start = time.perf_counter()
    await asyncio.to_thread(client.call, "neuralmind_query",
                            {"question": QUESTIONS[1], "budget": 1000})
    out["second_query_s"] = time.perf_counter() - start
    status = await lsp.request("neuralmind/status", {})
    out["stall_first_request_ms"] = stalls_between(status, t0, t1)
    loop = status.get("event_loop", {})
    out["stalls_first_request"] = [s for s in loop.get("stalls", []) if t0 <= s[0] <= t1]
    out["culprits_first_request"] = [c for c in loop.get("culprits", []) if t0 <= c["t"] <= t1]
    out["stall_before_first_request_ms"] = max(
        (ms for t, ms in status.get("event_loop", {}).get("stalls", []) if t < t0), default=0.0)
    out["shutdown_s"] = await lsp.stop()
    out["load1_end"] = load1()
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="nm-mcp-lazy-"))
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "NEURALMIND_LOG": "warning",
           "NEURALMIND_LOOP_MONITOR": "1"}
    try:
        root = copy_repo(args.repo, tmp)
        subprocess.run([sys.executable, "-m", "neuralmind.cli.main", "build", str(root)],
                       env=env, check=True, capture_output=True)
        runs = [await one_run(root, env) for _ in range(args.runs)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    keys = [k for k, v in runs[0].items() if not k.startswith("load1") and isinstance(v, float)]
    return {"repo": args.repo, "runs": runs,
            "median": {k: statistics.median(r[k] for r in runs) for k in keys},
            "load1": [(r["load1_start"], r["load1_end"]) for r in runs]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", default="rich-13.7.1")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args()
    results = asyncio.run(run(args))
    m = results["median"]
    print(f"{results['repo']}, median of {args.runs} runs (load1 start/end: "
          + ", ".join(f"{a:.2f}/{b:.2f}" for a, b in results["load1"]) + ")")
    print(f"  RSS MCP off {m['rss_mcp_off_mb']:.1f} MB; MCP on, idle {m['rss_idle_mb']:.1f} MB, "
          f"after a health probe {m['rss_after_health_mb']:.1f} MB, after the first MCP "
          f"request {m['rss_after_initialize_mb']:.1f} MB, after the first tool call "
          f"{m['rss_after_query_mb']:.1f} MB")
    print(f"  first MCP initialize {m['first_initialize_s'] * 1000:.0f} ms, first query "
          f"{m['first_query_s'] * 1000:.0f} ms, second query {m['second_query_s'] * 1000:.0f} ms")
    print(f"  loop stall during the first request + call {m['stall_first_request_ms']:.1f} ms "
          f"(largest before it, since start-up: {m['stall_before_first_request_ms']:.1f} ms); "
          f"shutdown {m['shutdown_s'] * 1000:.0f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
