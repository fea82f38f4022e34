"""A process that serves the loopback MCP endpoint and answers questions about itself.

    python lazy_endpoint_host.py ROOT

Started by test_mcp_lazy.py, which cannot look at its own `sys.modules` (pytest has
imported the SDK long before). Opens an EngineService over ROOT, starts the endpoint
and prints one JSON line; then, for every line on stdin: `modules` prints which of the
heavy packages are loaded and whether the app was built; `stop` stops the endpoint,
prints the same, and exits 0.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from neuralmind.mcp.http import McpEndpoint, serve_http
from neuralmind.service.engine_service import EngineService

HEAVY = ("mcp", "mcp_types", "pydantic", "pydantic_core", "starlette", "sse_starlette")


def report(ep: McpEndpoint, **extra: object) -> None:
    heavy = [name for name in HEAVY if name in sys.modules]
    print(json.dumps({"heavy": heavy, "built": ep.app_built, **extra}), flush=True)


async def main(root: Path) -> int:
    service = EngineService(root)
    await service.start(index=False, watch_head=False)
    ep = await serve_http(service)
    report(ep, url=ep.url, token=ep.token)
    loop = asyncio.get_running_loop()
    try:
        while line := (await loop.run_in_executor(None, sys.stdin.readline)).strip():
            if line == "stop":
                await ep.stop()
                report(ep, stopped=True)
                return 0
            report(ep)
    finally:
        await ep.stop()
        await service.close()
    return 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]))))
