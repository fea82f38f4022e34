"""The review in the editor, through the real server: missed-file diagnostics on a changed (and
unsaved) file with the code action that opens the partner, decisions at risk as Hint
diagnostics with re-affirm / supersede / invalidate, and the `neuralmind/review` request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_support import CONFIG, indexing_ended, raw_request, uri, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient
from review_support import make_history

pytestmark = pytest.mark.asyncio(loop_scope="module")

CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(
        work_done_progress=True, show_document=types.ShowDocumentClientCapabilities(support=True)),
    text_document=types.TextDocumentClientCapabilities(
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
        code_action=types.CodeActionClientCapabilities()))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_history(tmp_path_factory.mktemp("lsp-review") / "repo")


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, repo: Path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES, root_uri=uri(repo),
        initialization_options={"neuralmind": {"debounceSeconds": 0.2, "mcp": False}}))
    await wait_for(lambda: indexing_ended(lsp_client), 120, "the first index")
    yield
    await lsp_client.shutdown_session()


def open_doc(client: LanguageClient, path: Path) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(path), language_id="python", version=1, text=path.read_text())))


def ours(client: LanguageClient, path: Path, kind: str) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(uri(path), [])
            if isinstance(d.data, dict) and d.data.get("kind") == kind]


async def code_actions(client: LanguageClient, path: Path,
                       diag: types.Diagnostic) -> list[dict[str, Any]]:
    converter = client.protocol._converter
    return await raw_request(client, "textDocument/codeAction", converter.unstructure(  # type: ignore[return-value]
        types.CodeActionParams(text_document=types.TextDocumentIdentifier(uri=uri(path)),
                               range=diag.range, context=types.CodeActionContext(diagnostics=[diag]))))


async def run(client: LanguageClient, action: dict[str, Any]) -> Any:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=action["command"]["command"], arguments=action["command"]["arguments"]))


async def test_an_unsaved_change_warns_about_its_partner(client: LanguageClient,
                                                        repo: Path) -> None:
    sessions = repo / "app" / "sessions.py"
    open_doc(client, sessions)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(sessions), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(
            text=sessions.read_text() + "\ndef close_session(s):\n    pass\n")]))
    [diag] = await wait_for(lambda: ours(client, sessions, "missing"), 30, "the missed file")
    assert diag.message == "usually changes with `tests/test_sessions.py` (5 of 7 commits)"
    assert diag.severity == types.DiagnosticSeverity.Information and diag.source == "neuralmind"
    [action] = await code_actions(client, sessions, diag)
    assert action["title"] == "Open tests/test_sessions.py"
    shown = await run(client, action)
    partner = uri(repo / "tests" / "test_sessions.py")
    assert shown == {"uri": partner, "shown": True}
    assert client.shown_documents[-1].uri == partner

    client.text_document_did_close(types.DidCloseTextDocumentParams(   # changes discarded
        text_document=types.TextDocumentIdentifier(uri=uri(sessions))))
    open_doc(client, sessions)
    await wait_for(lambda: not ours(client, sessions, "missing"), 30, "the warning to clear")


async def test_a_change_to_a_governed_symbol_is_a_hint_with_its_actions(
        client: LanguageClient, repo: Path) -> None:
    record = await client.protocol.send_request_async("neuralmind/decisions/record", {
        "title": "Pool of four", "rationale": "the database allows five connections",
        "symbols": ["app/pool.py::Pool.size"]})
    pool = repo / "app" / "pool.py"
    open_doc(client, pool)
    pool.write_text(pool.read_text().replace("return 4", "return 8"))
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(pool))))
    [diag] = await wait_for(lambda: ours(client, pool, "at_risk"), 30, "the decision at risk")
    assert diag.severity == types.DiagnosticSeverity.Hint
    assert diag.range.start.line == 6                     # `def size` (0-based)
    assert diag.message == ("governed by 'Pool of four': reconsider before committing "
                            "(symbol Pool.size changed)")
    actions = await code_actions(client, pool, diag)
    assert [a["title"].split(":")[0] for a in actions] == [
        "Re-affirm decision", "Supersede decision", "Invalidate decision", "Show decision"]

    supersede = actions[1]
    with pytest.raises(Exception, match="title, rationale"):
        await run(client, supersede)               # the editor asks for them first
    affirmed = await run(client, actions[0])
    assert affirmed["id"] == record["id"] and affirmed["status"] == "ACTIVE"
    await wait_for(lambda: not ours(client, pool, "at_risk"), 30, "re-affirmed: no longer at risk")

    pool.write_text(pool.read_text().replace("return 8", "return 9"))
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(pool))))
    [diag] = await wait_for(lambda: ours(client, pool, "at_risk"), 30, "at risk again")
    new = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=supersede["command"]["command"],
        arguments=[*supersede["command"]["arguments"], "Pool of nine", "ten allowed now"]))
    assert new["title"] == "Pool of nine" and new["superseded"]["status"] == "INVALIDATED"
    await wait_for(lambda: not ours(client, pool, "at_risk"), 30, "superseded: the new one holds")


async def test_the_review_request_takes_buffer_texts(client: LanguageClient, repo: Path) -> None:
    models = repo / "app" / "models.py"
    text = models.read_text() + "\n\nclass Admin(User):\n    pass\n"
    out = await client.protocol.send_request_async("neuralmind/review", {
        "buffers": [{"uri": uri(models), "text": text}], "minConfidence": 0.2})
    assert "app/models.py" in out["unsaved_files"]
    found = {m["file"]: m for m in out["missing"]}
    assert found["app/sessions.py"]["uri"] == uri(repo / "app" / "sessions.py")
    with pytest.raises(Exception, match="base"):
        await client.protocol.send_request_async("neuralmind/review", {"base": "no-such-ref"})


async def test_the_review_reads_the_editors_unsaved_text(client: LanguageClient,
                                                         repo: Path) -> None:
    """Without texts in the request the server reviews its own open documents, edits it has
    not extracted yet included (the file on disk is unchanged)."""
    await client.protocol.send_request_async("neuralmind/decisions/record", {
        "title": "Users are nameless", "rationale": "names come from the directory",
        "symbols": ["app/models.py::User"]})
    models = repo / "app" / "models.py"
    open_doc(client, models)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(models), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(
            text=models.read_text().replace('name = ""', 'name = "anon"'))]))
    out = await client.protocol.send_request_async("neuralmind/review", {})
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(models))))
    assert "app/models.py" in out["unsaved_files"]
    assert [(d["title"], d["file"]) for d in out["decisions_at_risk"]
            if d["file"] == "app/models.py"] == [("Users are nameless", "app/models.py")]
