"""A raw LSP client over a real `neuralmind-lsp --stdio` process: whole frames, broken
frames, and kill -9 at the moment of our choosing (pytest-lsp cannot send bad bytes)."""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from reliability_support import ENV


class LspProcess:
    def __init__(self, root: Path, extra_env: dict[str, str] | None = None,
                 wrap: list[str] | None = None) -> None:
        """`wrap`: argv whose last item (a `sh -c` script) gets the server command appended."""
        self.root = root
        argv = [sys.executable, "-m", "neuralmind.cli.server_cmds", "--stdio"]
        self.proc = subprocess.Popen(
            [*wrap[:-1], f"{wrap[-1]} {shlex.join(argv)}"] if wrap else argv, cwd=root,
            env={**ENV, **(extra_env or {})}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        self._next = 0
        self._responses: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self.notifications: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # --- wire ------------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode("utf-8")
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, "params": params})

    def request_async(self, method: str, params: Any = None) -> int:
        self._next += 1
        self.send({"id": self._next, "method": method, "params": params})
        return self._next

    def wait(self, rid: int, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while rid not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise AssertionError(f"no response to request {rid} (exit {self.proc.poll()})"
                                         f"\n{self.stderr_text()[-3000:]}")
                self._cond.wait(min(left, 0.2))
            return self._responses.pop(rid)

    def request(self, method: str, params: Any = None, timeout: float = 60.0) -> dict[str, Any]:
        return self.wait(self.request_async(method, params), timeout)

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            headers: dict[str, str] = {}
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode("ascii", "replace").partition(":")
                headers[k.strip().lower()] = v.strip()
            body = out.read(int(headers.get("content-length", "0")))
            msg = json.loads(body)
            if "id" in msg and "method" in msg:        # a request from the server
                self.send({"id": msg["id"], "result": None})
            elif "id" in msg:
                with self._cond:
                    self._responses[msg["id"]] = msg
                    self._cond.notify_all()
            else:
                self.notifications.put(msg)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def stderr_text(self) -> str:
        return b"".join(self.stderr).decode("utf-8", "replace")

    # --- lifecycle -------------------------------------------------------------------------
    def initialize(self, options: dict[str, Any] | None = None) -> dict[str, Any]:
        uri = self.root.as_uri()
        reply = self.request("initialize", {
            "processId": os.getpid(), "rootUri": uri, "capabilities": {},
            "workspaceFolders": [{"uri": uri, "name": self.root.name}],
            "initializationOptions": options or {}})
        self.notify("initialized", {})
        return reply

    def wait_ready(self, timeout: float = 90.0) -> dict[str, Any]:
        """Until the background build (if any) is over: status says not indexing."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.request("neuralmind/status", {})["result"]
            if not status.get("indexing") and status.get("last_full_build"):
                return status
            if time.monotonic() > deadline:
                raise AssertionError(f"index never ready: {status}")
            time.sleep(0.1)

    def kill9(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def shutdown(self) -> int:
        if self.proc.poll() is None:
            try:
                self.request("shutdown", None, timeout=10)
                self.notify("exit")
                return self.proc.wait(10)
            except (AssertionError, OSError, subprocess.TimeoutExpired):
                self.kill9()
        return self.proc.returncode

    def doc(self, rel: str) -> str:
        return (self.root / rel).as_uri()
