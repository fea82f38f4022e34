"""Shared attention, the editor's side: the `neuralmind/editorState` notification clients send
(debounced) with the active file, the selection, the visible ranges, the open files and the
active file's diagnostics; and revealing a range for an agent (`window/showDocument`, with the
agent's note as `neuralmind/revealNote` for clients that declare it, else a message).

Only translation happens here: URIs become workspace paths (others are dropped) and LSP's
0-based positions 1-based lines; the engine validates and keeps the state
(`engine/attention.py`). This feature is the service's `editor_link` while the editor is
attached, so MCP's `neuralmind_editor_state` and `neuralmind_reveal` reach this editor.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from neuralmind.lsp.server import Feature

if TYPE_CHECKING:
    from neuralmind.lsp.server import NeuralMindServer

log = logging.getLogger("neuralmind.lsp")

METHOD = "neuralmind/editorState"
NOTE_METHOD = "neuralmind/revealNote"
NOTE_CAPABILITY = "revealNote"      # experimental.neuralmind.revealNote: the client shows notes


def _path(uri: Any) -> str | None:
    if not isinstance(uri, str) or not uri.startswith("file:"):
        return None
    return to_fs_path(uri)


def _lines(rng: Any) -> dict[str, int] | None:
    """An LSP range as 1-based first and last lines (an end at character 0 of a later line
    stops on the line before: a selection of whole lines)."""
    try:
        start, end = rng["start"], rng["end"]
        first, last = int(start["line"]) + 1, int(end["line"]) + 1
        if last > first and int(end.get("character", 1)) == 0:
            last -= 1
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return {"start_line": first, "end_line": max(first, last)} if first >= 1 else None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def translate(params: Any) -> dict[str, Any]:
    """The notification's params as the engine's report (see the module docstring)."""
    p = params if isinstance(params, dict) else {}
    out: dict[str, Any] = {"active_file": _path(p.get("activeFile"))}
    sel = p.get("selection")
    if isinstance(sel, dict) and (lines := _lines(sel)) is not None:
        out["selection"] = {**lines, "text": sel.get("text") if isinstance(sel.get("text"), str)
                            else ""}
    out["visible"] = [r for r in map(_lines, _items(p.get("visibleRanges"))) if r]
    out["open_files"] = [f for f in map(_path, _items(p.get("openFiles"))) if f]
    diagnostics = []
    for d in _items(p.get("diagnostics")):
        if isinstance(d, dict) and (lines := _lines(d.get("range"))) is not None:
            diagnostics.append({**lines, "message": str(d.get("message") or ""),
                                "severity": d.get("severity"), "source": d.get("source"),
                                "code": d.get("code")})
    out["diagnostics"] = diagnostics
    return out


class EditorState(Feature):
    """Receives the editor's state; reveals ranges for agents (the service's editor link)."""

    def __init__(self, server: NeuralMindServer) -> None:
        super().__init__(server)
        self.reports = 0

    def register(self) -> None:
        server = self.server

        @server.feature(METHOD)
        async def editor_state(params: Any) -> None:
            service = server.service
            if service is None:
                return
            self.reports += 1
            try:
                await service.report_editor_state(translate(params))
            except Exception as e:   # a notification cannot answer: log and keep the last one
                log.warning("ignoring an editor state: %s", e)

    async def ready(self) -> None:
        service = self.server.require_service()
        service.editor_link = self

    async def close(self) -> None:
        if self.server.service is not None and self.server.service.editor_link is self:
            self.server.service.editor_link = None

    def _notes_supported(self) -> bool:
        caps = getattr(self.server.protocol, "client_capabilities", None)
        experimental = getattr(caps, "experimental", None)
        nm = experimental.get("neuralmind") if isinstance(experimental, dict) else None
        return bool(isinstance(nm, dict) and nm.get(NOTE_CAPABILITY))

    async def reveal(self, rel: str, line: int, end_line: int, note: str | None) -> dict[str, Any]:
        """Open `rel` and select `line`..`end_line` (1-based, whole lines); show `note`."""
        server = self.server
        uri = server.rel_to_uri(rel)
        if not server.client_supports("window", "show_document", "support"):
            return {"shown": False, "note_shown": False,
                    "reason": "this editor does not support window/showDocument"}
        selection = types.Range(start=types.Position(line=line - 1, character=0),
                                end=types.Position(line=end_line, character=0))
        result = await server.window_show_document_async(
            types.ShowDocumentParams(uri=uri, take_focus=True, selection=selection))
        shown = bool(result and result.success)
        note_shown = False
        if note and shown:
            if self._notes_supported():
                server.protocol.notify(NOTE_METHOD, {"uri": uri, "line": line,
                                                     "end_line": end_line, "note": note})
            else:
                server.window_show_message(types.ShowMessageParams(
                    type=types.MessageType.Info, message=f"NeuralMind (agent): {note}"))
            note_shown = True
        return {"shown": shown, "note_shown": note_shown}
