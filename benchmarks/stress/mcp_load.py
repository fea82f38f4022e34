"""50 concurrent MCP clients x 20 tool calls through the warm editor server's loopback
endpoint (the one agents reach over HTTP or through `neuralmind mcp`'s bridge).

    python benchmarks/stress/mcp_load.py [--repo rich-13.7.1] [--clients 50] [--calls 20]

Prints calls answered / failed, per-call p50/p95/max, session set-up p95, wall time and
the server's RSS/descriptors/threads before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from stress_common import LspProcess, copy_bench_repo, pct, proc_figures, workdir

from neuralmind.discovery import read_discovery

CALLS = [("neuralmind_query", {"question": "how does the console render a table", "budget": 800}),
         ("neuralmind_search", {"question": "progress bar refresh rate", "k": 10}),
         ("neuralmind_status", {}),
         ("neuralmind_next_likely", {"file": "rich/console.py"}),
         ("neuralmind_decisions_query", {"question": "rendering"}),
         ("neuralmind_wakeup", {"budget": 400})]


async def client_run(url: str, token: str, n: int, lat: list[float], setup: list[float],
                     failures: list[str]) -> None:
    t = time.perf_counter()
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    try:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            setup.append((time.perf_counter() - t) * 1000)
            for i in range(n):
                name, params = CALLS[i % len(CALLS)]
                t = time.perf_counter()
                result = await client.call_tool(name, params)
                lat.append((time.perf_counter() - t) * 1000)
                if result.is_error:
                    failures.append(f"{name}: {result.content}")
    except Exception as e:  # a refused or dropped session is a finding
        failures.append(f"session: {e!r}")


async def load(url: str, token: str, clients: int, calls: int) -> dict[str, object]:
    lat: list[float] = []
    setup: list[float] = []
    failures: list[str] = []
    t = time.perf_counter()
    await asyncio.gather(*(client_run(url, token, calls, lat, setup, failures)
                           for _ in range(clients)))
    wall = time.perf_counter() - t
    return {"calls_answered": len(lat), "calls_expected": clients * calls,
            "failures": len(failures), "first_failures": failures[:3],
            "call_p50_ms": round(pct(lat, 50), 1), "call_p95_ms": round(pct(lat, 95), 1),
            "call_max_ms": round(max(lat, default=0), 1),
            "session_setup_p95_ms": round(pct(setup, 95), 1), "wall_s": round(wall, 1),
            "calls_per_s": round(len(lat) / wall, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repo", default="rich-13.7.1")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args()

    root = copy_bench_repo(args.repo, workdir("mcp") / "repo")
    lsp = LspProcess(root)
    lsp.initialize({})
    lsp.wait_ready(timeout=900)
    entry = None
    for _ in range(300):
        entry = read_discovery(root)
        if entry:
            break
        time.sleep(0.1)
    assert entry is not None, "the server never published its MCP endpoint"
    lsp.request("neuralmind/context", {"query": "warm up"})
    before = proc_figures(lsp.proc.pid)
    out = asyncio.run(load(entry.url, entry.token, args.clients, args.calls))
    out["before"], out["after"] = before, proc_figures(lsp.proc.pid)
    time.sleep(10)                        # closed sessions should give their sockets back
    out["after_10s_idle"] = proc_figures(lsp.proc.pid)
    out["still_serving"] = "error" not in lsp.request("neuralmind/status", {}, timeout=60)
    out["exit_code"] = lsp.shutdown()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
