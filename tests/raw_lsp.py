"""A language-server process driven frame by frame over its stdio (JSON-RPC with
Content-Length headers), for tests that need the real process and its exact bytes, or
several servers at once (the LSP tests, the team's two-editor test)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sample_workspace import GIT_ENV

SERVER_ENV = {**os.environ, **GIT_ENV, "NEURALMIND_LOG": "info", "ORT_DISABLE_TELEMETRY": "1"}
EXIT_BOUND_S = 5.0   # the target is 2 s; this bound only catches hangs on a loaded CI box


def uri(path: Path) -> str:
    return path.resolve().as_uri()


class RawServer:
    """`neuralmind-lsp --stdio` driven frame by frame."""

    def __init__(self, root: Path, command: list[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            command or [sys.executable, "-m", "neuralmind.cli.server_cmds", "--stdio"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env or SERVER_ENV, cwd=root)
        self.root = root
        self.next_id = 0
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []

    def send(self, obj: dict[str, Any]) -> None:
        body = json.dumps(obj).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        out = self.proc.stdout
        assert out is not None
        length = None
        while True:
            line = out.readline()
            assert line, "the server closed stdout"
            if line == b"\r\n":
                break
            name, _, value = line.decode("ascii").partition(":")
            assert name.lower() in ("content-length", "content-type"), f"not a header: {line!r}"
            if name.lower() == "content-length":
                length = int(value)
        assert length is not None
        return json.loads(out.read(length))

    def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            msg = self.read()
            if msg.get("id") == self.next_id and "method" not in msg:
                return msg
            if "method" in msg and "id" in msg:      # a server->client request: accept it
                self.server_requests.append(msg)
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            else:
                self.notifications.append(msg)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, options: dict[str, Any] | None = None,
                   capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = self.request("initialize", {
            "processId": os.getpid(), "rootUri": uri(self.root), "capabilities":
            capabilities or {}, "initializationOptions": options})
        self.notify("initialized", {})
        return answer

    def wait_exit(self) -> tuple[int, float]:
        t0 = time.monotonic()
        code = self.proc.wait(timeout=EXIT_BOUND_S + 5)
        return code, time.monotonic() - t0

    def children(self) -> list[int]:
        try:
            text = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
        except OSError:
            return []
        return [int(p) for p in text.split()]

    def shut_down(self) -> None:
        """The LSP shutdown and exit, and a clean exit code."""
        assert self.request("shutdown", None)["result"] is None
        self.notify("exit", None)
        assert self.wait_exit()[0] == 0

    def kill(self) -> None:
        """The server and its children (a build child held stopped by a test) killed, so a
        failed test leaves no process behind."""
        for pid in self.children():
            os.kill(pid, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.kill()
