"""Fixtures: a temporary git repository and a real `neuralmind-lsp --stdio` talking to it."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CAPABILITIES, CONFIG, indexing_ended, make_repo, uri, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("lsp") / "shop")


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, repo: Path):
    # debounceSeconds: the quiet window that closes an editing batch. 1 s, not less: a test's
    # burst of notifications must land in one batch even when a busy machine delays the
    # server between two of them (0.2 s split users.py and billing.py at load ~11).
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES, root_uri=uri(repo),
        workspace_folders=[types.WorkspaceFolder(uri=uri(repo), name="shop")],
        initialization_options={"neuralmind": {"debounceSeconds": 1.0, "mcp": False}}))
    await wait_for(lambda: indexing_ended(lsp_client), 120, "the first index")
    yield
    await lsp_client.shutdown_session()
