"""workspace/symbol from the graph (names) and the search index (meaning)."""

from __future__ import annotations

from lsprotocol import types

from neuralmind.config import MAX_SYMBOLS
from neuralmind.lsp.params import translate_errors
from neuralmind.lsp.server import Feature

KINDS = {
    "module": types.SymbolKind.Module, "class": types.SymbolKind.Class,
    "struct": types.SymbolKind.Struct, "interface": types.SymbolKind.Interface,
    "trait": types.SymbolKind.Interface, "enum": types.SymbolKind.Enum,
    "function": types.SymbolKind.Function, "method": types.SymbolKind.Method,
    "section": types.SymbolKind.String, "file": types.SymbolKind.File,
}


class WorkspaceSymbols(Feature):
    """workspace/symbol from the graph (names) and the search index (meaning)."""

    def register(self) -> None:
        server = self.server

        @server.feature(types.WORKSPACE_SYMBOL)
        @translate_errors
        async def workspace_symbol(params: types.WorkspaceSymbolParams
                                   ) -> list[types.SymbolInformation]:
            service = await server.ready_service()
            found = await service.symbols(params.query[:500], MAX_SYMBOLS)
            out: list[types.SymbolInformation] = []
            for s in found:
                start = types.Position(line=max(0, s["line"] - 1), character=0)
                end = types.Position(line=max(0, s["end_line"] - 1), character=0)
                parent, _, name = s["name"].rpartition(".")
                out.append(types.SymbolInformation(
                    name=name, kind=KINDS.get(s["kind"], types.SymbolKind.Variable),
                    location=types.Location(uri=server.rel_to_uri(s["file"]),
                                            range=types.Range(start=start, end=end)),
                    container_name=parent or s["file"]))
            return out
