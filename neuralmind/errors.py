"""The one error type adapters see: `EngineError(code, message)`.

Every component error a request can cause is an `EngineError` subclass with a stable
`code` (the decision store's, git's, the model's, the CLI's own usage errors). Each
adapter maps codes in one place: the CLI to an exit status (`cli/main.py`), the LSP
server to InvalidParams carrying the code (`lsp/params.py`), the MCP server to a tool
error carrying the code (`mcp/tools.py`). Nothing else is translated on the way.
"""

from __future__ import annotations


class EngineError(Exception):
    """A request the engine refuses or cannot serve, with a stable machine-readable `code`."""

    code = "internal_error"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class CodedError(EngineError):
    """Base of the component errors whose code is fixed by their class."""

    def __init__(self, message: str) -> None:
        super().__init__(type(self).code, message)


class InvalidArgument(CodedError, ValueError):
    """Bad input: a malformed value, an unknown mode or status (also a ValueError)."""

    code = "invalid_argument"


class NotFound(CodedError):
    """An id, node or record that does not exist."""

    code = "not_found"
