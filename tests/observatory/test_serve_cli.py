"""`neuralmind serve` as a user runs it: a real process that prints a one-time login URL and
serves until interrupted; a second one borrows the first's page instead of serving twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from observatory_support import make_observed_repo
from sample_workspace import GIT_ENV

from neuralmind.discovery import discovery_path

CLI = [sys.executable, "-m", "neuralmind.cli.main"]
ENV = {**os.environ, **GIT_ENV, "ORT_DISABLE_TELEMETRY": "1"}


def read_url(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[str, list[str]]:
    """The login URL the command prints, and the lines before it."""
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("Observatory: "):
            return line.split(" ", 1)[1].strip(), lines
    raise AssertionError(f"no login URL printed: {lines}")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def status_of(url: str) -> int:
    opener = urllib.request.build_opener(NoRedirect)
    try:
        return opener.open(url, timeout=10).status
    except urllib.error.HTTPError as e:
        return e.code


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_observed_repo(tmp_path_factory.mktemp("serve") / "shop")


def test_serve_prints_a_login_url_and_a_second_serve_borrows_the_first(repo: Path) -> None:
    first = subprocess.Popen([*CLI, "serve", str(repo), "--no-browser"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, env=ENV)
    try:
        url, lines = read_url(first)
        assert url.startswith("http://127.0.0.1:") and "/observatory/login?ticket=" in url
        assert any(line.startswith(f"Serving {repo}") for line in lines)
        assert discovery_path(repo).exists()           # agents' `neuralmind mcp` bridge here
        assert status_of(url) == 303 and status_of(url) == 401      # the ticket works once
        second = subprocess.Popen([*CLI, "serve", str(repo), "--no-browser"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  env=ENV)
        try:
            borrowed, said = read_url(second, 30)
            assert any("runs already" in line and str(first.pid) in line for line in said)
            assert borrowed.split("/observatory")[0] == url.split("/observatory")[0]
            assert status_of(borrowed) == 303
        finally:
            second.send_signal(signal.SIGINT)
            assert second.wait(timeout=10) == 0
    finally:
        first.send_signal(signal.SIGINT)
        code = first.wait(timeout=20)
    assert code == 0
    assert not discovery_path(repo).exists()           # gone with the server
