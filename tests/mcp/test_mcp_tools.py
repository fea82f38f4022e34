"""The tool layer through an in-memory MCP client over a real EngineService.

The tool list (names, descriptions, input/output schemas, annotations, instructions)
is compared with tests/mcp/fixtures/tool_list.json so that changes are deliberate:
after an intended change, regenerate it with

    NEURALMIND_UPDATE_TOOL_LIST=1 pytest tests/mcp/test_mcp_tools.py -k tool_list

The snapshot records each profile's cost in o200k tokens, so growth shows in review, and
the test holds the profiles to their budgets (config.TOOL_LIST_BUDGETS).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_support import error_code, eventually, make_repo
from mcp_types import Implementation
from pydantic import TypeAdapter

from neuralmind.config import TOOL_LIST_BUDGETS
from neuralmind.mcp import schemas
from neuralmind.mcp.listing import tool_tokens
from neuralmind.mcp.profiles import select
from neuralmind.mcp.server import build_mcp_server
from neuralmind.mcp.tools import NeuralMindTools
from neuralmind.service.engine_service import EngineService

pytestmark = pytest.mark.asyncio(loop_scope="module")

SNAPSHOT = Path(__file__).parent / "fixtures" / "tool_list.json"
UPDATE_ENV = "NEURALMIND_UPDATE_TOOL_LIST"


async def call(service: EngineService, name: str, args: dict[str, Any],
               read_only: bool = False) -> Any:
    async with Client(build_mcp_server(service, read_only=read_only, tools="all")) as client:
        return await client.call_tool(name, args)


async def tool_list(service: EngineService, read_only: bool, tools: str) -> dict[str, Any]:
    """The list as a client receives it, and what it costs in o200k tokens."""
    async with Client(build_mcp_server(service, read_only=read_only, tools=tools)) as client:
        listed = await client.list_tools()
        out = {"instructions": client.instructions,
               "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                         for t in listed.tools]}
    out["tokens"] = tool_tokens(out["tools"], out["instructions"] or "")
    return out


async def test_tool_list_matches_the_snapshot_and_the_budgets(service: EngineService) -> None:
    current = {"default": await tool_list(service, False, "default"),
               "default_read_only": await tool_list(service, True, "default"),
               "minimal": await tool_list(service, False, "minimal"),
               "all": await tool_list(service, False, "all")}
    text = json.dumps(current, indent=2, sort_keys=True) + "\n"
    if os.environ.get(UPDATE_ENV):
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.exists(), f"no snapshot: run with {UPDATE_ENV}=1"
    assert json.loads(SNAPSHOT.read_text(encoding="utf-8")) == json.loads(text), (
        f"the MCP tool list changed; if intended, regenerate with {UPDATE_ENV}=1")
    declared = list(NeuralMindTools.ROLES)
    for profile in ("default", "minimal", "all"):
        names = [t["name"] for t in current[profile]["tools"]]
        assert names == select(profile, declared)
        assert not any("outputSchema" in t for t in current[profile]["tools"])
    assert [t["name"] for t in current["all"]["tools"]] == declared
    assert [t["name"] for t in current["default_read_only"]["tools"]] == [
        n for n in select("default", declared) if n in NeuralMindTools.CONSULTING_TOOLS]
    for profile, budget in TOOL_LIST_BUDGETS.items():
        assert current[profile]["tokens"]["total"] <= budget, (profile, current[profile]["tokens"])
    for phrase in ("neuralmind_wakeup", "Before reading files", "neuralmind_feedback",
                   "neuralmind_decisions_query"):
        assert phrase in current["default"]["instructions"]
    assert len(current["default"]["instructions"].splitlines()) == 3


async def test_an_unknown_profile_or_tool_is_refused(service: EngineService) -> None:
    for spec in ("everything", "wakeup,no_such_tool"):
        with pytest.raises(ValueError, match="unknown tool"):
            build_mcp_server(service, tools=spec)
    server = build_mcp_server(service, tools="wakeup, neuralmind_query")
    assert [t.name for t in await server.list_tools()] == ["neuralmind_wakeup",
                                                            "neuralmind_query"]


async def test_query_returns_the_relevant_code_with_hit_ids(service: EngineService) -> None:
    result = await call(service, "neuralmind_query",
                        {"question": "how is the invoice total computed with tax", "budget": 800})
    assert not result.is_error, result.content
    out = result.structured_content
    schemas.ContextPack.model_validate(out)
    assert out["tokens"] <= 800
    assert "compute_invoice_total" in out["context"]
    ids = [h["id"] for h in out["hits"]]
    assert "app/billing.py::compute_invoice_total" in ids
    assert "compute_invoice_total" in result.content[0].text      # the text rendering
    assert out["files"][0]["file"] == "app/billing.py"
    assert "Files, best first: app/billing.py" in result.content[0].text


async def test_query_without_the_wakeup_spends_the_budget_on_code(service: EngineService) -> None:
    args = {"question": "how is the invoice total computed with tax", "budget": 600}
    full = await call(service, "neuralmind_query", args)
    lean = await call(service, "neuralmind_query", args | {"include_wakeup": False})
    assert full.structured_content["layers"].get("L1") and "# Project" in \
        full.structured_content["context"]
    assert not lean.structured_content["layers"].get("L1")
    assert "# Project" not in lean.structured_content["context"]
    assert "compute_invoice_total" in lean.structured_content["context"]


async def test_wakeup_gives_identity_and_map(service: EngineService) -> None:
    result = await call(service, "neuralmind_wakeup", {})
    assert not result.is_error, result.content
    out = schemas.ContextPack.model_validate(result.structured_content)
    assert "Shop" in out.context and out.layers.get("L1")


async def test_search_status_and_next_likely(service: EngineService, repo: Path) -> None:
    found = await call(service, "neuralmind_search", {"question": "password reset link", "k": 3})
    assert not found.is_error
    assert found.structured_content["hits"][0]["file"] == "app/users.py"
    status = await call(service, "neuralmind_status", {})
    out = schemas.Status.model_validate(status.structured_content)
    assert out.files == len([p for p in (repo / "app").iterdir()]) + 1 and not out.read_only
    ranked = await call(service, "neuralmind_next_likely", {"file": str(repo / "app/billing.py")})
    assert not ranked.is_error
    assert ranked.structured_content["file"] == "app/billing.py"


async def test_feedback_reinforces_with_the_last_query_hits(service: EngineService) -> None:
    async with Client(build_mcp_server(service)) as client:
        asked = await client.call_tool("neuralmind_query", {"question": "render an invoice"})
        hit_ids = [h["id"] for h in asked.structured_content["hits"]]
        node = "app/billing.py::InvoiceFormatter.render"
        fed = await client.call_tool("neuralmind_feedback", {"node_id": node})
    assert not fed.is_error, fed.content
    out = fed.structured_content
    assert out["positive"] and out["node"] == node
    assert out["recorded"] is True and out["reason"] is None
    assert out["context"] and set(out["context"]) <= set(hit_ids) and node not in out["context"]
    ws = await service.workspace()
    neighbours = dict(ws.synapses.neighbors(node, 20))
    assert set(out["context"]) & set(neighbours), "feedback did not reach the synapse store"


async def test_feedback_on_an_unknown_node_is_refused(service: EngineService) -> None:
    async with Client(build_mcp_server(service)) as client:
        fed = await client.call_tool("neuralmind_feedback",
                                     {"node_id": "app/billing.py::NoSuchThing"})
    assert fed.is_error
    assert "not_found" in fed.content[0].text and "NoSuchThing" in fed.content[0].text


async def test_a_query_is_a_learning_event_of_the_agent_session(service: EngineService) -> None:
    server = build_mcp_server(service)
    async with Client(server, client_info=Implementation(name="test agent", version="1")) as client:
        await client.call_tool("neuralmind_query", {"question": "where are passwords checked"})
    ws = await service.workspace()

    async def recorded() -> bool:
        return "mcp:test-agent" in ws.synapses.sessions.open_sessions

    await eventually(recorded, 10, "the question in the agent's session")


async def test_decision_round_trip_and_progressive_retrieval(service: EngineService) -> None:
    recorded = await call(service, "neuralmind_decision_record", {
        "title": "Invoice totals round once, after tax",
        "rationale": "Rounding every line drifted from the ledger by cents.",
        "files": ["app/billing.py"], "symbols": ["app/billing.py::compute_invoice_total"],
        "rejected": ["round per line: drifts"], "confidence": 0.9})
    assert not recorded.is_error, recorded.content
    did = recorded.structured_content["id"]
    assert recorded.structured_content["files_affected"] == ["app/billing.py"]

    found = await call(service, "neuralmind_decisions_query", {"question": "invoice rounding"})
    assert did in [d["id"] for d in found.structured_content["results"]]
    rows = await call(service, "neuralmind_memory_search", {"query": "ledger rounding"})
    assert did in [r["id"] for r in rows.structured_content["results"]]
    timeline = await call(service, "neuralmind_memory_timeline", {"decision_id": did})
    assert timeline.structured_content["anchor"]["id"] == did
    full = await call(service, "neuralmind_memory_get", {"ids": [did]})
    record = full.structured_content["records"][0]
    assert record["rejected_alternatives"] == ["round per line: drifts"]
    TypeAdapter(schemas.MemoryGet).validate_python(full.structured_content)


@pytest.mark.parametrize("name,args,code", [
    ("neuralmind_next_likely", {"file": "../outside.py"}, "invalid_path"),
    ("neuralmind_next_likely", {"file": "/etc/passwd"}, "invalid_path"),
    ("neuralmind_next_likely", {"file": "app/../../x.py"}, "invalid_path"),
    ("neuralmind_next_likely", {"file": "escape/passwd"}, "invalid_path"),     # symlink out
    ("neuralmind_decision_record", {"title": "t", "rationale": "r", "files": ["/etc/hosts"]},
     "invalid_path"),
    ("neuralmind_decision_record", {"title": "t", "rationale": "r",
                                    "symbols": ["../x.py::f"]}, "invalid_path"),
    ("neuralmind_decision_record", {"title": "t", "rationale": "r", "symbols": ["nocolons"]},
     "invalid_argument"),
    ("neuralmind_feedback", {"node_id": "escape/passwd::x"}, "invalid_path"),
    ("neuralmind_feedback", {"node_id": "nowhere.py::x"}, "not_found"),
    ("neuralmind_query", {"question": "x" * 10_001}, "invalid_argument"),
    ("neuralmind_query", {"question": "ok", "budget": 10}, "invalid_argument"),
    ("neuralmind_query", {}, "invalid_argument"),
    ("neuralmind_decision_record", {"title": "t", "rationale": "r" * 20_001}, "invalid_argument"),
    ("neuralmind_decision_record", {"title": "t", "rationale": "r", "files": ["a"] * 101},
     "invalid_argument"),
    ("neuralmind_memory_get", {"ids": [f"id{i}" for i in range(21)]}, "invalid_argument"),
    ("neuralmind_memory_get", {"ids": ["no-such-decision"]}, "not_found"),
    ("neuralmind_memory_timeline", {}, "invalid_argument"),
    ("neuralmind_memory_timeline", {"decision_id": "ffffffffffff"}, "not_found"),
    ("neuralmind_decisions_query", {"question": "x", "mode": "fuzzy"}, "invalid_argument"),
    ("neuralmind_no_such_tool", {}, "invalid_argument"),
])
async def test_bad_arguments_are_coded_tool_errors(service: EngineService, repo: Path, name: str,
                                                   args: dict[str, Any], code: str) -> None:
    link = repo / "escape"
    if not link.exists():
        link.symlink_to("/etc")
    result = await call(service, name, args)
    assert error_code(result) == code, result.content
    if code:
        assert result.content[0].text.startswith(f"error [{code}]")
    status = await call(service, "neuralmind_status", {})       # still serving
    assert status.structured_content["nodes"] > 0


async def test_read_only_role_refuses_recording_tools(service: EngineService) -> None:
    for name, args in (("neuralmind_feedback", {"node_id": "app/billing.py"}),
                       ("neuralmind_decision_record", {"title": "t", "rationale": "r"})):
        result = await call(service, name, args, read_only=True)
        assert error_code(result) == "read_only"
        assert "read-only" in result.content[0].text
    consulted = await call(service, "neuralmind_search", {"question": "invoice"}, read_only=True)
    assert not consulted.is_error
    status = await call(service, "neuralmind_status", {}, read_only=True)
    assert status.structured_content["read_only"] is True


async def test_unindexed_workspace_says_not_indexed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "fresh")
    svc = EngineService(root)
    await svc.start(index=False, watch_head=False)
    try:
        result = await call(svc, "neuralmind_query", {"question": "invoice totals"})
        assert error_code(result) == "not_indexed"
        assert "neuralmind build" in result.content[0].text
    finally:
        await svc.close()


async def test_semantic_search_without_model_is_semantic_unavailable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEURALMIND_MODEL_DIR", str(tmp_path / "no-model"))
    root = make_repo(tmp_path / "nomodel")
    svc = EngineService(root)
    await svc.start(index=False, watch_head=False)
    try:
        await call(svc, "neuralmind_decision_record", {"title": "Keep totals", "rationale": "r"})
        result = await call(svc, "neuralmind_decisions_query",
                            {"question": "totals", "mode": "semantic"})
        assert error_code(result) == "semantic_unavailable", result.content
        keyword = await call(svc, "neuralmind_decisions_query",
                             {"question": "totals", "mode": "keyword"})
        assert not keyword.is_error and keyword.structured_content["mode"] == "keyword"
    finally:
        await svc.close()
