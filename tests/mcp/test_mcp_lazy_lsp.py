"""The editor's real `neuralmind-lsp` process: its MCP endpoint listens without the SDK loaded.

Whether pydantic is loaded is read from outside, in the process's memory map (its
compiled core, `_pydantic_core*.so`, is mapped on import).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_support import eventually, make_repo, start_editor_server

from neuralmind.discovery import discovery_path, probe, read_discovery

pytestmark = [pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")]

def pydantic_loaded(pid: int) -> bool:
    return "_pydantic_core" in Path(f"/proc/{pid}/maps").read_text()


async def test_the_editors_server_loads_the_sdk_for_the_first_agent_only(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "editor")
    proc = start_editor_server(root)
    assert proc.stdin is not None
    try:
        async def written() -> Any:
            return read_discovery(root)

        entry = await eventually(written, 30, "the discovery file")
        assert entry.pid == proc.pid and not pydantic_loaded(proc.pid)
        assert await asyncio.to_thread(probe, entry, root) is None
        async with httpx2.AsyncClient() as http:
            refused = await http.post(entry.url, json={"jsonrpc": "2.0", "id": 1,
                                                       "method": "ping"})
        assert refused.status_code == 401 and not pydantic_loaded(proc.pid)

        client_http = create_mcp_http_client(headers={"Authorization": f"Bearer {entry.token}"})
        async with Client(streamable_http_client(entry.url, http_client=client_http)) as client:
            names = [t.name for t in (await client.list_tools()).tools]
        assert "neuralmind_query" in names and pydantic_loaded(proc.pid)

        proc.stdin.close()                       # a bare EOF stops it, built app and all
        await asyncio.to_thread(proc.wait, 10)
        assert not discovery_path(root).exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
