"""The one error type the engine raises for bad requests.

Adapters translate it: the CLI prints the message and exits 2, the LSP server
answers InvalidParams, the MCP server returns a tool error carrying `code`.
"""

from __future__ import annotations


class EngineError(ValueError):
    """A request the engine refuses, with a stable machine-readable `code`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
