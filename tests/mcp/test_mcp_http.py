"""The loopback HTTP endpoint: token, Host/Origin checks, bind address, discovery file."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
import pytest_asyncio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_support import CLI, ENV

from neuralmind.discovery import (
    HOOKS_DISCOVERY_NAME,
    discovery_path,
    live_endpoint,
    read_discovery,
)
from neuralmind.mcp import config
from neuralmind.mcp.http import McpEndpoint, serve_http
from neuralmind.service.engine_service import EngineService

pytestmark = pytest.mark.asyncio(loop_scope="module")

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "0"}}}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def endpoint(service: EngineService) -> AsyncIterator[McpEndpoint]:
    ep = await serve_http(service)
    yield ep
    await ep.stop()


@contextlib.contextmanager
def preserved_discovery(repo: Path) -> Iterator[None]:
    """Tests that replace the module endpoint's discovery file put it back."""
    path = discovery_path(repo)
    previous = path.read_bytes() if path.exists() else None
    try:
        yield
    finally:
        if previous is not None:
            path.write_bytes(previous)
            path.chmod(0o600)


def headers(ep: McpEndpoint, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {ep.token}", "Accept": "application/json, text/event-stream",
            **extra}


async def test_sdk_client_with_the_token_calls_tools(endpoint: McpEndpoint) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {endpoint.token}"})
    async with Client(streamable_http_client(endpoint.url, http_client=http)) as client:
        result = await client.call_tool("neuralmind_search", {"question": "invoice total"})
    assert not result.is_error
    assert result.structured_content["hits"][0]["file"] == "app/billing.py"


@pytest.mark.parametrize("auth", [None, "Bearer wrong-token", "Basic abc", "Bearer"])
async def test_requests_without_the_token_get_401(endpoint: McpEndpoint, auth: str | None) -> None:
    hdrs = {"Accept": "application/json, text/event-stream"} | ({"Authorization": auth} if auth else {})
    async with httpx2.AsyncClient() as http:
        r = await http.post(endpoint.url, json=INIT, headers=hdrs)
        health = await http.get(endpoint.url.replace("/mcp", "/neuralmind/health"), headers=hdrs)
    assert r.status_code == 401 and "bearer" in r.headers["www-authenticate"].lower()
    assert health.status_code == 401


@pytest.mark.parametrize("extra,status", [
    ({"Host": "evil.example:80"}, 421),
    ({"Host": "attacker.test"}, 421),
    ({"Origin": "http://evil.example"}, 403),
    ({"Origin": "null"}, 403),
])
async def test_non_loopback_host_or_origin_is_rejected(endpoint: McpEndpoint, extra: dict[str, str],
                                                       status: int) -> None:
    async with httpx2.AsyncClient() as http:
        r = await http.post(endpoint.url, json=INIT, headers=headers(endpoint, **extra))
    assert r.status_code == status


async def test_loopback_origin_with_token_is_served(endpoint: McpEndpoint) -> None:
    async with httpx2.AsyncClient() as http:
        r = await http.post(endpoint.url, json=INIT, headers=headers(
            endpoint, Origin=f"http://localhost:{endpoint.port}"))
    assert r.status_code == 200, r.text


async def test_discovery_file_is_owner_only_and_live(endpoint: McpEndpoint, repo: Path) -> None:
    path = discovery_path(repo)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    data = json.loads(path.read_text())
    assert data["url"] == endpoint.url and data["token"] == endpoint.token
    assert data["pid"] == os.getpid() and data["protocol_version"]
    entry, problem = await asyncio.to_thread(live_endpoint, repo)   # it blocks: not on the loop
    assert problem is None and entry is not None and entry.url == endpoint.url


def _non_loopback_address() -> str | None:
    """An address of this machine that is not loopback (None when there is none)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))       # TEST-NET-1: nothing is sent for UDP connect
            addr = s.getsockname()[0]
        except OSError:
            return None
    return None if addr.startswith("127.") or addr == "0.0.0.0" else addr


async def test_endpoint_is_not_reachable_on_a_non_loopback_address(endpoint: McpEndpoint) -> None:
    addr = _non_loopback_address()
    if addr is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with pytest.raises(OSError), socket.create_connection((addr, endpoint.port), timeout=2):
        pass


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com"])
async def test_binding_anything_but_loopback_is_refused(service: EngineService,
                                                        host: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        await serve_http(service, host=host)


async def test_stop_removes_the_discovery_file_and_closes_the_port(service: EngineService,
                                                                  repo: Path) -> None:
    with preserved_discovery(repo):
        ep = await serve_http(service)
        assert read_discovery(repo) is not None and read_discovery(repo).token == ep.token
        await ep.stop()
        assert read_discovery(repo) is None
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", ep.port), timeout=2):
        pass


async def test_stale_discovery_file_is_ignored_and_removed(repo: Path, tmp_path: Path) -> None:
    path = discovery_path(repo)
    with preserved_discovery(repo):
        dead = {"url": "http://127.0.0.1:9/mcp", "pid": 2**22 + 12345, "token": "t",
                "protocol_version": "x", "root": str(repo)}
        path.write_text(json.dumps(dead))
        entry, problem = live_endpoint(repo)
        assert entry is None and "not running" in (problem or "")
        assert not path.exists()


@pytest.mark.parametrize("client,key", [("claude", "mcpServers"), ("cursor", "mcpServers"),
                                        ("vscode", "servers"), ("generic", "command")])
async def test_mcp_config_registers_the_stdio_command(endpoint: McpEndpoint, repo: Path,
                                                      client: str, key: str) -> None:
    out = await asyncio.to_thread(config.snippet, repo, client)
    entry = out if key == "command" else out[key]["neuralmind"]
    assert entry["args"][-2:] == ["mcp", str(repo)]
    assert Path(entry["command"]).exists()
    if client == "generic":
        assert out["http"]["url"] == endpoint.url
        assert endpoint.token not in json.dumps(out)       # tokens are not for config files


# --- the CLI through the running server (cli/remote.py -> mcp/cli_route.py) ----------------


async def cli(repo: Path, *args: str) -> tuple[int, str, str]:
    """`neuralmind -v ARGS` in a real process (never blocking the loop the endpoint runs on)."""
    proc = await asyncio.create_subprocess_exec(
        *CLI, "-v", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=repo, env=ENV)
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


SERVED = "answered by the running server"


@pytest.mark.parametrize("args", [
    ("query", "how is the invoice total computed", ".", "--json", "--budget", "600"),
    ("search", "invoice total", ".", "--json", "-k", "5"),
    ("next", "app/billing.py", ".", "--json"),
])
async def test_cli_answers_through_the_running_server_as_from_disk(
        endpoint: McpEndpoint, repo: Path, args: tuple[str, ...]) -> None:
    code, served, err = await cli(repo, *args)
    assert code == 0 and SERVED in err, err
    code, local, err = await cli(repo, *args, "--local")
    assert code == 0 and SERVED not in err, err
    served_json, local_json = json.loads(served), json.loads(local)
    if args[0] in ("query", "search"):  # the server adds only what a partial answer needs
        assert served_json.pop("partial") is False and local_json.pop("partial", False) is False
    assert served_json == local_json


async def test_cli_recall_answers_through_the_running_server(
        endpoint: McpEndpoint, repo: Path) -> None:
    code, out, err = await cli(repo, "memory", "remember", "Invoice totals are rounded half-up "
                               "to cents before tax", ".", "--type", "decision", "--json")
    assert code == 0, err
    stored = json.loads(out)["id"]
    args = ("memory", "recall", "how are invoice totals rounded", ".", "--json")
    code, served, err = await cli(repo, *args)
    assert code == 0 and SERVED in err, err
    code, local, err = await cli(repo, *args, "--local")
    assert code == 0 and SERVED not in err, err
    served_json, local_json = json.loads(served), json.loads(local)
    assert [a["id"] for a in served_json["atoms"]][:1] == [stored]
    assert [a["id"] for a in served_json["atoms"]] == [a["id"] for a in local_json["atoms"]]
    assert served_json["context"] == local_json["context"]
    code, text, err = await cli(repo, "memory", "recall", "invoice totals rounded", ".")
    assert code == 0 and SERVED in err and "rounded half-up" in text, err


async def test_cli_text_output_through_the_server(endpoint: McpEndpoint, repo: Path) -> None:
    code, out, err = await cli(repo, "search", "invoice total", ".", "-k", "3")
    assert code == 0 and SERVED in err
    assert "app/billing.py:" in out.splitlines()[0]


async def test_the_servers_refusal_is_the_clis_error(endpoint: McpEndpoint, repo: Path) -> None:
    code, out, err = await cli(repo, "query", "invoice", ".", "--budget", "1")
    assert code == 2 and "budget must be" in err and out == ""


async def test_cli_falls_back_to_disk_when_the_server_refuses_the_token(
        endpoint: McpEndpoint, repo: Path) -> None:
    path = discovery_path(repo)
    with preserved_discovery(repo):
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "token": "not-the-token"}))
        code, out, err = await cli(repo, "search", "invoice total", ".", "--json")
    assert code == 0 and SERVED not in err, err
    assert json.loads(out)["hits"][0]["file"] == "app/billing.py"


async def test_cli_asks_an_agents_own_server_when_no_editor_serves(
        endpoint: McpEndpoint, repo: Path) -> None:
    path = discovery_path(repo)
    hooks = discovery_path(repo, HOOKS_DISCOVERY_NAME)
    with preserved_discovery(repo):
        path.rename(hooks)          # only an agent's `neuralmind mcp` runs for the workspace
        try:
            code, out, err = await cli(repo, "search", "invoice total", ".", "--json")
        finally:
            hooks.unlink()
    assert code == 0 and SERVED in err, err
    assert json.loads(out)["hits"][0]["file"] == "app/billing.py"


@pytest.mark.parametrize("body,status", [
    (b"not json", 400), (b'{"method": "rm", "params": {}}', 400),
    (b'{"method": "search", "params": {"question": 3}}', 200),
])
async def test_cli_route_checks_its_requests(endpoint: McpEndpoint, body: bytes,
                                             status: int) -> None:
    url = endpoint.url.replace("/mcp", "/neuralmind/cli")
    async with httpx2.AsyncClient() as http:
        r = await http.post(url, content=body, headers=headers(endpoint))
        anonymous = await http.post(url, content=body)
    assert r.status_code == status and r.json()["error"]["code"] == "invalid_argument"
    assert anonymous.status_code == 401
