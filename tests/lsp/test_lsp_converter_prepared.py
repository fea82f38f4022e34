"""The server prepares the converter code of its messages before it serves: cattrs compiles
a type's (un)structuring code on first use, on the event loop (a 22 ms stall at the first
didChange of a session on whole Django)."""

from __future__ import annotations

import linecache
from typing import Any

from lsprotocol import types

from neuralmind.lsp.server import prepare_converter
from neuralmind.lsp.setup import create_server

URI = "file:///ws/app.py"
POS = {"line": 1, "character": 2}
RANGE = {"start": POS, "end": POS}
INCOMING: list[dict[str, Any]] = [
    {"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": URI, "languageId": "python", "version": 1, "text": "x = 1\n"}}},
    {"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": URI, "version": 2},
        "contentChanges": [{"range": RANGE, "text": "#"}, {"text": "whole"}]}},
    {"method": "textDocument/didSave", "params": {"textDocument": {"uri": URI}}},
    {"method": "textDocument/didClose", "params": {"textDocument": {"uri": URI}}},
    {"id": 1, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": URI}, "position": POS}},
    {"id": 2, "method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": URI}, "range": RANGE, "context": {"diagnostics": [{
            "range": RANGE, "message": "stale", "severity": 2, "code": "d1",
            "source": "neuralmind"}]}}},
    {"id": 3, "method": "workspace/symbol", "params": {"query": "total"}},
    {"method": "workspace/didChangeWatchedFiles", "params": {
        "changes": [{"uri": URI, "type": 2}]}},
]


def generated() -> int:
    return sum(1 for name in linecache.cache if "cattrs" in name)


def test_first_messages_of_a_session_compile_nothing() -> None:
    server = create_server(None)
    prepare_converter(server)
    before = generated()
    for message in INCOMING:
        parsed = server.protocol.structure_message({"jsonrpc": "2.0", **message})
        assert not isinstance(parsed, dict), message["method"]   # a typed message
    server.protocol._converter.unstructure(types.PublishDiagnosticsNotification(
        params=types.PublishDiagnosticsParams(uri=URI, diagnostics=[types.Diagnostic(
            range=types.Range(start=types.Position(1, 0), end=types.Position(1, 3)),
            message="m", severity=types.DiagnosticSeverity.Warning, code="d1",
            source="neuralmind")])))
    assert generated() == before
