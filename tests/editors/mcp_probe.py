"""An agent for the Neovim test: calls one MCP tool on the editor's live endpoint of a
workspace (its discovery file) and prints the structured result as JSON.

    python mcp_probe.py ROOT TOOL '{"arg": ...}'
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from neuralmind.discovery import read_discovery


async def call(root: Path, tool: str, args: dict) -> dict:
    entry = read_discovery(root)
    if entry is None:
        raise SystemExit(f"no live endpoint for {root}")
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {entry.token}"})
    async with Client(streamable_http_client(entry.url, http_client=http)) as client:
        result = await client.call_tool(tool, args)
    return result.structured_content or {"text": result.content[0].text}


if __name__ == "__main__":
    out = asyncio.run(call(Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])))
    print(json.dumps(out))
