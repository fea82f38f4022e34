"""The loopback endpoint imports the MCP SDK only when an authenticated MCP request comes.

What a process has imported is read from a real serving process of its own
(lazy_endpoint_host.py): this one imported the SDK long ago.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import logging
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_support import ENV, make_repo

from neuralmind.discovery import discovery_path, probe, read_discovery
from neuralmind.mcp.http import sdk_protocol_version, serve_http
from neuralmind.mcp.server import build_mcp_server
from neuralmind.service.engine_service import EngineService

pytestmark = pytest.mark.asyncio(loop_scope="module")

HOST = Path(__file__).parent / "lazy_endpoint_host.py"
SNAPSHOT = Path(__file__).parent / "fixtures" / "tool_list.json"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "0"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


class Host:
    """lazy_endpoint_host.py running over a repository, asked questions line by line."""

    def __init__(self, proc: asyncio.subprocess.Process, first: dict[str, Any]) -> None:
        self.proc = proc
        self.url: str = first["url"]
        self.token: str = first["token"]
        self.first = first

    async def ask(self, command: str = "modules") -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command.encode() + b"\n")
        await self.proc.stdin.drain()
        line = await asyncio.wait_for(self.proc.stdout.readline(), 30)
        assert line, "the host process ended"
        return json.loads(line)


@contextlib.asynccontextmanager
async def host(root: Path) -> AsyncIterator[Host]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(HOST), str(root), env=ENV, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert line, "the host process did not start its endpoint"
        yield Host(proc, json.loads(line))
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **ACCEPT}


async def test_only_an_authenticated_mcp_request_imports_the_sdk(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "shop")
    async with host(root) as h:
        assert h.first["heavy"] == [] and not h.first["built"]

        entry = read_discovery(root)
        assert entry is not None and entry.url == h.url
        assert entry.protocol_version == sdk_protocol_version()
        assert await asyncio.to_thread(probe, entry, root) is None     # the bridge's probe
        assert await h.ask() == {"heavy": [], "built": False}

        async with httpx2.AsyncClient() as http:
            refused = [
                await http.post(h.url, json=INIT, headers=ACCEPT),
                await http.post(h.url, json=INIT, headers=bearer("wrong")),
                await http.post(h.url, json=INIT, headers={**bearer(h.token),
                                                           "Host": "evil.example"}),
                await http.post(h.url, json=INIT, headers={**bearer(h.token),
                                                           "Origin": "http://evil.example"}),
                await http.post(h.url.replace("/mcp", "/elsewhere"), json=INIT,
                                headers=bearer(h.token)),
            ]
        assert [r.status_code for r in refused] == [401, 401, 421, 403, 404]
        assert await h.ask() == {"heavy": [], "built": False}

        client_http = create_mcp_http_client(headers={"Authorization": f"Bearer {h.token}"})
        async with Client(streamable_http_client(h.url, http_client=client_http)) as client:
            listed = await client.list_tools()
            tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                     for t in listed.tools]
            snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["default"]
            assert client.instructions == snapshot["instructions"]
            assert tools == snapshot["tools"]
            after = await h.ask()
        assert after["built"] and {"mcp", "pydantic", "starlette"} <= set(after["heavy"])

        stopped = await h.ask("stop")
        assert stopped["stopped"] and await asyncio.wait_for(h.proc.wait(), 10) == 0
    assert not discovery_path(root).exists()


async def test_an_endpoint_no_agent_used_stops_without_importing(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "idle")
    async with host(root) as h:
        assert discovery_path(root).exists()
        stopped = await h.ask("stop")
        assert stopped == {"heavy": [], "built": False, "stopped": True}
        assert await asyncio.wait_for(h.proc.wait(), 10) == 0
    assert not discovery_path(root).exists()


async def test_concurrent_first_requests_build_the_app_once(
        service: EngineService, caplog: pytest.LogCaptureFixture) -> None:
    ep = await serve_http(service, write_discovery_file=False)
    try:
        with caplog.at_level(logging.INFO, logger="neuralmind.mcp"):
            async with httpx2.AsyncClient() as http:
                answers = await asyncio.gather(*(
                    http.post(ep.url, json=INIT, headers=bearer(ep.token)) for _ in range(4)))
        assert [r.status_code for r in answers] == [200] * 4, [r.text for r in answers]
        sessions = {r.headers.get("mcp-session-id") for r in answers}
        assert len(sessions) == 4 and None not in sessions
        builds = [r for r in caplog.records if "built on first use" in r.getMessage()]
        assert len(builds) == 1 and ep.app_built
    finally:
        await ep.stop()
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "mcp-app-lifespan"]


async def test_stopping_during_the_first_build_answers_503_and_starts_nothing(
        service: EngineService) -> None:
    ep = await serve_http(service, write_discovery_file=False)
    release = threading.Event()
    # The build waits behind engine work queued before it: hold the engine thread.
    held = asyncio.ensure_future(service.run_serialised(lambda: release.wait(10)))
    try:
        async with httpx2.AsyncClient() as http:
            first = asyncio.ensure_future(http.post(ep.url, json=INIT, headers=bearer(ep.token)))
            for _ in range(500):
                if ep.app.building:
                    break
                await asyncio.sleep(0.01)
            assert ep.app.building and not ep.app_built
            await ep.stop()
            answer = await first
        assert answer.status_code == 503 and "stopping" in answer.text
    finally:
        release.set()
        await held
    await service.run_serialised(lambda: None)      # the abandoned build has run by now
    assert not ep.app_built
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "mcp-app-lifespan"]


async def test_building_the_server_runs_no_rich_from_the_workspace(
        service: EngineService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK imports `rich` when it can; from a project root on sys.path that is the
    project's own code (and megabytes for a log handler that is removed at once)."""
    marker = tmp_path / "ran"
    (tmp_path / "rich").mkdir()
    (tmp_path / "rich" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "rich" not in sys.modules
    server = build_mcp_server(service)
    assert server.neuralmind_tools is not None
    assert not marker.exists() and "rich" not in sys.modules
    assert importlib.util.find_spec("rich") is not None      # blocked only while building
