"""Helpers for the tests that drive the real language server (tests/lsp, tests/observatory): a temporary git repository, the real server
command, a client that keeps custom results as plain JSON, polling helpers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features
from sample_workspace import FILES, GIT_ENV, eventually, git, make_repo  # noqa: F401 - re-exported

from neuralmind.lsp.server import plain_params_converter


def uri(path: Path) -> str:
    return path.resolve().as_uri()


SERVER_COMMAND = [sys.executable, "-m", "neuralmind.cli.server_cmds", "--stdio"]
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
