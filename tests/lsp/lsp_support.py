"""Helpers for the language-server tests: a temporary git repository, the real server
command, a client that keeps custom results as plain JSON, polling helpers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from neuralmind.lsp.server import plain_params_converter

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
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def uri(path: Path) -> str:
    return path.resolve().as_uri()


SERVER_COMMAND = [sys.executable, "-m", "neuralmind.lsp.entry", "--stdio"]
SERVER_ENV = {**os.environ, **GIT_ENV, "NEURALMIND_LOG": "info", "ORT_DISABLE_TELEMETRY": "1"}

CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(
        configuration=True,
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True)),
    text_document=types.TextDocumentClientCapabilities(
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
        code_action=types.CodeActionClientCapabilities()),
)


async def wait_for(predicate: Callable[[], object], timeout: float = 30.0,
                   what: str = "condition") -> object:
    """Poll a client-side condition (messages arrive on the client's own loop)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def eventually(check: Callable[[], Awaitable[object]], timeout: float = 30.0,
                     what: str = "condition") -> object:
    """Poll the server (e.g. neuralmind/status) until `check` answers truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def raw_request(client: LanguageClient, method: str, params: object) -> object:
    """Send JSON exactly as given and return the plain JSON result (or raise its error).

    For malformed standard params the typed client cannot build, and for results its
    union hooks mis-type (a CodeAction carrying a command comes back as a Command).
    """
    msg_id = f"raw-{uuid.uuid4().hex}"
    future: concurrent.futures.Future[object] = concurrent.futures.Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method,
                                "params": params})
    return await asyncio.wrap_future(future)


def indexing_ended(client: LanguageClient) -> bool:
    return any(reports and isinstance(reports[-1], types.WorkDoneProgressEnd)
               for reports in client.progress_reports.values())


def make_client() -> LanguageClient:
    """pytest-lsp's client, with results of custom requests kept as plain JSON."""
    client = LanguageClient(converter_factory=plain_params_converter)
    register_lsp_features(client)
    return client


CONFIG = ClientServerConfig(server_command=SERVER_COMMAND, server_env=SERVER_ENV,
                            client_factory=make_client)
