"""Regression: pygls 2.1.1 files the future of every handler it runs in
`JsonRPCProtocol._request_futures` under a fresh uuid and removes only request results,
so each didChange/didOpen/didSave left finished futures behind (~3 KB a notification: the
soak's memory growth). `NeuralMindProtocol` (neuralmind/lsp/server.py) must drop them.

Observable: the server exposes no count of its futures, RSS moved by ±20 MB around 5,000
notifications here (indexing, the model, the allocator) and a finished Task is not among
`asyncio.all_tasks()`, so the real server process is started through a launcher that adds
one probe request, `neuralmind-test/requestFutures`, answering `len(_request_futures)`;
everything else is the unmodified `neuralmind-lsp --stdio`, driven by a pytest-lsp client.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CAPABILITIES, SERVER_ENV, indexing_ended, make_client, uri, wait_for
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

CHANGES = 3_000
PROBE = "neuralmind-test/requestFutures"
LAUNCHER = f"""
import sys
import neuralmind.lsp.setup as setup_module
from neuralmind.cli.server_cmds import lsp_main as main

make = setup_module.create_server


def create_server(*args, **kwargs):
    server = make(*args, **kwargs)

    @server.feature({PROBE!r})
    def request_futures(params):
        return len(server.protocol._request_futures)

    return server


setup_module.create_server = create_server
sys.exit(main(["--stdio"]))
"""
CONFIG = ClientServerConfig(server_command=[sys.executable, "-c", LAUNCHER],
                            server_env=SERVER_ENV, client_factory=make_client)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def probed(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    from sample_workspace import make_repo

    repo = make_repo(tmp_path_factory.mktemp("leak") / "shop")
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES, root_uri=uri(repo),
        workspace_folders=[types.WorkspaceFolder(uri=uri(repo), name="shop")],
        initialization_options={"neuralmind": {"debounceSeconds": 0.2, "mcp": False}}))
    await wait_for(lambda: indexing_ended(lsp_client), 120, "the first index")
    lsp_client.repo = repo
    yield
    await lsp_client.shutdown_session()


async def _futures(client: LanguageClient) -> int:
    return int(await client.protocol.send_request_async(PROBE, {}))


async def test_didchange_notifications_leave_no_futures_behind(probed: LanguageClient) -> None:
    client = probed
    path = Path(client.repo) / "app" / "billing.py"
    doc = uri(path)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=doc, language_id="python", version=1,
                                             text=" " + path.read_text(encoding="utf-8"))))
    baseline = await _futures(client)
    for version in range(2, CHANGES + 2):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=doc, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=0, character=0),
                                  end=types.Position(line=0, character=1)),
                text="#" if version % 2 else " ")]))
        if version % 200 == 0:
            await asyncio.sleep(0)                      # let the writer drain
    counts = [await _futures(client)]                   # every change was read before this
    for _ in range(20):                                 # handlers still running may finish
        if counts[-1] <= baseline + 5:
            break
        await asyncio.sleep(0.1)
        counts.append(await _futures(client))
    assert counts[-1] <= baseline + 5, (
        f"{counts[-1] - baseline} futures kept after {CHANGES} didChange notifications "
        f"(baseline {baseline}; polled {counts[:3]}...{counts[-1:]})")
