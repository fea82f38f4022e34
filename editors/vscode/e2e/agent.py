"""An agent beside the editor: the user's own `neuralmind mcp ROOT` (MCP over stdio, which
bridges to the editor's live server for that folder), spoken to with plain JSON-RPC lines.
What the editor reports to its server (`neuralmind/editorState`) is read back this way, as
an agent reads it; nothing looks inside the server."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

PROTOCOL = "2025-06-18"


def call_tool(python: Path, root: Path, tool: str, args: dict[str, Any] | None = None,
              timeout: float = 60) -> dict[str, Any]:
    """One tool call in a fresh `neuralmind mcp` session; its structured result (raises with
    the tool's text when it reports an error)."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "neuralmind-e2e", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": tool, "arguments": args or {}}},
    ]
    proc = subprocess.Popen([str(python.parent / "neuralmind"), "mcp", str(root)], cwd=root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(timeout, proc.kill)  # a silent bridge fails the read below
    watchdog.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(lines[0]) + "\n")
        proc.stdin.flush()
        _reply(proc, 1)
        for line in lines[1:]:
            proc.stdin.write(json.dumps(line) + "\n")
        proc.stdin.flush()
        result = _reply(proc, 2)
    finally:
        watchdog.cancel()
        proc.kill()
        _, err = proc.communicate(timeout=timeout)
    if result.get("isError"):
        raise AssertionError(f"{tool} failed: {result.get('content')}; stderr: {err[-2000:]}")
    return result.get("structuredContent") or json.loads(result["content"][0]["text"])


def _reply(proc: subprocess.Popen[str], rid: int) -> dict[str, Any]:
    """The result of request `rid` (the bridge writes one JSON message per line)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        msg = json.loads(line)
        if msg.get("id") != rid:
            continue
        if "error" in msg:
            raise AssertionError(f"MCP request {rid} failed: {msg['error']}")
        return msg["result"]
    raise AssertionError(f"`neuralmind mcp` closed before answering request {rid} "
                         f"(exit {proc.wait()})")
