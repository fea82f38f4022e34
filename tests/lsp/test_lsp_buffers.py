"""Unsaved buffers count: the real server extracts an edited buffer once typing pauses, its
names are searchable and its lines are in the context before any save; closing it unsaved
serves the file again; saving embeds it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_support import eventually, uri
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

ADDED = "\n\ndef apply_loyalty_discount(total):\n    \"\"\"Ten percent off for members.\"\"\"\n" \
        "    return total * 0.9\n"


async def request(client: LanguageClient, method: str, params: object) -> object:
    return await client.protocol.send_request_async(method, params)


def _open(client: LanguageClient, path: Path) -> str:
    text = path.read_text()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(path), language_id="python", version=1, text=text)))
    return text


def _append(client: LanguageClient, path: Path, text: str, added: str, version: int) -> None:
    """An incremental edit at the end of the buffer (what typing sends)."""
    lines = text.split("\n")
    end = types.Position(line=len(lines) - 1, character=len(lines[-1]))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=end, end=end), text=added)]))


async def _symbols(client: LanguageClient, query: str) -> list[tuple[str, bool]]:
    out = await request(client, "neuralmind/search", {"query": query, "k": 5})
    return [(h["symbol"], h["stale"]) for h in out["hits"]]


async def test_an_unsaved_edit_is_searchable_and_in_the_context(client: LanguageClient,
                                                                repo: Path) -> None:
    billing = repo / "app" / "billing.py"
    disk = _open(client, billing)
    _append(client, billing, disk, ADDED, 2)
    pending = (await request(client, "neuralmind/status", {}))["freshness"]
    assert pending["unsaved_files"] == ["app/billing.py"]       # known at once, not indexed yet
    assert pending["pending_files"] == ["app/billing.py"]

    async def found() -> bool:
        return ("apply_loyalty_discount", False) in await _symbols(client, "apply_loyalty_discount")

    await eventually(found, 30, "the unsaved function to become searchable")
    assert billing.read_text() == disk                          # nothing was written
    out = await request(client, "neuralmind/context", {"query": "apply_loyalty_discount for members"})
    assert "return total * 0.9" in out["context"]               # the buffer's lines
    assert out["freshness"]["unsaved_files"] == ["app/billing.py"]
    assert out["freshness"]["pending_files"] == []
    hit = next(h for h in out["hits"] if h["symbol"] == "apply_loyalty_discount")
    assert hit["line"] == len(disk.split("\n")) + 2 and hit["stale"] is False

    # more typing: until it is extracted, hits from the buffer are stale
    _append(client, billing, disk + ADDED, "\n# more\n", 3)
    assert ("apply_loyalty_discount", True) in await _symbols(client, "apply_loyalty_discount")

    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(billing))))

    async def reverted() -> bool:
        found = [s for s, _ in await _symbols(client, "apply_loyalty_discount")]
        status = await request(client, "neuralmind/status", {})
        return "apply_loyalty_discount" not in found and not status["freshness"]["unsaved_files"]

    await eventually(reverted, 30, "the closed buffer to give way to the file")


async def test_an_undo_back_to_the_file_is_not_unsaved(client: LanguageClient, repo: Path) -> None:
    users = repo / "app" / "users.py"
    disk = _open(client, users)
    _append(client, users, disk, "\n# scratch\n", 2)
    lines = (disk + "\n# scratch\n").split("\n")
    start = types.Position(line=len(disk.split("\n")) - 1, character=len(disk.split("\n")[-1]))
    end = types.Position(line=len(lines) - 1, character=len(lines[-1]))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(users), version=3),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=start, end=end), text="")]))

    async def clean() -> bool:
        return not (await request(client, "neuralmind/status", {}))["freshness"]["unsaved_files"]

    await eventually(clean, 30, "the undone buffer to count as saved")


async def test_a_buffer_just_opened_or_saved_is_not_unsaved(client: LanguageClient,
                                                            repo: Path) -> None:
    """At once, before the idle extraction: an opened buffer is the file's text, and a
    save puts the edits in the file (the review and the stamp read `unsaved`)."""
    config = repo / "app" / "__init__.py"
    disk = _open(client, config)
    status = await request(client, "neuralmind/status", {})
    assert "app/__init__.py" not in status["freshness"]["unsaved_files"]
    _append(client, config, disk, "\n# tuned\n", 2)
    status = await request(client, "neuralmind/status", {})
    assert "app/__init__.py" in status["freshness"]["unsaved_files"]      # edited, not saved
    config.write_text(disk + "\n# tuned\n")
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(config))))
    status = await request(client, "neuralmind/status", {})
    assert "app/__init__.py" not in status["freshness"]["unsaved_files"]


async def test_a_saved_buffer_is_embedded(client: LanguageClient, repo: Path) -> None:
    storage = repo / "app" / "storage.py"
    disk = _open(client, storage)
    added = "\n\ndef vacuum_deleted_rows(store):\n    \"\"\"Reclaim space.\"\"\"\n    return 0\n"
    _append(client, storage, disk, added, 2)
    await eventually(lambda: _has(client, "vacuum_deleted_rows", "vacuum_deleted_rows"), 30,
                     "the unsaved function")
    storage.write_text(disk + added)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(storage))))

    async def embedded() -> bool:
        status = await request(client, "neuralmind/status", {})
        return (status["embeddings_pending"] == 0 and not status["freshness"]["unsaved_files"]
                and status["embedded_nodes"] == status["indexed_nodes"])

    await eventually(embedded, 60, "the saved function embedded")
    assert ("vacuum_deleted_rows", False) in await _symbols(client, "reclaim space of deleted rows")


async def _has(client: LanguageClient, query: str, symbol: str) -> bool:
    return symbol in [s for s, _ in await _symbols(client, query)]
