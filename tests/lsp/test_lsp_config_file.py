"""The project's `.neuralmind.toml` reaches the language server and its build child.

The server's settings were the defaults plus the editor's, and the build child took them
over the toml: `max_embedded_nodes = 1` there still embedded every node (on the Linux
kernel, toward the default 100,000). The real server and build child, the real model."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from raw_lsp import SERVER_ENV, RawServer
from sample_workspace import make_repo

TIMEOUT_S = 180


def _status(server: RawServer) -> dict[str, Any]:
    return server.request("neuralmind/status", {})["result"]


def test_the_project_settings_file_caps_the_start_up_build(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    (repo / ".neuralmind.toml").write_text("max_embedded_nodes = 1\n", encoding="utf-8")
    server = RawServer(repo, env=SERVER_ENV)
    try:
        server.initialize({"mcp": False})
        deadline = time.monotonic() + TIMEOUT_S
        status = _status(server)
        while status["indexing"] is not None or status["embedded_nodes"] == 0:
            assert time.monotonic() < deadline, status
            status = _status(server)    # a round trip each, not a sleep
        assert status["embedded_nodes"] == 1          # the cap (nothing was asked or opened)
        assert status["file_level_nodes"] == status["indexed_nodes"] - 1 > 0
        server.shut_down()
    finally:
        server.kill()
