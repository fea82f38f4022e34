"""Shared attention: what the editor shows, kept for agents, and the trail of where it went.

The editor reports its state (debounced by the client): the active file, the selection (its
text clipped to EDITOR_SELECTION_CHARS), the visible ranges, the open files and the active
file's diagnostics from every source. The engine keeps the last report, the symbol under the
selection (from the code graph), and a navigation trail of the last EDITOR_TRAIL files and
symbols visited; an agent reads them through MCP `neuralmind_editor_state`. Paths are
confined to the workspace like every client path; lines are 1-based.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from neuralmind.config import (
    EDITOR_MAX_DIAGNOSTICS,
    EDITOR_MAX_FILES,
    EDITOR_MAX_RANGES,
    EDITOR_SELECTION_CHARS,
    EDITOR_TRAIL,
)
from neuralmind.errors import EngineError, InvalidArgument

Resolve = Callable[[str], str]          # a client path -> repo-relative (EngineError outside)
SymbolAt = Callable[[str, int], "dict[str, Any] | None"]

SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}
MAX_MESSAGE_CHARS = 500


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


def _line(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(f"{what} must be a line number (1 or more)")
    return value


def _span(raw: Any, what: str) -> tuple[int, int]:
    if not isinstance(raw, dict):
        raise InvalidArgument(f"{what} must be an object with start_line and end_line")
    start = _line(raw.get("start_line"), f"{what}.start_line")
    end = _line(raw.get("end_line", start), f"{what}.end_line")
    return start, max(start, end)


def _list(raw: Any, what: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InvalidArgument(f"{what} must be a list")
    return raw


class Attention:
    """The editor's last reported state and the navigation trail (engine-thread only)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.state: dict[str, Any] | None = None
        self.trail: deque[dict[str, Any]] = deque(maxlen=EDITOR_TRAIL)

    def report(self, raw: Any, resolve: Resolve, symbol_at: SymbolAt) -> dict[str, Any]:
        """Validate and keep one editor report; InvalidArgument (nothing kept) when malformed.

        Files outside the workspace are left out (the active one becomes None): an agent
        sees only what belongs to the project."""
        if not isinstance(raw, dict):
            raise InvalidArgument("the editor state must be an object")
        now = self.clock()
        active = self._path(raw.get("active_file"), resolve)
        selection = None
        if raw.get("selection") is not None and active is not None:
            start, end = _span(raw["selection"], "selection")
            text = raw["selection"].get("text") or ""
            if not isinstance(text, str):
                raise InvalidArgument("selection.text must be a string")
            selection = {"start_line": start, "end_line": end,
                         "text": text[:EDITOR_SELECTION_CHARS],
                         "truncated": len(text) > EDITOR_SELECTION_CHARS}
        visible = [dict(zip(("start_line", "end_line"), _span(r, "visible"), strict=True))
                   for r in _list(raw.get("visible"), "visible")[:EDITOR_MAX_RANGES]]
        opened = [p for p in (self._path(f, resolve) for f in
                              _list(raw.get("open_files"), "open_files")[:EDITOR_MAX_FILES]) if p]
        diagnostics = [self._diagnostic(d) for d in
                       _list(raw.get("diagnostics"), "diagnostics")[:EDITOR_MAX_DIAGNOSTICS]]
        symbol = None
        if active is not None:
            line = selection["start_line"] if selection else (visible[0]["start_line"]
                                                              if visible else None)
            symbol = symbol_at(active, line) if line else None
        self.state = {"active_file": active, "symbol": symbol, "selection": selection,
                      "visible": visible, "open_files": list(dict.fromkeys(opened)),
                      "diagnostics": diagnostics if active else [], "updated_at": _iso(now)}
        self._visit(active, symbol, selection, now)
        return self.state

    @staticmethod
    def _path(value: Any, resolve: Resolve) -> str | None:
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise InvalidArgument("file paths must be strings")
        try:
            return resolve(value)
        except EngineError:
            return None

    @staticmethod
    def _diagnostic(raw: Any) -> dict[str, Any]:
        start, end = _span(raw, "diagnostic")
        severity = raw.get("severity")
        message = raw.get("message")
        if not isinstance(message, str):
            raise InvalidArgument("diagnostic.message must be a string")
        code = raw.get("code")
        return {"start_line": start, "end_line": end,
                "severity": SEVERITIES.get(severity, "information") if isinstance(severity, int)
                else "information",
                "message": message[:MAX_MESSAGE_CHARS],
                "source": str(raw.get("source") or "")[:100],
                "code": None if code is None else str(code)[:100]}

    def _visit(self, active: str | None, symbol: dict[str, Any] | None,
               selection: dict[str, Any] | None, now: float) -> None:
        if active is None:
            return
        name = symbol["name"] if symbol else None
        last = self.trail[-1] if self.trail else None
        if last is not None and last["file"] == active and last["symbol"] == name:
            return
        line = symbol["line"] if symbol else (selection["start_line"] if selection else 1)
        self.trail.append({"file": active, "symbol": name, "line": line, "at": _iso(now)})

    def to_json(self) -> dict[str, Any]:
        """What an agent reads: the last report (None fields before the first) and the trail,
        newest visit first."""
        state = self.state or {"active_file": None, "symbol": None, "selection": None,
                               "visible": [], "open_files": [], "diagnostics": [],
                               "updated_at": None}
        return {**state, "trail": list(reversed(self.trail))}
