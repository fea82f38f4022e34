"""The server as a process: stdout hygiene, clean exits, settings warnings, cancelling."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsp_support import make_repo
from raw_lsp import EXIT_BOUND_S, RawServer


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop")


def _no_temp_files(root: Path) -> list[str]:
    return [p.name for p in (root / ".neuralmind").glob("*") if p.name.endswith(".tmp")]


def test_stdout_carries_only_frames_and_fd1_is_stderr(repo: Path) -> None:
    server = RawServer(repo)
    server.initialize({"mcp": False})
    pid = server.proc.pid
    assert os.readlink(f"/proc/{pid}/fd/1") == os.readlink(f"/proc/{pid}/fd/2")
    assert os.readlink(f"/proc/{pid}/fd/0") == os.devnull
    status = server.request("neuralmind/status", {})
    assert status["result"]["root"] == str(repo)
    assert server.request("shutdown", None)["result"] is None
    server.notify("exit", None)
    code, took = server.wait_exit()
    assert code == 0 and took < EXIT_BOUND_S


def test_exit_without_shutdown_is_code_1(repo: Path) -> None:
    server = RawServer(repo)
    server.initialize({"mcp": False})
    server.notify("exit", None)
    code, took = server.wait_exit()
    assert code == 1 and took < EXIT_BOUND_S


def test_bare_eof_mid_index_stops_everything(repo: Path) -> None:
    _add_modules(repo)
    server = RawServer(repo)
    server.initialize({"mcp": False}, {"window": {"workDoneProgress": True}})
    # wait until the build worker runs, then hang up
    deadline = time.monotonic() + 30
    while not server.children() and time.monotonic() < deadline:
        server.request("neuralmind/status", {})
    workers = server.children()
    assert workers, "no build worker was started"
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    code, took = server.wait_exit()
    assert code == 0 and took < EXIT_BOUND_S
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(
            f"/proc/{pid}/status").read_text().lower()
    assert _no_temp_files(repo) == []


def _add_modules(repo: Path, n: int = 60) -> None:
    """Enough files that the first build is still running when the test acts."""
    for i in range(n):
        (repo / "pkg" / f"mod{i}.py").parent.mkdir(exist_ok=True)
        (repo / "pkg" / f"mod{i}.py").write_text(
            "\n".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(30)))


def test_cancelling_progress_stops_the_build(repo: Path) -> None:
    _add_modules(repo)
    server = RawServer(repo)
    server.initialize({"mcp": False}, {"window": {"workDoneProgress": True}})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (
            server.children() and any(r["method"] == "window/workDoneProgress/create"
                                      for r in server.server_requests)):
        server.request("neuralmind/status", {})
    [create] = [r for r in server.server_requests if r["method"] == "window/workDoneProgress/create"]
    workers = server.children()
    during = server.request("neuralmind/context", {"query": "f1_2 adds two"})["result"]
    assert during["partial"] is True and during["indexing"]["phase"]   # answers, and says so
    token = create["params"]["token"]
    server.notify("window/workDoneProgress/cancel", {"token": token})
    while time.monotonic() < deadline:
        ends = [n for n in server.notifications if n.get("method") == "$/progress"
                and n["params"]["value"].get("kind") == "end"]
        if ends:
            break
        server.request("neuralmind/status", {})
    assert ends and ends[0]["params"]["value"]["message"] == "cancelled"
    status = server.request("neuralmind/status", {})["result"]
    assert status["indexing"] is None
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(
            f"/proc/{pid}/status").read_text().lower()
    server.request("shutdown", None)
    server.notify("exit", None)
    assert server.wait_exit()[0] == 0
    assert _no_temp_files(repo) == []


def test_bad_settings_warn_and_fall_back(repo: Path) -> None:
    server = RawServer(repo)
    server.initialize({"neuralmind": {"budget": "lots", "colour": "blue", "learning": False}})
    status = server.request("neuralmind/status", {})["result"]
    warnings = [n["params"]["message"] for n in server.notifications
                if n.get("method") == "window/showMessage"]
    assert any("budget" in w for w in warnings) and any("colour" in w for w in warnings)
    assert status["learning"]["enabled"] is False         # the valid key still applied
    ctx = server.request("neuralmind/context", {"query": "invoice total"})["result"]
    assert ctx["tokens"] <= 1500                          # default budget
    server.notify("workspace/didChangeConfiguration", {"settings": {"debounceSeconds": -1}})
    assert server.request("neuralmind/status", {})["result"]["nodes"] >= 0
    server.request("shutdown", None)
    server.notify("exit", None)
    assert server.wait_exit()[0] == 0
    messages = [n["params"]["message"] for n in server.notifications
                if n.get("method") == "window/showMessage"]
    assert any("debounce_seconds" in m for m in messages)


def test_neuralmind_lsp_subcommand_serves(repo: Path) -> None:
    server = RawServer(repo, [sys.executable, "-m", "neuralmind.cli.main", "lsp", "--stdio"])
    answer = server.initialize({"mcp": False})
    assert answer["result"]["serverInfo"]["name"] == "neuralmind"
    server.request("shutdown", None)
    server.notify("exit", None)
    assert server.wait_exit()[0] == 0


def test_mcp_endpoint_lives_and_dies_with_the_server(repo: Path) -> None:
    server = RawServer(repo)
    server.initialize({"mcp": True})
    deadline = time.monotonic() + 30
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        status = server.request("neuralmind/status", {})["result"]
        if status["mcp_endpoint"]:
            break
    assert status["mcp_endpoint"], "the MCP endpoint never came up"
    assert status["mcp_endpoint"].startswith("http://127.0.0.1:")
    discovery = repo / ".neuralmind" / "mcp.json"
    assert discovery.exists()
    assert server.proc.stdin is not None
    server.proc.stdin.close()                      # bare EOF: MCP must stop too
    code, took = server.wait_exit()
    assert code == 0 and took < EXIT_BOUND_S
    assert not discovery.exists()
