"""Memory over LSP, end to end against the real server: custom requests, memories in hover,
proposed memories as Information diagnostics with accept / reject code actions."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_support import raw_request, uri, wait_for
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def request(client: LanguageClient, method: str, params: object) -> object:
    return await client.protocol.send_request_async(method, params)


async def test_requests_cover_the_memory_operations(client: LanguageClient) -> None:
    caps = client.init_result.capabilities
    assert "neuralmind.memory.accept" in caps.execute_command_provider.commands
    pref = await request(client, "neuralmind/memory/remember", {
        "text": "Keep billing functions pure: no I/O.", "type": "preference", "hubs": ["billing"]})
    assert pref["state"] == "active" and pref["source"] == "lsp"      # a person's memory
    assert (await request(client, "neuralmind/memory/pin", {"id": pref["id"]}))["pinned"]
    directives = await request(client, "neuralmind/memory/directives", {})
    assert "no I/O" in directives["text"]
    out = await request(client, "neuralmind/memory/recall", {"query": "can billing do I/O?"})
    assert out["atoms"][0]["id"] == pref["id"] and out["mode"] == "hybrid"
    rated = await request(client, "neuralmind/memory/rate", {"id": pref["id"], "verdict": "useful"})
    assert rated["atom"]["useful"] == 1
    with pytest.raises(JsonRpcInvalidParams, match="verdict"):
        await request(client, "neuralmind/memory/rate", {"id": pref["id"], "verdict": "meh"})
    got = await request(client, "neuralmind/memory/get", {"id": pref["id"]})
    assert got["id"] == pref["id"] and got["text"] == "Keep billing functions pure: no I/O."
    with pytest.raises(JsonRpcInvalidParams, match="no memory with id 'nope-nope'"):
        await request(client, "neuralmind/memory/get", {"id": "nope-nope"})
    stats = await request(client, "neuralmind/memory/stats", {})
    assert stats["pinned"] == 1
    dreamt = await request(client, "neuralmind/memory/dream", {"phase": "deep"})
    assert dreamt["phases"] == ["deep"]


async def test_inbox_diagnostic_accept_action_and_hover(client: LanguageClient, repo: Path) -> None:
    users = repo / "app" / "users.py"
    guess = await request(client, "neuralmind/memory/remember", {
        "text": "authenticate_user must stay constant-time", "type": "lesson", "proposed": True,
        "about": ["app/users.py::authenticate_user"]})
    assert guess["state"] == "proposed"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(users), language_id="python", version=1, text=users.read_text())))

    def inbox() -> list[types.Diagnostic]:
        return [d for d in client.diagnostics.get(uri(users), []) if d.code == guess["id"]]

    [diag] = await wait_for(inbox, 20, "the inbox diagnostic")
    assert diag.severity == types.DiagnosticSeverity.Information
    assert diag.range.start.line == 3 and "Proposed memory" in diag.message
    converter = client.protocol._converter
    actions = await raw_request(client, "textDocument/codeAction", converter.unstructure(
        types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=uri(users)),
                               range=diag.range,
                               context=types.CodeActionContext(diagnostics=[diag]))))
    assert [a["title"].split(":")[0] for a in actions] == ["Accept memory", "Reject memory"]
    accept = actions[0]
    accepted = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=accept["command"]["command"], arguments=accept["command"]["arguments"]))
    assert accepted["state"] == "active"
    await wait_for(lambda: not inbox(), 20, "the inbox diagnostic to clear")
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri(users)),
        position=types.Position(line=4, character=4)))
    assert hover is not None and "Memories:" in hover.contents.value
    assert "constant-time" in hover.contents.value
