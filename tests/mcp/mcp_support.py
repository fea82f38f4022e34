"""Shared by the MCP tests: a small git repository, process environment, polling."""

from __future__ import annotations

import sys
from typing import Any

from sample_workspace import (  # noqa: F401 - re-exported
    EDITOR_SERVER,
    GIT_ENV,
    SERVER_ENV,
    eventually,
    git,
    make_repo,
    start_editor_server,
)

ENV = SERVER_ENV
SERVER = EDITOR_SERVER
CLI = [sys.executable, "-m", "neuralmind.cli.main"]


def error_code(result: Any) -> str | None:
    """The code of an is_error tool result (None for a success)."""
    if not result.is_error:
        return None
    assert result.structured_content is not None, result.content
    return result.structured_content["error"]["code"]
