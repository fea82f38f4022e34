"""Hover: the decisions governing the symbol under the cursor, the memories about it, and its
strongest associations."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from neuralmind.lsp.params import translate_errors
from neuralmind.lsp.server import Feature


def render(info: dict[str, Any]) -> str | None:
    sym = info.get("symbol")
    if sym is None:
        return None
    lines = [f"**{sym['name']}** ({sym['kind']}, lines {sym['line']}-{sym['end_line']})"]
    if info["decisions"]:
        lines.append("")
        lines.append("Decisions:")
        for d in info["decisions"]:
            extra = f" — {d['reason']}" if d.get("reason") and d["status"] != "ACTIVE" else ""
            lines.append(f"- [{d['status']}] {d['title']} (`{d['id'][:12]}`){extra}")
    if info.get("memories"):
        lines.append("")
        lines.append("Memories:")
        for m in info["memories"]:
            state = f", {m['state']}" if m["state"] != "active" else ""
            lines.append(f"- [{m['type']}{state}] {m['label']} (`{m['id'][:12]}`)")
    if info["associations"]:
        lines.append("")
        lines.append("Often used with:")
        for a in info["associations"]:
            lines.append(f"- `{a['id']}` ({a['weight']:.2f})")
    if len(lines) == 1:
        return None   # nothing NeuralMind-specific to say; let other servers' hovers speak
    return "\n".join(lines)


class Hover(Feature):
    """The decisions governing the symbol under the cursor and its strongest associations."""

    def register(self) -> None:
        server = self.server

        @server.feature(types.TEXT_DOCUMENT_HOVER)
        @translate_errors
        async def hover(params: types.HoverParams) -> types.Hover | None:
            rel = server.uri_to_rel(params.text_document.uri)
            service = await server.ready_service()
            info = await service.hover(rel, params.position.line + 1)
            text = render(info)
            if text is None:
                return None
            return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                            value=text))
