"""The MCP server object: NeuralMind's tools and the instructions that say when to call them.

Transport-free: `http.py` serves it on loopback inside the editor's process,
`stdio.py` serves it (or bridges to a live one) for agents that spawn servers.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

from neuralmind import __version__
from neuralmind.mcp.roles import read_only_refusal
from neuralmind.mcp.tools import NeuralMindTools, error_result

if TYPE_CHECKING:
    from neuralmind.service.engine_service import EngineService

log = logging.getLogger("neuralmind.mcp")

INSTRUCTIONS = """\
NeuralMind knows this code base: a code graph, hybrid search, associations learned from \
how the project is edited, and recorded design decisions. Use it to read less and to \
avoid undoing deliberate choices.
- Session start: call neuralmind_wakeup once (project identity and map, ~600 tokens).
- Before reading files for a task: call neuralmind_query with the task in plain words; it \
returns the relevant code with file:line in ~1,500 tokens (pass include_wakeup=false once you \
have the wake-up pack). Open whole files only if that is not enough. neuralmind_search just \
locates symbols.
- Before editing a file a past decision may govern, or changing an approach: call \
neuralmind_decisions_query (or neuralmind_memory_search -> neuralmind_memory_timeline -> \
neuralmind_memory_get for a cheap, progressive look).
- After changing a file: neuralmind_next_likely lists the files that usually change with it; \
before finishing the change, neuralmind_review lists the files it probably misses and the \
decisions it puts at risk.
- To see what the user is looking at: neuralmind_editor_state; to show them code: neuralmind_reveal.
- After finishing a task: call neuralmind_feedback on the hits that helped (or misled); \
record non-obvious choices with neuralmind_decision_record.
- If results look empty or stale: neuralmind_status.
Paths are relative to the workspace root; errors carry a code (invalid_argument, \
invalid_path, not_indexed, not_found, semantic_unavailable, read_only, store_unavailable)."""

READ_ONLY_NOTE = ("\nThis server is read-only: recording tools (feedback, decision recording) "
                  "are refused.")


class NeuralMindMCP(MCPServer):
    """MCPServer whose tool errors always carry a code.

    The SDK reports arguments that fail the input schema as plain text; agents get
    `invalid_argument` with the offending fields instead. A recording tool called on a
    read-only server is refused as `read_only` rather than as an unknown tool.
    """

    def __init__(self, tools: NeuralMindTools, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.neuralmind_tools = tools

    async def serve_streams(self, read_stream: Any, write_stream: Any) -> None:
        """Serve one connection over message streams (stdio with descriptors we own)."""
        low = self._lowlevel_server
        await low.run(read_stream, write_stream, low.create_initialization_options())

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        tools = self.neuralmind_tools
        if tools.read_only and name in tools.RECORDING_TOOLS:
            return error_result("read_only", read_only_refusal(name))
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            log.exception("tool %s crashed", name)
            return error_result("internal_error", f"{name} failed unexpectedly; see the server log")
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, ValidationError):
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                    for err in cause.errors(include_url=False, include_input=False))
                return error_result("invalid_argument", problems)
            return error_result("invalid_argument", str(e))


@contextlib.contextmanager
def _root_logging_untouched() -> Iterator[None]:
    """MCPServer() calls logging.basicConfig on the root logger; undo it.

    It also imports `rich` for a RichHandler when it can: megabytes for a handler
    removed right here, and, in a process started with `python -m` from the project
    root (sys.path[0] is then the root), the *workspace's* own `rich` package would
    run. So `rich`, unless loaded already, is unimportable while the server is made.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    block_rich = "rich" not in sys.modules
    if block_rich:
        sys.modules["rich"] = None  # type: ignore[assignment] - None makes an import fail
    try:
        yield
    finally:
        if block_rich and "rich" in sys.modules and sys.modules["rich"] is None:
            del sys.modules["rich"]
        for h in list(root.handlers):
            if h not in handlers:
                root.removeHandler(h)
        root.setLevel(level)


def build_mcp_server(service: EngineService, read_only: bool = False) -> NeuralMindMCP:
    """The MCP server over `service`; `read_only` lists and serves only consulting tools."""
    tools = NeuralMindTools(service, read_only=read_only)
    with _root_logging_untouched():
        server = NeuralMindMCP(tools, name="neuralmind", title="NeuralMind",
                               instructions=INSTRUCTIONS + (READ_ONLY_NOTE if read_only else ""),
                               version=__version__, log_level="WARNING")
    for name, fn, hints in tools.functions():
        server.add_tool(fn, name=name, description=inspect.cleandoc(fn.__doc__ or ""),
                        annotations=hints, structured_output=True)
    return server

