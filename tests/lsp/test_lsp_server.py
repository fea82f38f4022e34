"""End to end against the real server process: index, context, learning, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_support import eventually, git, raw_request, uri, wait_for
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def request(client: LanguageClient, method: str, params: object) -> object:
    return await client.protocol.send_request_async(method, params)


async def test_initialize_advertises_features(client: LanguageClient) -> None:
    caps = client.init_result.capabilities
    assert caps.hover_provider and caps.workspace_symbol_provider and caps.code_action_provider
    assert "neuralmind.decision.restore" in caps.execute_command_provider.commands
    assert "neuralmind.context" in caps.execute_command_provider.commands
    assert caps.text_document_sync.save is not None
    assert client.init_result.server_info.name == "neuralmind"
    status = await request(client, "neuralmind/status", {})
    assert status["nodes"] > 5
    assert status["files"] >= 4
    assert status["indexing"] is None
    assert status["last_full_build"] is not None
    assert status["mcp_endpoint"] is None          # disabled in initializationOptions


async def test_context_returns_the_relevant_file(client: LanguageClient) -> None:
    out = await request(client, "neuralmind/context",
                        {"query": "how is the invoice total computed with tax", "budget": 800})
    assert out["partial"] is False
    assert out["tokens"] <= 800
    files = [h["file"] for h in out["hits"]]
    assert files and files[0] == "app/billing.py"
    assert out["hits"][0]["uri"].endswith("/app/billing.py")
    assert out["files"][0]["file"] == "app/billing.py" and out["files"][0]["reasons"]
    assert out["files"][0]["uri"] == out["hits"][0]["uri"]
    assert "compute_invoice_total" in out["context"]


async def test_search_and_workspace_symbols(client: LanguageClient, repo: Path) -> None:
    out = await request(client, "neuralmind/search", {"query": "authenticate user", "k": 3})
    assert out["hits"][0]["symbol"] == "authenticate_user"
    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="reset_pass"))
    assert [s.name for s in symbols][:1] == ["reset_password"]
    assert symbols[0].location.uri == uri(repo / "app/users.py")
    assert symbols[0].location.range.start.line == 9


async def test_save_makes_new_code_searchable(client: LanguageClient, repo: Path) -> None:
    path = repo / "app" / "storage.py"
    text = path.read_text() + "\n\ndef compact_segments(store):\n    \"\"\"Merge log segments.\"\"\"\n"
    path.write_text(text)
    doc = types.TextDocumentIdentifier(uri=uri(path))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=doc))

    async def found() -> bool:
        out = await request(client, "neuralmind/search", {"query": "compact_segments", "k": 3})
        return bool(out["hits"]) and out["hits"][0]["symbol"] == "compact_segments"

    await eventually(found, 30, "the saved function to become searchable")
    status = await request(client, "neuralmind/status", {})
    assert status["last_incremental_update"] is not None


async def test_edits_teach_next_likely(client: LanguageClient, repo: Path) -> None:
    users, billing = repo / "app" / "users.py", repo / "app" / "billing.py"
    before = await request(client, "neuralmind/status", {})
    for path in (users, billing):
        item = types.TextDocumentItem(uri=uri(path), language_id="python", version=1,
                                      text=path.read_text())
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(
                text=path.read_text() + "\n# edited\n")]))
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path))))

    async def learned() -> bool:
        status = await request(client, "neuralmind/status", {})
        return status["learning"]["batches"] > before["learning"]["batches"]

    await eventually(learned, 30, "the editing batch to be learned")
    ranked = await request(client, "neuralmind/nextLikely", {"uri": uri(users), "k": 3})
    assert ranked and ranked[0]["file"] == "app/billing.py"
    assert ranked[0]["uri"] == uri(billing)
    assert 0 < ranked[0]["probability"] <= 1


@pytest.mark.parametrize("method,params,fragment", [
    ("neuralmind/context", {}, "'query' is required"),
    ("neuralmind/context", {"query": 42}, "'query' must be a string"),
    ("neuralmind/context", {"query": "x", "budget": "big"}, "'budget' must be an integer"),
    ("neuralmind/context", {"query": "x", "uri": "file:///etc/passwd"}, "outside the workspace"),
    ("neuralmind/nextLikely", {"uri": "untitled:Untitled-1"}, "not a file uri"),
    ("neuralmind/search", [1, 2], "params must be an object"),
    ("neuralmind/decisions/get", {"id": "no-such-decision"}, "no-such-decision"),
    ("neuralmind/feedback", {"node": "nowhere.py::x"}, "unknown node"),
])
async def test_bad_input_is_invalid_params(client: LanguageClient, method: str, params: object,
                                           fragment: str) -> None:
    with pytest.raises(JsonRpcInvalidParams) as err:
        await request(client, method, params)
    assert fragment in str(err.value)
    status = await request(client, "neuralmind/status", {})   # still serving
    assert status["nodes"] > 0


async def test_malformed_standard_params_answer_invalid_params(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcInvalidParams):
        await raw_request(client, "textDocument/hover", {"textDocument": 5})
    assert (await request(client, "neuralmind/status", {}))["nodes"] > 0


async def test_commit_marks_decision_stale_and_restore_clears(client: LanguageClient,
                                                             repo: Path) -> None:
    billing = repo / "app" / "billing.py"
    record = await request(client, "neuralmind/decisions/record", {
        "title": "Invoice totals round once, after tax",
        "rationale": "Rounding per line drifted from the ledger by cents.",
        "files": ["app/billing.py"], "symbols": ["app/billing.py::compute_invoice_total"]})
    did = record["id"]
    item = types.TextDocumentItem(uri=uri(billing), language_id="python", version=1,
                                  text=billing.read_text())
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    await wait_for(lambda: uri(billing) in client.diagnostics, 20, "first diagnostics")
    assert list(client.diagnostics[uri(billing)]) == []

    billing.write_text(billing.read_text().replace("round(subtotal * (1 + tax_rate), 2)",
                                                   "round(subtotal * (1 + tax_rate), 4)"))
    git(repo, "commit", "-q", "-am", "more precision")
    diags = await wait_for(lambda: client.diagnostics.get(uri(billing)), 20, "stale diagnostic")
    [diag] = diags
    assert diag.code == did
    assert diag.source == "neuralmind"
    assert diag.severity == types.DiagnosticSeverity.Warning
    assert diag.range.start.line == 3          # `def compute_invoice_total` (0-based)
    assert "Invoice totals round once" in diag.message and "stale" in diag.message.lower()

    converter = client.protocol._converter
    actions = await raw_request(client, "textDocument/codeAction", converter.unstructure(
        types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=uri(billing)),
                               range=diag.range,
                               context=types.CodeActionContext(diagnostics=[diag]))))
    assert {a["title"].split(":")[0] for a in actions} == {
        "Restore decision", "Invalidate decision", "Show decision"}
    restore = next(a for a in actions if a["title"].startswith("Restore"))
    assert restore["diagnostics"][0]["code"] == did
    restored = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=restore["command"]["command"], arguments=restore["command"]["arguments"]))
    assert restored["status"] == "ACTIVE"
    await wait_for(lambda: not client.diagnostics.get(uri(billing)), 20, "cleared diagnostic")

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri(billing)),
        position=types.Position(line=5, character=4)))
    assert hover is not None and "Invoice totals round once" in hover.contents.value


async def test_huge_document_is_accepted_and_server_keeps_serving(client: LanguageClient,
                                                                  repo: Path) -> None:
    huge = repo / "data" / "huge.py"
    huge.parent.mkdir(exist_ok=True)
    text = "".join(f"VALUE_{i} = {i}  # padding padding padding padding\n" for i in range(60_000))
    huge.write_text(text)          # ~3 MB: arrives in many pipe reads
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(huge), language_id="python", version=1, text=text)))
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri(huge)),
        position=types.Position(line=10, character=0)))
    assert hover is None
    assert (await request(client, "neuralmind/status", {}))["nodes"] > 0
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(huge))))


async def test_head_moving_over_several_commits_scans_each(client: LanguageClient,
                                                          repo: Path) -> None:
    users = repo / "app" / "users.py"
    record = await request(client, "neuralmind/decisions/record", {
        "title": "Resets go through the store", "rationale": "Auditable in one place.",
        "files": ["app/users.py"], "symbols": ["app/users.py::reset_password"]})
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(users), language_id="python", version=1, text=users.read_text())))
    users.write_text(users.read_text().replace("store.send_reset(username)",
                                               "store.send_reset(username.lower())"))
    readme = repo / "README.md"
    readme.write_text(readme.read_text() + "\nMore words.\n")
    # two commits back to back, as a pull brings them: only the first touches the decision
    git(repo, "commit", "-q", "-m", "lowercase resets", "--", "app/users.py")
    git(repo, "commit", "-q", "-m", "docs", "--", "README.md")

    def stale() -> list[types.Diagnostic]:
        return [d for d in client.diagnostics.get(uri(users), []) if d.code == record["id"]]

    [diag] = await wait_for(stale, 20, "the stale diagnostic for the earlier commit")
    assert diag.range.start.line == 9            # def reset_password
