"""Shared by the MCP tests: a small git repository, process environment, polling."""

from __future__ import annotations

import os
import sys
from typing import Any

from sample_workspace import GIT_ENV, eventually, git, make_repo  # noqa: F401 - re-exported

ENV = {**os.environ, **GIT_ENV, "ORT_DISABLE_TELEMETRY": "1", "NEURALMIND_LOG": "info"}
CLI = [sys.executable, "-m", "neuralmind.cli.main"]


def error_code(result: Any) -> str | None:
    """The code of an is_error tool result (None for a success)."""
    if not result.is_error:
        return None
    assert result.structured_content is not None, result.content
    return result.structured_content["error"]["code"]
