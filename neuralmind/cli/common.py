"""What the command modules share: the PATH argument, JSON output, build progress."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from neuralmind import engine  # `engine.Workspace` is imported on first use (~50 ms)
from neuralmind.errors import InvalidArgument

if TYPE_CHECKING:
    from neuralmind.engine import Workspace


def root_argument(path: str | None) -> Path:
    """The PATH argument of a command: an existing directory, resolved."""
    p = Path(path or ".").expanduser()
    if not p.exists():
        raise InvalidArgument(f"{p}: no such directory")
    if not p.is_dir():
        raise InvalidArgument(f"{p}: not a directory")
    return p.resolve()


def open_workspace(path: str | None) -> Workspace:
    """The Workspace of the PATH argument; what the command does reaches the project's event
    log (a running observatory shows it)."""
    # the event log (~15 ms of imports) only when this process opens the engine: a command
    # the warm server answers never loads it
    from neuralmind.events.log import enable_event_log

    root = root_argument(path)
    enable_event_log(root, "cli")
    return engine.Workspace(root)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


class Progress:
    """Build progress on stderr: one rewritten line on a terminal, plain lines otherwise."""

    PHASES = {"walk": "scanning files", "extract": "parsing", "resolve": "resolving references",
              "communities": "finding communities", "save": "saving", "embed": "embedding"}

    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr   # read now: a caller may have replaced sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty()
        self._last_phase = ""
        self._last_time = 0.0
        self._width = 0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.quiet:
            return
        label = self.PHASES.get(phase, phase)
        if self.tty:
            if total > 1:
                filled = int(30 * done / total)
                text = f"{label:<22} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}"
            else:
                text = f"{label}…"
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._width = len(text)
            self.stream.flush()
            return
        # Plain lines: each phase once, and parsing at most every 2 s.
        now = time.monotonic()
        if phase != self._last_phase or (done == total and total > 1) or now - self._last_time >= 2:
            if phase == self._last_phase and total <= 1:
                return
            counts = f" {done}/{total}" if total > 1 else ""
            self.stream.write(f"{label}{counts}\n")
            self.stream.flush()
            self._last_phase, self._last_time = phase, now

    def finish(self) -> None:
        if self.tty and not self.quiet and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
