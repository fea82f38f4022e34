"""End to end with the MCP SDK client: `neuralmind mcp` over stdio with no editor running,
and a running `neuralmind-lsp` (driven by pytest-lsp) reached over HTTP and through the
stdio bridge, sharing one engine both ways."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO

import pytest
import pytest_lsp
from lsprotocol import types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_support import (
    CLI,
    ENV,
    SERVER,
    error_code,
    eventually,
    git,
    make_repo,
    start_editor_server,
)
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from neuralmind.discovery import Discovery, discovery_path, read_discovery
from neuralmind.lsp.server import plain_params_converter

pytestmark = pytest.mark.asyncio(loop_scope="module")


def uri(path: Path) -> str:
    return path.resolve().as_uri()


@contextlib.asynccontextmanager
async def stdio_session(root: Path, errlog: TextIO, *extra: str) -> AsyncIterator[Client]:
    """The SDK client spawning `neuralmind mcp ROOT` the way an agent does."""
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", str(root), *extra],
                                   env={k: v for k, v in ENV.items() if isinstance(v, str)},
                                   cwd=str(root))
    async with Client(stdio_client(params, errlog=errlog)) as client:
        yield client


@contextlib.asynccontextmanager
async def http_session(entry: Discovery) -> AsyncIterator[Client]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {entry.token}"})
    async with Client(streamable_http_client(entry.url, http_client=http)) as client:
        yield client


async def tool(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.content
    return result.structured_content


# --- no editor: `neuralmind mcp` runs the engine itself ------------------------------------
async def test_stdio_without_a_server_runs_the_engine_in_process(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "alone")
    (root / ".neuralmind.toml").write_text("[neuralmind]\ndebounce_seconds = 0.3\n")
    log_path = tmp_path / "stderr.txt"
    with log_path.open("w") as errlog:
        async with stdio_session(root, errlog) as client:
            async def indexed() -> bool:
                status = await tool(client, "neuralmind_status", {})
                return status["files"] > 0 and status["indexing"] is None

            await eventually(indexed, 60, "the first index")
            out = await tool(client, "neuralmind_query",
                             {"question": "how are user sessions stored", "budget": 600})
            assert out["hits"]
            bad = await client.call_tool("neuralmind_next_likely", {"file": "../../etc/passwd"})
            assert error_code(bad) == "invalid_path"
            no_editor = await client.call_tool("neuralmind_editor_state", {})
            assert error_code(no_editor) == "no_editor"

            before = await tool(client, "neuralmind_next_likely", {"file": "app/users.py"})
            odds = {n["file"]: n["probability"] for n in before["next"]}
            assert odds.get("app/storage.py", 0) <= odds.get("app/billing.py", 0)

            # The agent edits two files on disk: no editor reports it, the process notices.
            users, storage = root / "app" / "users.py", root / "app" / "storage.py"
            users.write_text(users.read_text() + "\n\ndef purge_expired_sessions(store):\n"
                             "    \"\"\"Drop sessions past their expiry.\"\"\"\n"
                             "    store.put('sessions', [])\n")
            storage.write_text(storage.read_text() + "\n    def delete(self, key):\n"
                               "        pass\n")

            async def reindexed() -> bool:
                found = await tool(client, "neuralmind_search",
                                   {"question": "purge_expired_sessions", "k": 3})
                return found["hits"][0]["symbol"] == "purge_expired_sessions"

            await eventually(reindexed, 30, "the agent's new function to be searchable")

            async def learned() -> bool:
                ranked = await tool(client, "neuralmind_next_likely", {"file": "app/users.py"})
                odds = {n["file"]: n["probability"] for n in ranked["next"]}
                return odds.get("app/storage.py", 0) > odds.get("app/billing.py", 0)

            await eventually(learned, 30, "the agent's edits to be learned together")
    notice = log_path.read_text()
    assert "serving the workspace from this process" in notice
    assert not discovery_path(root).exists()


# --- with the editor's server: one engine for LSP and MCP ----------------------------------


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=plain_params_converter)
    register_lsp_features(client)
    return client


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("mcp-e2e") / "shop")


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(
    server_command=SERVER, server_env=ENV, client_factory=make_client))
async def editor(lsp_client: LanguageClient, repo: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            window=types.WindowClientCapabilities(
                work_done_progress=True,
                show_document=types.ShowDocumentClientCapabilities(support=True)),
            text_document=types.TextDocumentClientCapabilities(
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities())),
        root_uri=uri(repo), workspace_folders=[types.WorkspaceFolder(uri=uri(repo), name="shop")],
        initialization_options={"neuralmind": {"debounceSeconds": 0.2, "mcp": True}}))

    async def ready() -> bool:
        status = await lsp_client.protocol.send_request_async("neuralmind/status", {})
        return bool(status["mcp_endpoint"] and status["nodes"] and not status["indexing"])

    await eventually(ready, 120, "the index and the MCP endpoint")
    yield
    await lsp_client.shutdown_session()


async def live_entry(repo: Path) -> Discovery:
    entry = read_discovery(repo)
    assert entry is not None, "the server wrote no discovery file"
    return entry


async def test_discovery_file_names_the_editor_process(editor: LanguageClient, repo: Path) -> None:
    entry = await live_entry(repo)
    status = await editor.protocol.send_request_async("neuralmind/status", {})
    assert status["mcp_endpoint"] == entry.url
    assert entry.pid != 0 and entry.url.startswith("http://127.0.0.1:")


async def test_editor_edits_change_next_likely_over_mcp(editor: LanguageClient,
                                                       repo: Path) -> None:
    entry = await live_entry(repo)
    async with http_session(entry) as client:
        before = await tool(client, "neuralmind_next_likely", {"file": "app/users.py"})
        status = await editor.protocol.send_request_async("neuralmind/status", {})
        for rel in ("app/users.py", "app/storage.py"):
            path = repo / rel
            editor.text_document_did_open(types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri(path), language_id="python",
                                                     version=1, text=path.read_text())))
            editor.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(
                    text=path.read_text() + "\n# edited\n")]))

        async def learned() -> bool:
            now = await editor.protocol.send_request_async("neuralmind/status", {})
            return now["learning"]["batches"] > status["learning"]["batches"]

        await eventually(learned, 30, "the editing batch to be learned")
        after = await tool(client, "neuralmind_next_likely", {"file": "app/users.py"})
    assert after["next"] != before["next"]
    assert after["next"][0]["file"] == "app/storage.py"


async def test_decision_recorded_over_mcp_shows_in_the_editor(editor: LanguageClient,
                                                             repo: Path) -> None:
    entry = await live_entry(repo)
    async with http_session(entry) as client:
        record = await tool(client, "neuralmind_decision_record", {
            "title": "Invoice totals round once, after tax",
            "rationale": "Rounding per line drifted from the ledger by cents.",
            "symbols": ["app/billing.py::compute_invoice_total"]})
    did = record["id"]
    billing = repo / "app" / "billing.py"
    editor.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(billing), language_id="python", version=1, text=billing.read_text())))
    billing.write_text(billing.read_text().replace("round(subtotal * (1 + tax_rate), 2)",
                                                   "round(subtotal * (1 + tax_rate), 4)"))
    git(repo, "commit", "-q", "-am", "more precision")

    async def diagnosed() -> list[Any]:
        return [d for d in editor.diagnostics.get(uri(billing), []) if d.code == did]

    [diag] = await eventually(diagnosed, 30, "the stale-decision diagnostic")
    assert "Invoice totals round once" in diag.message


async def test_the_agent_sees_what_the_editor_shows_and_can_reveal(editor: LanguageClient,
                                                                    repo: Path) -> None:
    billing = repo / "app" / "billing.py"
    editor.protocol.notify("neuralmind/editorState", {
        "activeFile": uri(billing),
        "selection": {"start": {"line": 5, "character": 4}, "end": {"line": 6, "character": 0},
                      "text": "subtotal = sum(price * qty for price, qty in items)" + " " * 3000},
        "visibleRanges": [{"start": {"line": 0, "character": 0},
                           "end": {"line": 14, "character": 0}}],
        "openFiles": [uri(billing), uri(repo / "app" / "users.py"), "file:///etc/passwd",
                      "untitled:Untitled-1"],
        "diagnostics": [{"range": {"start": {"line": 5, "character": 4},
                                   "end": {"line": 5, "character": 12}},
                         "message": "unused variable", "severity": 2, "source": "pyflakes"}]})
    entry = await live_entry(repo)
    async with http_session(entry) as client:
        async def reported() -> dict[str, Any] | None:
            state = await tool(client, "neuralmind_editor_state", {})
            return state if state["active_file"] == "app/billing.py" else None

        state = await eventually(reported, 20, "the editor state to reach the agent")
        assert state["symbol"]["name"] == "compute_invoice_total"
        assert state["selection"]["start_line"] == 6 and state["selection"]["end_line"] == 6
        assert len(state["selection"]["text"]) == 2000 and state["selection"]["truncated"]
        assert state["open_files"] == ["app/billing.py", "app/users.py"]
        assert state["diagnostics"][0]["message"] == "unused variable"
        assert state["trail"][0]["symbol"] == "compute_invoice_total"

        shown = await tool(client, "neuralmind_reveal", {
            "file": "app/users.py", "line": 4, "end_line": 7, "note": "resets start here"})
        assert shown["shown"] and shown["note_shown"]
        bad = await client.call_tool("neuralmind_reveal", {"file": "../outside.py", "line": 1})
        assert error_code(bad) == "invalid_path"
    request = editor.shown_documents[-1]
    assert request.uri == uri(repo / "app" / "users.py") and request.take_focus
    assert (request.selection.start.line, request.selection.end.line) == (3, 7)
    assert any("resets start here" in m.message for m in editor.messages)

    editor.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"neuralmind": {"editorState": False}}))
    entry = await live_entry(repo)
    async with http_session(entry) as client:
        async def refused() -> bool:
            result = await client.call_tool("neuralmind_editor_state", {})
            return error_code(result) == "editor_state_off"

        await eventually(refused, 20, "the setting to turn editor state off")
        off = await client.call_tool("neuralmind_reveal", {"file": "app/users.py", "line": 1})
        assert error_code(off) == "editor_state_off"
    editor.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"neuralmind": {"editorState": True}}))


async def test_the_agents_review_sees_the_editors_unsaved_buffer(editor: LanguageClient,
                                                                repo: Path) -> None:
    storage = repo / "app" / "storage.py"
    editor.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(storage), language_id="python", version=1, text=storage.read_text())))
    editor.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(storage), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="# unsaved\n")]))
    entry = await live_entry(repo)
    async with http_session(entry) as client:
        async def unsaved() -> dict[str, Any] | None:
            out = await tool(client, "neuralmind_review", {})
            return out if "app/storage.py" in out["unsaved_files"] else None

        out = await eventually(unsaved, 20, "the unsaved buffer in the agent's review")
        assert out["base"] == git(repo, "rev-parse", "HEAD").strip()
        bad = await client.call_tool("neuralmind_review", {"base": "no-such-ref"})
        assert error_code(bad) == "invalid_argument"
    editor.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(storage))))


async def test_stdio_bridge_reaches_the_same_engine(editor: LanguageClient, repo: Path,
                                                   tmp_path: Path) -> None:
    entry = await live_entry(repo)
    log_path = tmp_path / "bridge-stderr.txt"
    with log_path.open("w") as errlog:
        async with stdio_session(repo, errlog) as client:
            status = await tool(client, "neuralmind_status", {})
            found = await tool(client, "neuralmind_decisions_query",
                               {"question": "invoice rounding", "status": "ALL"})
            fed = await tool(client, "neuralmind_feedback",
                             {"node_id": "app/billing.py::compute_invoice_total"})
        async with stdio_session(repo, errlog, "--read-only") as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            refused = await client.call_tool("neuralmind_decision_record",
                                             {"title": "t", "rationale": "r"})
            seen = await client.call_tool("neuralmind_editor_state", {})
            no_reveal = await client.call_tool("neuralmind_reveal",
                                               {"file": "app/users.py", "line": 1})
    assert "bridging to the running NeuralMind server" in log_path.read_text()
    assert status["mcp_endpoint"] == entry.url        # only the editor's engine knows its URL
    assert status["learning"]["batches"] >= 1           # learned from the editor's edits
    assert "Invoice totals round once, after tax" in [d["title"] for d in found["results"]]
    assert fed["recorded"] and fed["reason"] is None
    assert "neuralmind_decision_record" not in listed and "neuralmind_query" in listed
    assert error_code(refused) == "read_only"
    assert not seen.is_error and error_code(no_reveal) == "read_only"   # may look, not steer
    editor_view = await editor.protocol.send_request_async("neuralmind/status", {})
    assert editor_view["learning"]["events"] >= status["learning"]["events"]


async def test_read_only_setting_restarts_the_endpoint_in_that_role(editor: LanguageClient,
                                                                    repo: Path) -> None:
    before = await live_entry(repo)

    async def restarted(read_only: bool) -> Discovery | None:
        entry = read_discovery(repo)
        return entry if entry and entry.token != before.token and entry.read_only == read_only \
            else None

    editor.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"neuralmind": {"mcpReadOnly": True}}))
    entry = await eventually(lambda: restarted(True), 20, "the read-only endpoint")
    async with http_session(entry) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        refused = await client.call_tool("neuralmind_feedback", {"node_id": "app/users.py"})
    assert "neuralmind_feedback" not in listed and "neuralmind_search" in listed
    assert error_code(refused) == "read_only"
    before = entry
    editor.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"neuralmind": {"mcpReadOnly": False}}))
    await eventually(lambda: restarted(False), 20, "the read-write endpoint")


async def test_editor_eof_stops_mcp_and_removes_the_discovery_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "eof")
    proc = start_editor_server(root)
    assert proc.stdin is not None
    try:
        async def written() -> bool:
            return read_discovery(root) is not None

        await eventually(written, 30, "the discovery file")
        entry = read_discovery(root)
        assert entry is not None and entry.pid == proc.pid
        proc.stdin.close()                       # a bare EOF, no shutdown/exit
        await asyncio.to_thread(proc.wait, 10)
        assert not discovery_path(root).exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
