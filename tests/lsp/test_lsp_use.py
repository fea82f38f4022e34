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


async def test_an_answer_is_scored_by_use_and_teaches_the_ranking(client: LanguageClient,
                                                                   repo: Path) -> None:
    before = await request(client, "neuralmind/context", {"query": QUESTION})
    returned = list(_file_scores(before))
    assert returned[0] == "app/billing.py" and len(returned) >= 2
    billing = repo / "app" / "billing.py"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(billing), language_id="python", version=1, text=billing.read_text())))
    billing.write_text(billing.read_text() + "\n\ndef rounding_mode():\n    return 'half-even'\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(billing))))
    await asyncio.sleep(WINDOW)              # the answer's window closes before the commit
    git(repo, "commit", "-qam", "rounding mode")

    async def settled() -> dict:
        report = await request(client, "neuralmind/savings", {})
        return report if report["overall"]["acted_on"] else {}

    report = await eventually(settled, 30, "the answer settled at the commit")
    overall = report["overall"]
    assert overall["answers"] == 1 and overall["by_kind"] == {"context": 1}
    assert overall["tokens_served"] == before["tokens"]
    oracle = bpe_openai.get_encoding("o200k_base")           # the real o200k, independently
    indexed = [p for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts
               and ".neuralmind" not in p.parts]
    assert report["codebase_tokens_now"] == sum(len(oracle.encode(p.read_text(), disallowed_special=()))
                                                for p in indexed)
    assert overall["tokens_saved"] == overall["codebase_tokens"] - overall["tokens_served"]
    assert overall["files_used_per_answer"] == 1.0
    assert overall["precision_at_5"] == round(1 / min(5, len(returned)), 3)
    assert report["days"][0]["day"] == time.strftime("%Y-%m-%d", time.gmtime())

    after = _file_scores(await request(client, "neuralmind/context", {"query": QUESTION}))
    first = _file_scores(before)
    assert after["app/billing.py"] > first["app/billing.py"]          # kept: up
    unused = [f for f in returned[1:5] if f in after]
    assert unused and all(after[f] < first[f] for f in unused)        # returned, unused: down
    status = await request(client, "neuralmind/status", {})      # the last report's summary
    assert status["savings"]["overall"]["acted_on"] == 1
