"""A small shop workspace in a real git repository, shared by the LSP and MCP tests,
and polling for conditions that become true asynchronously (no fixed sleeps)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

FILES = {
    "app/__init__.py": "",
    "app/billing.py": '''"""Invoices and totals."""


def compute_invoice_total(items, tax_rate):
    """Sum line items and apply the tax rate."""
    subtotal = sum(price * qty for price, qty in items)
    return round(subtotal * (1 + tax_rate), 2)


class InvoiceFormatter:
    """Render an invoice as text."""

    def render(self, invoice):
        return f"Invoice {invoice.number}: {invoice.total}"
''',
    "app/users.py": '''"""User accounts."""


def authenticate_user(username, password, store):
    """Check a password against the stored hash."""
    record = store.get(username)
    return record is not None and record.check(password)


def reset_password(username, store):
    """Send a password reset link."""
    store.send_reset(username)
''',
    "app/storage.py": '''"""Persistence."""


class KeyValueStore:
    """A tiny key-value store on disk."""

    def get(self, key):
        return None

    def put(self, key, value):
        pass
''',
    "README.md": "# Shop\n\nA toy shop: billing, users, storage.\n",
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True,
                          capture_output=True, text=True).stdout


def make_repo(root: Path) -> Path:
    """FILES written under `root` and committed; returns the resolved root."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root.resolve()


EDITOR_SERVER = [sys.executable, "-m", "neuralmind.cli.server_cmds", "--stdio"]
SERVER_ENV = {**os.environ, **GIT_ENV, "ORT_DISABLE_TELEMETRY": "1", "NEURALMIND_LOG": "info"}


def _frame(obj: dict[str, Any]) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def start_editor_server(root: Path) -> subprocess.Popen[bytes]:
    """The editor's real `neuralmind-lsp` on `root`, initialized (its MCP endpoint on by
    default); stdin stays open: closing it is a bare EOF."""
    proc = subprocess.Popen(EDITOR_SERVER, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=SERVER_ENV, cwd=root)
    assert proc.stdin is not None
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": root.resolve().as_uri(), "capabilities": {}}}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.flush()
    return proc


async def eventually(check: Callable[[], Awaitable[Any]], timeout: float = 30.0,
                     what: str = "condition") -> Any:
    """Poll `check` (e.g. a status request) until it answers truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def built_workspace(root: Path, files: dict[str, str]) -> Any:
    """A Workspace over `files` (dedented texts) written under `root`, built once."""
    import textwrap

    from neuralmind.engine import Workspace

    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    ws = Workspace(root)
    ws.build()
    return ws
