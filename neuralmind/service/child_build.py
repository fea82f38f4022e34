"""Runs the full build in a child process and relays its events to the event loop.

See `build_worker` for why the build is a process. The parent reads the
child's JSON lines asynchronously (the loop never blocks on the pipe) and
forwards them to callbacks; `cancel()` kills the child.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("neuralmind.service")

KILL_GRACE_SECONDS = 0.5


@dataclass
class BuildOutcome:
    ok: bool
    cancelled: bool = False
    code: str = ""
    message: str = ""
    files: int = 0
    nodes: int = 0
    seconds: float = 0.0


ProgressCb = Callable[[str, int, int], None]
ReadyCb = Callable[[dict[str, Any]], Awaitable[None]]
SavedCb = Callable[[int], Awaitable[None]]


class ChildBuild:
    """One full build in a child process."""

    def __init__(self, root: Path, config_values: dict[str, Any], embed: bool = True,
                 log_file: str | None = None) -> None:
        self.root = root
        self.config_values = config_values
        self.embed = embed
        self.log_file = log_file
        self._proc: asyncio.subprocess.Process | None = None
        self._cancelled = False
        self._attention: list[str] = []

    async def run(self, on_progress: ProgressCb, on_graph_ready: ReadyCb,
                  on_vectors: SavedCb | None = None) -> BuildOutcome:
        cmd = [sys.executable, "-m", "neuralmind.service.build_worker", str(self.root),
               "--config", json.dumps(self.config_values)]
        if not self.embed:
            cmd.append("--no-embed")
        if self.log_file:
            cmd += ["--log-file", self.log_file]
        env = dict(os.environ)
        env.setdefault("ORT_DISABLE_TELEMETRY", "1")
        self._proc = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=None, env=env, cwd=str(self.root), start_new_session=True)
        if self._attention:
            self.attend(self._attention)
        outcome: BuildOutcome | None = None
        assert self._proc.stdout is not None
        try:
            while True:
                line = await self._proc.stdout.readline()
                if not line:
                    break
                try:
                    event = json.loads(line)
                except ValueError:
                    log.debug("build worker: %s", line.decode(errors="replace").rstrip())
                    continue
                kind = event.get("event")
                if kind == "progress":
                    on_progress(str(event.get("phase", "")), int(event.get("done", 0)),
                                int(event.get("total", 0)))
                elif kind == "graph_ready":
                    await on_graph_ready(event)
                elif kind == "vectors_saved" and on_vectors is not None:
                    await on_vectors(int(event.get("vectors", 0)))
                elif kind == "done":
                    outcome = BuildOutcome(True, files=int(event.get("files", 0)),
                                           nodes=int(event.get("nodes", 0)),
                                           seconds=float(event.get("seconds", 0.0)))
                elif kind == "error":
                    outcome = BuildOutcome(False, code=str(event.get("code", "")),
                                           message=str(event.get("message", "")))
        except asyncio.CancelledError:
            await self.stop()
            raise
        rc = await self._proc.wait()
        if self._cancelled:
            return BuildOutcome(False, cancelled=True, code="cancelled", message="cancelled")
        if outcome is None:
            return BuildOutcome(False, code="build_failed",
                                message=f"the build process exited with status {rc}")
        return outcome

    def attend(self, files: list[str]) -> None:
        """Ask the child to embed these files' nodes first (best effort: a child that
        ended or never reads them changes nothing)."""
        self._attention = list(files)
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            return
        try:
            proc.stdin.write((json.dumps({"attention": self._attention}) + "\n").encode())
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            pass

    async def stop(self) -> None:
        """Stop the child: SIGTERM lets it remove its temp files, SIGKILL if it lingers."""
        self._cancelled = True
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        self._signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), timeout=KILL_GRACE_SECONDS)
        except TimeoutError:
            self._signal(signal.SIGKILL)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), timeout=KILL_GRACE_SECONDS)

    def _signal(self, sig: int) -> None:
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None
