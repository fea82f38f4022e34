"""MCP figures through the real processes, on a copy of a benchmark repository.

    python benchmarks/mcp_bench.py [--repo rich-13.7.1] [--calls 60] [--spawns 3] [--json OUT]

Prints cold start of `neuralmind mcp` to its first tool result, standalone (no
editor: the process opens the on-disk index itself) and bridged (a running
`neuralmind-lsp` serves MCP on loopback; the spawned process only pumps stdio), and
tool-call latency p50/p95 through the warm server for neuralmind_query,
neuralmind_next_likely and neuralmind_decisions_query: over the stdio bridge (what
a spawning agent sees) and over HTTP directly, next to the LSP's own
neuralmind/context for the same questions.

Targets (issue 7): bridged first result < 1 s after spawn; warm tool call p95 < 60 ms.
The earlier NeuralMind on this machine: process start 1.8 s, first call ~1 s, later
calls 30-65 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
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
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).parent))
from lsp_bench import QUESTIONS, Client, copy_repo, pct  # noqa: E402

HANDSHAKE = "2025-06-18"
MCP_CMD = [sys.executable, "-m", "neuralmind.cli.main", "mcp"]


class StdioMcp:
    """A minimal MCP client over a spawned `neuralmind mcp` (newline-delimited JSON-RPC)."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.spawned = time.perf_counter()
        self.proc = subprocess.Popen([*MCP_CMD, str(root)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                          "params": params}).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server exited: {self.proc.stderr.read().decode()[-500:]}")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def initialize(self) -> None:
        self.request("initialize", {"protocolVersion": HANDSHAKE, "capabilities": {},
                                    "clientInfo": {"name": "mcp-bench", "version": "0"}})
        assert self.proc.stdin is not None
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": name, "arguments": args})
        if result.get("isError"):
            raise RuntimeError(f"{name}: {result['content'][0]['text']}")
        return result

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stderr.read().decode()


class HttpMcp:
    """The same client speaking streamable HTTP (handshake era) to the endpoint directly."""

    def __init__(self, url: str, token: str) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port)
        self.conn.connect()
        import socket
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.path = parts.path
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}
        self.next_id = 0

    def _post(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        self.conn.request("POST", self.path, json.dumps(msg), self.headers)
        resp = self.conn.getresponse()
        if resp.getheader("mcp-session-id"):
            self.headers["mcp-session-id"] = resp.getheader("mcp-session-id")
        body = resp.read().decode()
        if resp.status == 202 or not body.strip():
            return None
        if (resp.getheader("content-type") or "").startswith("text/event-stream"):
            data = [ln[5:].strip() for ln in body.splitlines() if ln.startswith("data:")]
            body = [d for d in data if d][-1]
        return json.loads(body)

    def initialize(self) -> None:
        self.next_id += 1
        self._post({"jsonrpc": "2.0", "id": self.next_id, "method": "initialize", "params": {
            "protocolVersion": HANDSHAKE, "capabilities": {},
            "clientInfo": {"name": "mcp-bench-http", "version": "0"}}})
        self.headers["mcp-protocol-version"] = HANDSHAKE
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        msg = self._post({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                          "params": {"name": name, "arguments": args}})
        assert msg is not None
        if "error" in msg or msg["result"].get("isError"):
            raise RuntimeError(f"{name}: {msg}")
        return msg["result"]


class McpLspClient(Client):
    """lsp_bench's client with MCP enabled (it turns it off for its own figures)."""

    async def initialize(self) -> float:
        t0 = time.perf_counter()
        await self.request("initialize", {
            "processId": os.getpid(), "rootUri": self.root.as_uri(),
            "capabilities": {"window": {"workDoneProgress": True}},
            "initializationOptions": {"neuralmind": {"mcp": True}}})
        self.notify("initialized", {})
        return time.perf_counter() - t0


def cold_start(root: Path, env: dict[str, str], spawns: int) -> dict[str, Any]:
    """Spawn-to-initialized and spawn-to-first-result (neuralmind_query), median of `spawns`."""
    init, first, notes = [], [], set()
    for i in range(spawns):
        c = StdioMcp(root, env)
        c.initialize()
        init.append(time.perf_counter() - c.spawned)
        c.call("neuralmind_query", {"question": QUESTIONS[i % len(QUESTIONS)], "budget": 1000})
        first.append(time.perf_counter() - c.spawned)
        notes |= {ln for ln in c.close().splitlines() if "] mcp:" in ln}
    return {"initialize_s": statistics.median(init), "first_result_s": statistics.median(first),
            "first_result_max_s": max(first), "notice": sorted(notes)}


def latencies(client: StdioMcp | HttpMcp, files: list[str], calls: int) -> dict[str, float]:
    out: dict[str, float] = {}
    plans = {
        "query": lambda i: ("neuralmind_query", {"question": QUESTIONS[i % len(QUESTIONS)]}),
        "next_likely": lambda i: ("neuralmind_next_likely", {"file": files[i % len(files)]}),
        "decisions_query": lambda i: ("neuralmind_decisions_query",
                                      {"question": QUESTIONS[i % len(QUESTIONS)]}),
    }
    for label, plan in plans.items():
        client.call(*plan(0))                      # warm this path once
        lat = []
        for i in range(calls):
            t0 = time.perf_counter()
            client.call(*plan(i))
            lat.append(1000 * (time.perf_counter() - t0))
        out[f"{label}_p50_ms"] = statistics.median(lat)
        out[f"{label}_p95_ms"] = pct(lat, 95)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="nm-mcp-bench-"))
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "NEURALMIND_LOG": "warning"}
    results: dict[str, Any] = {"repo": args.repo}
    try:
        root = copy_repo(args.repo, tmp)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "neuralmind.cli.main", "build", str(root)],
                       env=env, check=True, capture_output=True)
        results["build_s"] = time.perf_counter() - t0
        files = sorted(str(p.relative_to(root)) for p in (root / "rich").glob("*.py"))[:40]

        results["standalone"] = await asyncio.to_thread(cold_start, root, env, args.spawns)

        lsp = McpLspClient(root, env)
        await lsp.start()
        await lsp.initialize()
        await lsp.wait_indexed()
        while not (status := await lsp.request("neuralmind/status", {}))["mcp_endpoint"]:
            await asyncio.sleep(0.05)
        results["nodes"] = status["nodes"]
        discovery = json.loads((root / ".neuralmind" / "mcp.json").read_text())

        # The server's own first question pays its lazy loads (token counter, caches); that
        # is the editor's cost, measured apart so the bridged figures are the spawn's own.
        t0 = time.perf_counter()
        await lsp.request("neuralmind/context", {"query": QUESTIONS[-1]})
        results["server_first_context_s"] = time.perf_counter() - t0
        results["bridged"] = await asyncio.to_thread(cold_start, root, env, args.spawns)

        bridge = StdioMcp(root, env)
        await asyncio.to_thread(bridge.initialize)
        for i in range(args.decisions):
            await asyncio.to_thread(bridge.call, "neuralmind_decision_record", {
                "title": f"Decision {i}: {QUESTIONS[i % len(QUESTIONS)]}",
                "rationale": f"Benchmark rationale {i} about {QUESTIONS[(i * 7) % len(QUESTIONS)]}.",
                "files": [files[i % len(files)]]})
        results["warm_bridged"] = await asyncio.to_thread(latencies, bridge, files, args.calls)
        await asyncio.to_thread(bridge.close)

        direct = HttpMcp(discovery["url"], discovery["token"])
        await asyncio.to_thread(direct.initialize)
        results["warm_http"] = await asyncio.to_thread(latencies, direct, files, args.calls)

        lat = []
        for i in range(args.calls):
            t0 = time.perf_counter()
            await lsp.request("neuralmind/context", {"query": QUESTIONS[i % len(QUESTIONS)]})
            lat.append(1000 * (time.perf_counter() - t0))
        results["lsp_context_p50_ms"] = statistics.median(lat)
        results["lsp_context_p95_ms"] = pct(lat, 95)
        await lsp.stop()
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", default="rich-13.7.1")
    parser.add_argument("--calls", type=int, default=60, help="timed calls per tool")
    parser.add_argument("--spawns", type=int, default=3, help="cold starts per mode")
    parser.add_argument("--decisions", type=int, default=20, help="decisions recorded first")
    parser.add_argument("--json", default=None, help="also write the figures here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args()
    results = asyncio.run(run(args))
    for mode in ("standalone", "bridged"):
        r = results[mode]
        print(f"{mode:>10} cold start: initialized {r['initialize_s']:.2f} s, first result "
              f"{r['first_result_s']:.2f} s (max {r['first_result_max_s']:.2f} s)")
    print(f"  (the server's own first context request took "
          f"{results['server_first_context_s']:.2f} s before the bridged spawns)")
    for path in ("warm_bridged", "warm_http"):
        r = results[path]
        print(f"{path:>12}: " + ", ".join(
            f"{tool} p50 {r[f'{tool}_p50_ms']:.1f} / p95 {r[f'{tool}_p95_ms']:.1f} ms"
            for tool in ("query", "next_likely", "decisions_query")))
    print(f"  lsp context: p50 {results['lsp_context_p50_ms']:.1f} / p95 "
          f"{results['lsp_context_p95_ms']:.1f} ms  ({results['nodes']} nodes, build "
          f"{results['build_s']:.1f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
