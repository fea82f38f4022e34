"""The shared attention of EngineService: the review of the pending change, the editor's state
for agents, and revealing a place in the editor on an agent's behalf.

A mixin of EngineService (one job per file). The editor's server links itself here
(`editor_link`, set by the LSP's editor-state feature): without that link (a standalone
`neuralmind mcp` process, the CLI) there is no editor state to serve and nothing to reveal,
and the answer says so with the code `no_editor`; the setting `editor_state = false` turns
both off (`editor_state_off`). The buffers the editor holds unsaved are tracked from its
document notifications; a review reads their texts from the server's own open documents
(service/buffers.py), a text a client sends with the request taking precedence.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from neuralmind.errors import EngineError, InvalidArgument

if TYPE_CHECKING:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.service.buffers import Buffers


class EditorLink(Protocol):
    """What the editor's server offers agents: showing a range, with an optional note."""

    async def reveal(self, rel: str, line: int, end_line: int, note: str | None) -> dict[str, Any]:
        """Open `rel` and select lines `line`..`end_line` (1-based); {shown, note_shown}."""
        ...


class AttentionRequests:
    """Review, editor state and reveal; unsaved buffers."""

    # provided by EngineService
    _call: Callable[..., Awaitable[Any]]
    _notify: Callable[..., None]
    resolve: Callable[[str], str]
    config: WorkspaceConfig
    editor_link: EditorLink | None
    unsaved: dict[str, str | None]
    buffers: Buffers

    # --- unsaved buffers ------------------------------------------------------------------
    def buffer_changed(self, rel: str) -> None:
        """`rel` has unsaved changes (called on every keystroke: O(1) once it is known)."""
        if rel not in self.unsaved:
            self.unsaved[rel] = None
            self._notify("buffers_changed")

    def buffer_clean(self, rel: str) -> None:
        """`rel` was saved or closed: its buffer no longer differs from the disk."""
        if self.unsaved.pop(rel, "clean") != "clean":
            self._notify("buffers_changed")

    # --- review -----------------------------------------------------------------------------
    async def review(self, base: str | None = None, buffers: Mapping[str, str] | None = None,
                     min_confidence: float | None = None) -> dict[str, Any]:
        """The review of the working tree, the unsaved buffers and any buffer texts a client
        sends (path -> text): missing partners and decisions at risk."""
        unsaved = dict(self.unsaved)                         # copied on the loop
        sent = {self.resolve(p): t for p, t in (buffers or {}).items()}
        held = self.buffers.texts()                          # the editor's open documents

        def call(ws: Any) -> Any:
            return ws.review(base, {**unsaved, **held(), **sent}, min_confidence)

        result = await self._call(call)
        return result.to_json()

    # --- the editor's state, for agents -----------------------------------------------------
    def _editor_shared(self) -> None:
        if not self.config.editor_state:
            raise EngineError("editor_state_off", "sharing the editor's state with agents is "
                                                  "turned off (setting editorState)")
        if self.editor_link is None:
            raise EngineError("no_editor", "no editor is connected to this NeuralMind server "
                                           "(editor state comes from the editor's server)")

    async def report_editor_state(self, raw: Any) -> None:
        """Keep what the editor reports (ignored while the setting is off)."""
        if self.config.editor_state:
            await self._call(lambda ws: ws.report_editor_state(raw))

    async def editor_state(self) -> dict[str, Any]:
        self._editor_shared()
        out: dict[str, Any] = await self._call(lambda ws: ws.editor_state())
        return out

    async def reveal(self, path: str, line: int, end_line: int | None = None,
                     note: str | None = None) -> dict[str, Any]:
        """Ask the editor to open `path` and select `line`..`end_line` (1-based), showing
        `note`; the file must exist in the workspace."""
        self._editor_shared()
        assert self.editor_link is not None
        rel = self.resolve(path)
        end = line if end_line is None else end_line
        if line < 1 or end < line:
            raise InvalidArgument("line must be 1 or more and end_line at least line")
        exists = await self._call(lambda ws: (ws.root / rel).is_file())
        if not exists:
            raise EngineError("not_found", f"{rel} is not a file of the workspace")
        shown = await self.editor_link.reveal(rel, line, end, (note or "").strip() or None)
        return {"file": rel, "line": line, "end_line": end, **shown}
