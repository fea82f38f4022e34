"""A client with pull diagnostics and refresh support; files changed outside the editor."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CONFIG, eventually, git, indexing_ended, make_repo, uri, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

PULL_CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(
        diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)),
    text_document=types.TextDocumentClientCapabilities(
        diagnostic=types.DiagnosticClientCapabilities()),
)


@pytest.fixture(scope="module")
def pull_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("pull") / "shop")


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def pull_client(lsp_client: LanguageClient, pull_repo: Path):
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=PULL_CAPABILITIES, root_uri=uri(pull_repo),
        initialization_options={"mcp": False, "debounce_seconds": 0.2}))
    await wait_for(lambda: indexing_ended(lsp_client), 120, "the first index")
    yield
    await lsp_client.shutdown_session()


async def test_pull_diagnostics_refresh_after_commit(pull_client: LanguageClient,
                                                    pull_repo: Path) -> None:
    assert pull_client.init_result.capabilities.diagnostic_provider is not None
    users = pull_repo / "app" / "users.py"
    record = await pull_client.protocol.send_request_async("neuralmind/decisions/record", {
        "title": "Passwords are checked by the store", "rationale": "One place hashes.",
        "files": ["app/users.py"], "symbols": ["app/users.py::authenticate_user"]})
    pull_client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri(users), language_id="python", version=1,
                                             text=users.read_text())))
    doc = types.TextDocumentIdentifier(uri=uri(users))
    report = await pull_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=doc))
    assert list(report.items) == []
    assert uri(users) not in pull_client.diagnostics          # nothing pushed to pull clients

    refreshes = pull_client.diagnostic_refresh_count
    users.write_text(users.read_text().replace("record is not None", "record"))
    git(pull_repo, "commit", "-q", "-am", "simplify")
    await wait_for(lambda: pull_client.diagnostic_refresh_count > refreshes, 20,
                   "a refresh request after the commit")
    # Other changes ask for a refresh too (the file's write, the review of the change set), so
    # the first refresh may come before the commit's scan has marked the decision stale. A
    # client pulls on each refresh only: the scan's own refresh must follow, so pull again
    # after each further refresh (never on a timer) until the report carries it.
    for _ in range(5):
        seen = pull_client.diagnostic_refresh_count
        report = await pull_client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=doc))
        items = list(report.items)
        if items:
            break
        await wait_for(lambda s=seen: pull_client.diagnostic_refresh_count > s, 20,
                       "a further refresh once the commit's scan has run")
    [diag] = items
    assert diag.code == record["id"] and diag.range.start.line == 3
    assert uri(users) not in pull_client.diagnostics


async def test_file_changed_outside_the_editor_is_indexed(pull_client: LanguageClient,
                                                         pull_repo: Path) -> None:
    new = pull_repo / "app" / "shipping.py"
    new.write_text("def estimate_shipping_cost(weight, zone):\n    return weight * zone\n")
    pull_client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=uri(new), type=types.FileChangeType.Created)]))

    async def found() -> bool:
        out = await pull_client.protocol.send_request_async(
            "neuralmind/search", {"query": "estimate_shipping_cost", "k": 1})
        return bool(out["hits"]) and out["hits"][0]["file"] == "app/shipping.py"

    await eventually(found, 30, "the new file to be indexed")
