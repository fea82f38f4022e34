"""Memory over MCP: remember -> recall -> rate through the tool layer (real EngineService)
and through a real `neuralmind mcp` process; the feedback gate; the read-only role."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_support import CLI, ENV, error_code, make_repo

from neuralmind import config
from neuralmind.mcp.server import build_mcp_server
from neuralmind.memory.clock import Clock
from neuralmind.service.engine_service import EngineService

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def call(service: EngineService, name: str, args: dict[str, Any],
               read_only: bool = False) -> Any:
    async with Client(build_mcp_server(service, read_only=read_only, tools="all")) as client:
        return await client.call_tool(name, args)


async def ok(service: EngineService, name: str, args: dict[str, Any],
             read_only: bool = False) -> dict[str, Any]:
    result = await call(service, name, args, read_only)
    assert not result.is_error, result.content
    return result.structured_content


async def test_remember_recall_rate_and_the_gate(service: EngineService) -> None:
    ws = await service.workspace()
    ws.memory.clock = Clock(1_790_000_000.0)
    atom = await ok(service, "neuralmind_remember", {
        "text": "Invoice totals are rounded once, after tax; per-line rounding drifted.",
        "type": "lesson", "hubs": ["billing"], "about": ["app/billing.py::compute_invoice_total"]})
    assert atom["state"] == "proposed" and atom["source"].startswith("mcp:")
    inbox = await ok(service, "neuralmind_inbox", {})
    assert atom["id"] in [a["id"] for a in inbox["atoms"]]
    out = await ok(service, "neuralmind_recall", {"question": "how is the invoice total rounded?"})
    assert out["atoms"][0]["id"] == atom["id"] and out["atoms"][0]["why"]["code"] > 0
    ws.memory.clock.advance(config.FEEDBACK_GRACE_SECONDS + 1)
    held = await call(service, "neuralmind_recall", {"question": "invoice rounding"})
    assert not held.is_error and held.structured_content["unrated"][0]["id"] == atom["id"]
    assert "rate each one" in held.content[0].text
    rated = await ok(service, "neuralmind_rate", {"id": atom["id"], "verdict": "useful"})
    assert rated["state"] == "proposed" and rated["rank"] > 0
    assert (await ok(service, "neuralmind_recall", {"question": "invoice rounding"}))["atoms"]
    bad = await call(service, "neuralmind_rate", {"id": atom["id"], "verdict": "meh"})
    assert error_code(bad) == "invalid_argument"
    outside = await call(service, "neuralmind_remember", {"text": "x", "about": ["../../etc"]})
    assert error_code(outside) == "invalid_path"
    rows = await ok(service, "neuralmind_memory_search", {"query": "invoice totals rounded",
                                                          "mode": "keyword"})
    assert rows["results"][0]["id"] == atom["id"] and rows["results"][0]["type"] == "lesson"
    got = await ok(service, "neuralmind_memory_get", {"ids": [atom["id"]]})
    assert got["records"][0]["text"].startswith("Invoice totals")


async def test_read_only_role_recalls_and_reads_directives_but_never_writes(
        service: EngineService) -> None:
    ws = await service.workspace()
    pref = ws.remember("Write docstrings that say why, not what.", "preference")
    ws.memory.pin(pref.id)
    before = ws.memory.atom(pref.id).served
    out = await ok(service, "neuralmind_recall", {"question": "how should docstrings be written?"},
                   read_only=True)
    assert out["atoms"][0]["id"] == pref.id
    assert ws.memory.atom(pref.id).served == before and ws.memory.pending("mcp:agent") == []
    assert "say why" in (await ok(service, "neuralmind_directives", {}, read_only=True))["text"]
    for name, args in (("neuralmind_remember", {"text": "x"}),
                       ("neuralmind_rate", {"id": pref.id, "verdict": "noise"})):
        assert error_code(await call(service, name, args, read_only=True)) == "read_only"


async def test_a_real_mcp_process_remembers_and_recalls(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "alone")
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", str(root)],
                                   env={k: v for k, v in ENV.items() if isinstance(v, str)},
                                   cwd=str(root))
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            saved = await client.call_tool("neuralmind_remember", {
                "text": "Password resets expire after thirty minutes.", "type": "fact"})
            assert not saved.is_error, saved.content
            found = await client.call_tool("neuralmind_recall",
                                           {"question": "when do password resets expire?"})
            assert found.structured_content["atoms"][0]["id"] == saved.structured_content["id"]
            rated = await client.call_tool("neuralmind_rate", {
                "id": saved.structured_content["id"], "verdict": "used"})
            assert rated.structured_content["state"] == "proposed"
