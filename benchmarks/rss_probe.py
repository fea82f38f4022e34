"""The language server's memory after warm-up, by stage, on a kept indexed copy (issue #17).

    python benchmarks/rss_probe.py ROOT [--queries 50] [--saves 5] [--json OUT]

Starts the server the current interpreter imports (set PYTHONPATH to probe another
checkout: bisecting RSS across commits needs no install), waits for the index, and reads
the server's RSS, PSS and anonymous memory at each stage: after the index is up, after
context requests, after saves, after a status and the learned stores' first use. The
largest mappings beside the heap (`/proc/PID/smaps`) name libraries loaded since. A
lighter, quicker stand-in for lsp_bench's warm phase when only memory is asked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_bench import QUESTIONS, Client  # noqa: E402 - the benchmark's protocol client


def memory(pid: int) -> dict[str, float]:
    """RSS, PSS and anonymous memory (MB) of the whole process."""
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Pss", "Anonymous"):
            out[key.lower()] = round(int(rest.split()[0]) / 1024, 1)
    return out


def mappings(pid: int, top: int = 12) -> list[tuple[str, float]]:
    """The largest resident mappings by file ([heap] and anonymous ones joined)."""
    sizes: dict[str, int] = defaultdict(int)
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head[0]) > 8 and ":" not in head[0]:
            name = head[5] if len(head) > 5 else "[anon]"
        elif line.startswith("Rss:"):
            sizes[name] += int(head[1])
    return [(k, round(v / 1024, 1)) for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])[:top]]


async def probe(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(args.root).resolve()
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    c = Client(root, env)
    await c.start()
    assert c.proc is not None
    pid = c.proc.pid
    out: dict[str, Any] = {"root": str(root), "load_average": os.getloadavg()}
    await c.initialize()
    await c.request("neuralmind/context", {"query": QUESTIONS[0], "budget": 1000})
    await c.wait_indexed()
    await asyncio.sleep(args.settle)
    out["indexed"] = memory(pid)
    for i in range(args.queries):
        await c.request("neuralmind/context", {"query": QUESTIONS[i % len(QUESTIONS)]})
    await asyncio.sleep(args.settle)
    out["after_queries"] = memory(pid)
    py = sorted(p for p in root.rglob("*.py") if ".neuralmind" not in p.parts)
    target = py[len(py) // 2]
    original = target.read_text()
    try:
        for i in range(args.saves):
            target.write_text(original + f"\n\ndef rss_probe_{i}(value):\n    return value\n")
            c.notify("textDocument/didSave", {"textDocument": {"uri": target.as_uri()}})
            await asyncio.sleep(1.0)
    finally:
        target.write_text(original)
        c.notify("textDocument/didSave", {"textDocument": {"uri": target.as_uri()}})
    await asyncio.sleep(args.settle)
    out["after_saves"] = memory(pid)
    t0 = time.perf_counter()
    await c.request("neuralmind/status", {})
    out["status_ms"] = round(1000 * (time.perf_counter() - t0), 1)
    await asyncio.sleep(args.settle)
    out["after_status"] = memory(pid)
    out["mappings"] = mappings(pid)
    await c.stop()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", help="an indexed copy (lsp_bench.py --tmp DIR leaves one)")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--saves", type=int, default=5)
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before each reading")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    out = asyncio.run(probe(args))
    for k, v in out.items():
        print(f"{k:>14}: {v}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
