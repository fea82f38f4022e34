"""Retrieval scored by use through the real server: an answer, the file it led to edited and
committed, the answer settled: savings report it, and the same question ranks the kept
file up and the returned-but-unused files down."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import bpe_openai
import pytest
import pytest_lsp
from lsp_support import CAPABILITIES, CONFIG, eventually, git, indexing_ended, uri, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")
WINDOW = 1.0
QUESTION = "how is the invoice total computed with tax"


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, repo: Path):
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES, root_uri=uri(repo),
        workspace_folders=[types.WorkspaceFolder(uri=uri(repo), name="shop")],
        initialization_options={"neuralmind": {"debounceSeconds": 0.2, "mcp": False,
                                               "useWindowSeconds": WINDOW}}))
    await wait_for(lambda: indexing_ended(lsp_client), 120, "the first index")
    yield
    await lsp_client.shutdown_session()


async def request(client: LanguageClient, method: str, params: object) -> object:
    return await client.protocol.send_request_async(method, params)


def _file_scores(out: dict) -> dict[str, float]:
    """The answer's file ranking (best first) with its scores."""
    return {f["file"]: f["score"] for f in out["files"]}


def _edit_and_commit(client: LanguageClient, repo: Path, rel: str, added: str) -> None:
    path = repo / rel
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(path), language_id="python", version=1, text=path.read_text())))
    path.write_text(path.read_text() + added)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path))))


async def _settled(client: LanguageClient, count: int) -> dict:
    async def done() -> dict:
        report = await request(client, "neuralmind/savings", {})
        return report if report["overall"]["acted_on"] >= count else {}

    return await eventually(done, 30, f"{count} answers settled at the commits")


async def test_an_answer_is_scored_by_use_and_teaches_the_ranking(client: LanguageClient,
                                                                   repo: Path) -> None:
    cold = _file_scores(await request(client, "neuralmind/context", {"query": QUESTION}))
    returned = list(cold)
    assert returned[0] == "app/billing.py" and len(returned) >= 2
    _edit_and_commit(client, repo, "app/billing.py", "\n\ndef rounding_mode():\n    return 1\n")
    await asyncio.sleep(WINDOW)              # the answer's window closes before the commit
    git(repo, "commit", "-qam", "rounding mode")
    report = await _settled(client, 1)
    overall = report["overall"]
    assert overall["answers"] == 1 and overall["by_kind"] == {"context": 1}
    assert overall["files_used_per_answer"] == 1.0
    assert overall["precision_at_5"] == round(1 / min(5, len(returned)), 3)
    assert report["days"][0]["day"] == time.strftime("%Y-%m-%d", time.gmtime())
    oracle = bpe_openai.get_encoding("o200k_base")           # the real o200k, independently
    indexed = [p for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts
               and ".neuralmind" not in p.parts]
    assert report["codebase_tokens_now"] == sum(
        len(oracle.encode(p.read_text(), disallowed_special=())) for p in indexed)
    assert overall["tokens_served"] > 0
    assert overall["tokens_saved"] == overall["codebase_tokens"] - overall["tokens_served"]

    # the kept file is up for the question; the others are where they were
    warm = _file_scores(await request(client, "neuralmind/context", {"query": QUESTION}))
    assert warm["app/billing.py"] > cold["app/billing.py"]
    assert all(warm[f] == cold[f] for f in returned[1:] if f in warm)

    # a similar question whose work used another file: billing.py, returned above it and
    # unused, loses what it had learned for such questions, down to its cold score at most
    similar = f"{QUESTION} for users"
    before = _file_scores(await request(client, "neuralmind/context", {"query": similar}))
    assert list(before)[0] == "app/billing.py"
    _edit_and_commit(client, repo, "app/users.py", "\n\ndef user_tax_exempt():\n    return 0\n")
    await asyncio.sleep(WINDOW)
    git(repo, "commit", "-qam", "tax exempt users")
    await _settled(client, 3)                # the warm context counts too: nothing followed it
    after = _file_scores(await request(client, "neuralmind/context", {"query": QUESTION}))
    assert cold["app/billing.py"] <= after["app/billing.py"] < warm["app/billing.py"]
    status = await request(client, "neuralmind/status", {})      # the last report's summary
    assert status["savings"]["overall"]["acted_on"] >= 2
