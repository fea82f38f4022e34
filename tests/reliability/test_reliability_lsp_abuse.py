"""Protocol abuse against a real `neuralmind-lsp --stdio`: broken frames, unknown methods,
invalid params, edits to documents never opened or out of order, a 10 MB document. The
server must answer what is answerable, refuse the rest, and keep serving."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from lsp_wire import LspProcess

QUESTION = "normalise an invoice value before it is stored"


@pytest.fixture
def lsp(small_repo: Path):  # noqa: ANN201 - yields the running server
    server = LspProcess(small_repo)
    server.initialize({"mcp": False})
    server.wait_ready()
    yield server
    code = server.shutdown()
    assert code == 0, server.stderr_text()[-3000:]


def _serving(lsp: LspProcess) -> None:
    reply = lsp.request("neuralmind/context", {"query": QUESTION}, timeout=30)
    assert "error" not in reply and reply["result"]["hits"], reply
    assert lsp.proc.poll() is None


def _our_frames(err: str) -> list[str]:
    """Traceback lines inside NeuralMind's code (pygls logs its own rejections of
    unstructurable params with a traceback; that is the library refusing, not a crash)."""
    return [ln for ln in err.splitlines() if 'File "' in ln and "/neuralmind/" in ln]


def _frame(body: bytes, length: int | None = None) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


def test_malformed_frames_are_survived(lsp: LspProcess) -> None:
    for junk in (
        _frame(b"{not json"),
        _frame(b"[1, 2, 3]"),
        _frame(b'"a string"'),
        _frame(b'{"jsonrpc": "2.0"}'),
        _frame(b'{"jsonrpc": "2.0", "id": 99, "method": 42}'),
        _frame("{\"jsonrpc\": \"2.0\", \"method\": \"\u00e9\\ud800\"}".encode("utf-8")),
        _frame(b"\xff\xfe\x00garbage\x00"),
        b"Content-Type: application/vscode-jsonrpc\r\n" + _frame(b'{"jsonrpc": "2.0"}'),
    ):
        lsp.send_raw(junk)
        _serving(lsp)


def test_unknown_methods_and_invalid_params_are_errors_not_crashes(lsp: LspProcess) -> None:
    reply = lsp.request("neuralmind/doesNotExist", {})
    assert reply["error"]["code"] == -32601, reply
    lsp.notify("neuralmind/unknownNotification", {"x": 1})
    lsp.notify("$/cancelRequest", {"id": "never-sent"})
    for method, params in [
        ("neuralmind/context", {"query": 123}),
        ("neuralmind/context", {"query": QUESTION, "budget": "lots"}),
        ("neuralmind/context", {"query": QUESTION, "budget": 10**12}),
        ("neuralmind/context", {}),
        ("neuralmind/context", [1, 2]),
        ("neuralmind/context", {"query": "x" * 200_000}),
        ("neuralmind/nextLikely", {"uri": "file:///etc/passwd"}),
        ("neuralmind/nextLikely", {"uri": "not a uri"}),
        ("neuralmind/feedback", {"node": "no/such.py::x", "positive": "yes"}),
        ("neuralmind/decisions/record", {"title": "", "rationale": None}),
        ("neuralmind/decisions/get", {"id": "../../etc/passwd"}),
        ("neuralmind/decisions/query", {"query": QUESTION, "mode": "psychic"}),
        ("textDocument/hover", {"textDocument": {"uri": "file:///nowhere.py"},
                                "position": {"line": -1, "character": 10**9}}),
        ("workspace/symbol", {"query": None}),
        ("workspace/executeCommand", {"command": "neuralmind.nope", "arguments": [1]}),
    ]:
        reply = lsp.request(method, params)
        if "error" in reply:
            assert reply["error"]["code"] in (-32602, -32600, -32601, -32603, -32001, -32803), \
                (method, params, reply)
            assert reply["error"]["message"], reply
        _serving(lsp)
    assert not _our_frames(lsp.stderr_text()), lsp.stderr_text()[-3000:]


def test_document_abuse(lsp: LspProcess, small_repo: Path) -> None:
    rel = "pkg/mod003.py"
    uri = lsp.doc(rel)
    text = (small_repo / rel).read_text(encoding="utf-8")
    lsp.notify("textDocument/didChange", {"textDocument": {"uri": lsp.doc("pkg/mod004.py"),
                                          "version": 7}, "contentChanges": [{"text": "x = 1\n"}]})
    lsp.notify("textDocument/didSave", {"textDocument": {"uri": lsp.doc("never/opened.py")}})
    lsp.notify("textDocument/didClose", {"textDocument": {"uri": lsp.doc("never/opened.py")}})
    lsp.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 5, "text": text}})
    for version in (3, 9, 1, 9):                       # out of order and repeated
        lsp.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                              "contentChanges": [{"text": text + f"# v{version}\n"}]})
    lsp.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 10},
                                          "contentChanges": [{"range": {
                                              "start": {"line": 10**6, "character": 0},
                                              "end": {"line": 10**6 + 1, "character": 5}},
                                              "text": "bad range"}]})
    lsp.notify("textDocument/didOpen", {"textDocument": {"uri": "untitled:Untitled-1",
                                        "languageId": "python", "version": 1, "text": "x"}})
    _serving(lsp)

    big_uri = lsp.doc("pkg/huge.py")
    big = "def f():\n    return 1\n" * (10 * 1024 * 1024 // 23)     # ~10 MB
    started = time.monotonic()
    lsp.notify("textDocument/didOpen", {"textDocument": {
        "uri": big_uri, "languageId": "python", "version": 1, "text": big}})
    lsp.notify("textDocument/didChange", {"textDocument": {"uri": big_uri, "version": 2},
                                          "contentChanges": [{"text": big + "# more\n"}]})
    _serving(lsp)
    assert time.monotonic() - started < 30
    lsp.notify("textDocument/didClose", {"textDocument": {"uri": big_uri}})
    status = lsp.request("neuralmind/status", {})["result"]
    assert status["nodes"] > 0 and json.dumps(status)
    assert not _our_frames(lsp.stderr_text()), lsp.stderr_text()[-3000:]
