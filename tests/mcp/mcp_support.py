"""Shared by the MCP tests: a small git repository, process environment, polling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sample_workspace import GIT_ENV, eventually, git, make_repo  # noqa: F401 - re-exported

ENV = {**os.environ, **GIT_ENV, "ORT_DISABLE_TELEMETRY": "1", "NEURALMIND_LOG": "info"}
SERVER = [sys.executable, "-m", "neuralmind.cli.server_cmds", "--stdio"]


def _frame(obj: dict[str, Any]) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def start_editor_server(root: Path) -> subprocess.Popen[bytes]:
    """The editor's real `neuralmind-lsp` on `root`, initialized (its MCP endpoint on by
    default); stdin stays open: closing it is a bare EOF."""
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=ENV, cwd=root)
    assert proc.stdin is not None
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": root.resolve().as_uri(), "capabilities": {}}}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.flush()
    return proc
CLI = [sys.executable, "-m", "neuralmind.cli.main"]


def error_code(result: Any) -> str | None:
    """The code of an is_error tool result (None for a success)."""
    if not result.is_error:
        return None
    assert result.structured_content is not None, result.content
    return result.structured_content["error"]["code"]
