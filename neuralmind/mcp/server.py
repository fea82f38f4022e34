"""The MCP server object: NeuralMind's tools and the instructions that say when to call them.

Transport-free: `http.py` serves it on loopback inside the editor's process,
`stdio.py` serves it (or bridges to a live one) for agents that spawn servers.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import Tool as MCPTool
from mcp_types import ToolAnnotations
from pydantic import ValidationError

from neuralmind import __version__
from neuralmind.events import publish
from neuralmind.mcp.listing import first_paragraph, lean_annotations, lean_schema
from neuralmind.mcp.profiles import select
from neuralmind.mcp.roles import read_only_refusal
from neuralmind.mcp.tools import NeuralMindTools, error_result

if TYPE_CHECKING:
    from neuralmind.service.engine_service import EngineService

log = logging.getLogger("neuralmind.mcp")

def instructions(tools: list[str], read_only: bool = False) -> str:
    """The MCP `instructions`: when to call which tool, in three lines, naming only the
    tools this server lists."""
    have = set(tools)

    def named(*names: str) -> str:
        return " or ".join(n for n in names if n in have)

    lines = ["NeuralMind knows this code base: its graph, search, what is edited together, "
             "recorded decisions."]
    start = []
    if "neuralmind_wakeup" in have:
        start.append("Session start: neuralmind_wakeup.")
    if "neuralmind_query" in have:
        start.append("Before reading files for a task: neuralmind_query with the task "
                     "(include_wakeup=false after the wakeup), then open only what it names.")
    if "neuralmind_directives" in have:
        start.append("Follow neuralmind_directives.")
    if start:
        lines.append(" ".join(start))
    before = named("neuralmind_recall", "neuralmind_decisions_query", "neuralmind_memory_search")
    after = named("neuralmind_review", "neuralmind_next_likely")
    done = named("neuralmind_feedback")
    record = named("neuralmind_remember", "neuralmind_decision_record")
    editor = [n for n in ("neuralmind_editor_state", "neuralmind_reveal") if n in have]
    rate = (["Rate what neuralmind_recall returns: neuralmind_rate."]
            if {"neuralmind_recall", "neuralmind_rate"} <= have else [])
    rest = ([f"Before changing a design: {before}."] if before else []) + rate + \
        ([f"After edits: {after}."] if after else []) + \
        ([f"After a task: {done} on the hits that helped or misled"
          + (f"; {record} for non-obvious choices." if record else ".")] if done else []) + \
        ([f"The user's editor: {' and '.join(editor)}."] if editor else [])
    if rest:
        lines.append(" ".join(rest))
    if read_only:
        lines.append(READ_ONLY_NOTE)
    return "\n".join(lines)


READ_ONLY_NOTE = "This server is read-only: recording tools are refused."


class NeuralMindMCP(MCPServer):
    """MCPServer whose tool errors always carry a code.

    The SDK reports arguments that fail the input schema as plain text; agents get
    `invalid_argument` with the offending fields instead. A recording tool called on a
    read-only server is refused as `read_only` rather than as an unknown tool.
    """

    def __init__(self, tools: NeuralMindTools, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.neuralmind_tools = tools

    async def list_tools(self) -> list[MCPTool]:
        """The lean listing agents pay for on every turn (see `listing.py`)."""
        return [t.model_copy(update={
            "description": first_paragraph(t.description or ""),
            "input_schema": lean_schema(t.input_schema),
            "output_schema": None,
            "annotations": ToolAnnotations(**lean_annotations(t.name in self.neuralmind_tools.CONSULTING_TOOLS)),
        }) for t in await super().list_tools()]

    async def serve_streams(self, read_stream: Any, write_stream: Any) -> None:
        """Serve one connection over message streams (stdio with descriptors we own)."""
        low = self._lowlevel_server
        await low.run(read_stream, write_stream, low.create_initialization_options())

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        """A tool call, timed for the Debug trace (a `request` event)."""
        t0 = time.perf_counter()
        result = await self._call_tool(name, arguments, context)
        publish("request", channel="mcp", method=name,
                ms=round((time.perf_counter() - t0) * 1000, 2),
                ok=not getattr(result, "is_error", False))
        return result

    async def _call_tool(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
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


def build_mcp_server(service: EngineService, read_only: bool = False,
                     tools: str | None = None) -> NeuralMindMCP:
    """The MCP server over `service`: the tools of profile `tools` (default: the workspace
    setting `mcp_tools`, see `profiles.py`); `read_only` keeps only consulting tools.
    ValueError for an unknown profile or tool."""
    toolset = NeuralMindTools(service, read_only=read_only)
    functions = toolset.functions()
    available = [n for n, _, _ in functions]
    try:
        chosen = set(select(tools or service.config.mcp_tools, available))
    except ValueError as e:
        if tools:                       # asked for explicitly: the caller says so
            raise
        log.warning("the mcp_tools setting: %s; serving the default profile", e)
        chosen = set(select("default", available))
    names = [n for n, _, _ in functions if n in chosen]
    with _root_logging_untouched():
        server = NeuralMindMCP(toolset, name="neuralmind", title="NeuralMind",
                               instructions=instructions(names, read_only),
                               version=__version__, log_level="WARNING")
    for name, fn, hints in functions:
        if name in chosen:
            server.add_tool(fn, name=name, description=inspect.cleandoc(fn.__doc__ or ""),
                            annotations=hints, structured_output=True)
    return server



async def wire_tool_list(service: EngineService, read_only: bool = False,
                         tools: str | None = None) -> tuple[list[dict[str, Any]], str]:
    """The tool list exactly as `tools/list` sends it, and the instructions (for measuring
    and for the snapshot test; the service need not be started)."""
    server = build_mcp_server(service, read_only=read_only, tools=tools)
    listed = await server.list_tools()
    return ([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed],
            server.instructions or "")
