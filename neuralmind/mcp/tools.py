"""The MCP tool set: one method per tool, each one EngineService call.

A tool is one method here, declared with its role (`@tool(CONSULTING)` or
`@tool(RECORDING)`, see `roles.py`), plus its output schema in `schemas.py` and its
text rendering in `render.py`. The same service methods answer the LSP's
`neuralmind/*` requests and the CLI, so an agent and the editor see the same
engine. Here arguments are checked (sizes, paths confined to the workspace by the
engine's rule) and results become a `CallToolResult` with the structured JSON and
a short text rendering. Every EngineError becomes, here and only here, a tool error
carrying its stable code (`invalid_argument`, `invalid_path`, `not_indexed`,
`not_found`, `semantic_unavailable`, `read_only`, ...), never a crash.

Tool calls are learning events: a query records the agent session's question and
hits (session `mcp:<client name>`), so later feedback and edits reinforce what it
led to; feedback without an explicit context reinforces the node together with
that session's last hits.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from neuralmind.config import (
    MAX_BUDGET,
    MAX_NEXT_K,
    MAX_QUESTION_CHARS,
    MAX_SEARCH_K,
    MIN_BUDGET,
)
from neuralmind.errors import EngineError, InvalidArgument
from neuralmind.graph.model import node_id, split_node_id
from neuralmind.mcp import render, schemas
from neuralmind.mcp.roles import CONSULTING, RECORDING, declared_tools, tool

if TYPE_CHECKING:
    from neuralmind.service.engine_service import EngineService

log = logging.getLogger("neuralmind.mcp")

MAX_TITLE_CHARS = 300
MAX_TEXT_CHARS = 20_000        # a rationale longer than this is a document, not a decision
MAX_ITEM_CHARS = 1_000         # one file, symbol, alternative, evidence line or tag
MAX_LIST_ITEMS = 100
MAX_PATH_CHARS = 4_096
LAST_HITS_KEPT = 10            # feedback context: the session's last query hits

# Engine codes renamed for agents: "the model is missing" matters to them as "semantic
# search is unavailable, use keyword".
CODE_ALIASES = {"model_unavailable": "semantic_unavailable"}

Question = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS)]
Budget = Annotated[int | None, Field(ge=MIN_BUDGET, le=MAX_BUDGET, description="tokens")]
FilePath = Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS,
                                description="workspace-relative or absolute")]
Item = Annotated[str, Field(max_length=MAX_ITEM_CHARS)]
Items = Annotated[list[Item] | None, Field(max_length=MAX_LIST_ITEMS)]
Status = Literal["ACTIVE", "STALE", "INVALIDATED", "ALL"]
Mode = Literal["keyword", "semantic", "hybrid"] | None
AtomType = Literal["lesson", "preference", "fact", "note", "open_loop", "decision"]


def error_result(code: str, message: str) -> CallToolResult:
    code = CODE_ALIASES.get(code, code)
    return CallToolResult(content=[TextContent(type="text", text=f"error [{code}]: {message}")],
                          structured_content={"error": {"code": code, "message": message}},
                          is_error=True)


def ok_result(out: dict[str, Any], text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=out)


def _client_name(ctx: Context | None) -> str:
    """The connected client's declared name, reduced to a safe session suffix."""
    try:
        params = ctx.session.client_params if ctx is not None else None
        name = params.client_info.name if params is not None else ""
    except Exception:  # no session outside a request (direct calls in tests)
        name = ""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name or "").strip("-")[:40]
    return name or "agent"


def _with_ids(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hits with their node id, the handle neuralmind_feedback takes."""
    return [{"id": h["file"] if h["kind"] == "file" else node_id(h["file"], h["symbol"]), **h}
            for h in hits]


def _clean(values: list[str] | None) -> list[str] | None:
    return None if values is None else [v for v in (s.strip() for s in values) if v]


class NeuralMindTools:
    """The tools of one MCP server over one EngineService (shared with the LSP server)."""

    ROLES: dict[str, str] = {}         # tool name -> role, from the declarations (below)
    CONSULTING_TOOLS: tuple[str, ...] = ()
    RECORDING_TOOLS: tuple[str, ...] = ()

    def __init__(self, service: EngineService, read_only: bool = False) -> None:
        self.service = service
        self.read_only = read_only
        self._last_hits: dict[str, list[str]] = {}   # session -> node ids of its last query
        self.last_session: str | None = None         # the agent session that asked last

    # --- plumbing -----------------------------------------------------------------------
    def confine(self, path: str) -> str:
        """A workspace-relative path; `../`, outside absolutes and symlinks out are refused."""
        return self.service.resolve(path)

    def _confine_target(self, target: str) -> str:
        """A file or `path::Qualified.name`, its path confined to the workspace."""
        return self._confine_symbol(target) if "::" in target else self.confine(target)

    def _confine_symbol(self, symbol: str) -> str:
        path, qual = split_node_id(symbol)
        if not qual.strip():
            raise InvalidArgument(f"symbol {symbol!r} is not of the form path::Qualified.name")
        return node_id(self.confine(path.strip()), qual.strip())

    async def _not_indexed(self) -> None:
        """Empty results from a never-built workspace are a refusal that says what to do."""
        status = await self.service.status()
        if status["files"]:
            return
        if status["indexing"]:
            state = status["indexing"]
            raise EngineError("not_indexed", "the workspace is being indexed for the first time "
                                             f"({state['phase']} {state['done']}/{state['total']}); "
                                             "ask again in a few seconds")
        raise EngineError("not_indexed", "the workspace has no index: run `neuralmind build` "
                                         f"in {self.service.root} (or open it in the editor)")

    @staticmethod
    async def run(call: Callable[[], Awaitable[CallToolResult]]) -> CallToolResult:
        """Engine refusals as coded error results (the one place codes are mapped)."""
        try:
            return await call()
        except EngineError as e:
            return error_result(e.code, e.message)

    # --- consulting tools ---------------------------------------------------------------
    @tool(CONSULTING)
    async def neuralmind_wakeup(self, budget: Budget = None) -> Annotated[
            CallToolResult, schemas.ContextPack]:
        """The project's identity and map of its parts (~600 tokens): call once per session.

        L0 + L1 of the context layers; it replaces reading the README and browsing
        directories."""
        async def call() -> CallToolResult:
            out = await self.service.wakeup(budget)
            if not out["layers"].get("L1"):
                await self._not_indexed()
            out["hits"] = []
            return ok_result(out, render.context_pack(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_query(
            self, question: Question, budget: Budget = None,
            include_wakeup: Annotated[bool, Field(description=(
                "false once you have the wakeup pack"))] = True,
            ctx: Context | None = None) -> Annotated[CallToolResult, schemas.ContextPack]:
        """The code a task needs, with file:line, in ~1,500 tokens: call before reading files.

        It returns the relevant symbols with file:line,
        signatures, docstrings and code lines, ranked by hybrid search and by what this project
        learned from past edits. Read whole files only if the pack is not enough. The question
        is remembered, so feedback and later edits improve future answers."""
        async def call() -> CallToolResult:
            session = None if self.read_only else f"mcp:{_client_name(ctx)}"
            out = await self.service.query(question, budget, session=session,
                                           include_wakeup=include_wakeup,
                                           source=session or "mcp")
            out["hits"] = _with_ids(out["hits"])
            if not out["hits"]:
                await self._not_indexed()
            if session:
                self._last_hits[session] = [h["id"] for h in out["hits"][:LAST_HITS_KEPT]]
                self.last_session = session
            return ok_result(out, render.context_pack(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_search(self, question: Question, k: Annotated[int, Field(
            ge=1, le=MAX_SEARCH_K)] = 10) -> Annotated[
            CallToolResult, schemas.SearchResult]:
        """Locate symbols and files for a query (ranked, without code).

        Hybrid semantic + keyword search. Use it to locate things (where is X defined, what handles Y) when a full context
        pack is more than you need."""
        async def call() -> CallToolResult:
            out = await self.service.search(question, k)
            out["hits"] = _with_ids(out["hits"])
            if not out["hits"]:
                await self._not_indexed()
            return ok_result(out, render.search(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_next_likely(self, file: FilePath, k: Annotated[int, Field(
            ge=1, le=MAX_NEXT_K)] = 5) -> Annotated[
            CallToolResult, schemas.NextLikely]:
        """Files usually changed together with, or right after, a file.

        Learned from this project's edit history and from questions that led to edits. Call
        after changing a file to see what usually changes with it (tests, callers, configs)."""
        async def call() -> CallToolResult:
            rel = self.confine(file)
            ranked = await self.service.next_likely(rel, k)
            out = {"file": rel, "next": ranked}
            return ok_result(out, render.next_likely(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_status(self) -> Annotated[CallToolResult, schemas.Status]:
        """Index freshness and size: call when answers look stale or empty.

        Files, nodes, embeddings, pending changes, learning. Call when answers look stale or empty, or to see whether indexing is still running."""
        async def call() -> CallToolResult:
            out = await self.service.status()
            out["read_only"] = self.read_only
            return ok_result(out, render.status(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_decisions_query(
            self, question: Question, mode: Mode = None, status: Status = "ACTIVE",
            limit: Annotated[int, Field(ge=1, le=50)] = 10) -> Annotated[
            CallToolResult, schemas.DecisionQuery]:
        """Recorded design decisions (rationale, rejected alternatives) bearing on a question.

        Call before editing a file or changing an approach that a past decision may govern
        (why is X done this way? was Y tried?), so you do not undo a deliberate choice."""
        async def call() -> CallToolResult:
            out = await self.service.decisions_query(question, mode=mode, status=status,
                                                     limit=limit)
            return ok_result(out, render.decision_query(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_memory_search(
            self, query: Question, limit: Annotated[int, Field(ge=1, le=50)] = 10,
            status: Status = "ACTIVE", mode: Mode = None) -> Annotated[
            CallToolResult, schemas.MemorySearch]:
        """Search recorded decisions as compact rows (~60 tokens each).

        Step 1 of progressive retrieval: pick candidates here, then neuralmind_memory_get for full records, or
        neuralmind_memory_timeline for what was decided around one."""
        async def call() -> CallToolResult:
            out = await self.service.memory_search(query, limit=limit, status=status, mode=mode)
            return ok_result(out, render.memory_search(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_memory_timeline(
            self, decision_id: Annotated[str | None, Field(max_length=100)] = None,
            query: Annotated[str | None, Field(max_length=MAX_QUESTION_CHARS, description=(
                "instead of an id"))] = None,
            before: Annotated[int, Field(ge=0, le=20)] = 3,
            after: Annotated[int, Field(ge=0, le=20)] = 3,
            mode: Mode = None) -> Annotated[CallToolResult, schemas.MemoryTimeline]:
        """The decisions recorded just before and after one (by id or by query).

        Step 2 of progressive retrieval. Shows the context a decision was made in: what it replaced, what followed."""
        async def call() -> CallToolResult:
            if not (decision_id or "").strip() and not (query or "").strip():
                raise InvalidArgument("give a decision_id or a query")
            out = await self.service.memory_timeline(decision_id, query, before=before,
                                                     after=after, mode=mode)
            return ok_result(out, render.memory_timeline(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_memory_get(self, ids: Annotated[list[Annotated[str, Field(
            max_length=100)]], Field(min_length=1, max_length=20)]) -> Annotated[
            CallToolResult, schemas.MemoryGet]:
        """Full decision records (rationale, rejected alternatives, evidence) for ids.

        Step 3 of progressive retrieval, for a shortlist of at most 20 ids."""
        async def call() -> CallToolResult:
            out = await self.service.memory_get(ids)
            return ok_result(out, render.memory_get(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_recall(self, question: Question, budget: Annotated[int | None, Field(
            ge=MIN_BUDGET, le=MAX_BUDGET, description="tokens (default 400)")] = None,
                                ctx: Context | None = None) -> Annotated[
            CallToolResult, schemas.Recall]:
        """Memories (lessons, preferences, facts, decisions) relevant to a task; rate each after."""
        async def call() -> CallToolResult:
            session = None if self.read_only else f"mcp:{_client_name(ctx)}"
            out = await self.service.memory_recall(question, budget, session=session,
                                                   record=not self.read_only)
            return ok_result(out, render.recall(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_directives(self) -> Annotated[CallToolResult, schemas.Directives]:
        """Standing directives: the rules to follow all session."""
        async def call() -> CallToolResult:
            out = await self.service.memory_directives()
            return ok_result(out, out["text"] or "No standing directives.")
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_inbox(self) -> Annotated[CallToolResult, schemas.Inbox]:
        """Proposed memories not yet confirmed by surviving commits or a person."""
        async def call() -> CallToolResult:
            out = {"atoms": await self.service.memory_inbox()}
            return ok_result(out, render.inbox(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_review(self, base: Annotated[str | None, Field(
            max_length=200, description="git ref to compare with (default HEAD)")] = None
            ) -> Annotated[CallToolResult, schemas.Review]:
        """Before finishing a change: files that usually change with it but were not touched,
        and decisions it puts at risk."""
        async def call() -> CallToolResult:
            out = await self.service.review(base)
            return ok_result(out, render.review(out))
        return await self.run(call)

    @tool(CONSULTING)
    async def neuralmind_editor_state(self) -> Annotated[CallToolResult, schemas.EditorState]:
        """What the user sees in the editor: active file, selection, open files, diagnostics,
        recent navigation."""
        async def call() -> CallToolResult:
            out = await self.service.editor_state()
            return ok_result(out, render.editor_state(out))
        return await self.run(call)

    # --- recording tools ----------------------------------------------------------------
    @tool(RECORDING)
    async def neuralmind_remember(
            self, text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)],
            type: Annotated[AtomType, Field(description="kind of memory")] = "note",
            label: Annotated[str | None, Field(max_length=MAX_TITLE_CHARS)] = None,
            hubs: Annotated[Items, Field(description="topics")] = None,
            about: Annotated[Items, Field(description="files or path::Symbol")] = None,
            ctx: Context | None = None) -> Annotated[CallToolResult, schemas.Atom]:
        """Remember something for later sessions; proposed until its work survives commits."""
        async def call() -> CallToolResult:
            targets = [self._confine_target(t) for t in _clean(about) or []]
            out = await self.service.memory_remember(
                text, type, label, _clean(hubs), targets, source=f"mcp:{_client_name(ctx)}",
                proposed=True)
            return ok_result(out, f"Remembered {out['id']} ({out['type']}, {out['state']}): "
                                  f"{out['label']}")
        return await self.run(call)

    @tool(RECORDING)
    async def neuralmind_rate(
            self, id: Annotated[str, Field(min_length=1, max_length=100)],
            verdict: Literal["used", "useful", "noise"],
            ctx: Context | None = None) -> Annotated[CallToolResult, schemas.Rated]:
        """Rate a recalled memory: used, useful or noise."""
        async def call() -> CallToolResult:
            out = await self.service.memory_rate(id, verdict, f"mcp:{_client_name(ctx)}")
            return ok_result(out, f"Rated {out['atom']['id']} {verdict}: rank {out['rank']:.2f}, "
                                  f"{out['state']}.")
        return await self.run(call)

    @tool(RECORDING)
    async def neuralmind_feedback(
            self, node_id: Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS,
                                                description="a hit id")],
            positive: Annotated[bool, Field(description="false: it was noise")] = True,
            context: Annotated[list[Annotated[str, Field(max_length=MAX_PATH_CHARS)]] | None,
                               Field(max_length=50, description=(
                                   "ids used with it (default: your last hits)"))] = None,
            ctx: Context | None = None) -> Annotated[CallToolResult, schemas.FeedbackResult]:
        """Say which retrieved code helped (or misled) after a task.

        Positive feedback strengthens the node's associations with what it was used with, so
        the next similar question ranks it higher; negative feedback weakens them."""
        async def call() -> CallToolResult:
            node = node_id.strip()
            self.confine(split_node_id(node)[0])
            session = f"mcp:{_client_name(ctx)}"
            together = _clean(context)
            if together is None:
                together = [i for i in self._last_hits.get(session, []) if i != node]
            for other in together:
                self.confine(split_node_id(other)[0])
            result = await self.service.feedback(node, positive, together if positive else [])
            out = {**result, "context": together if positive else []}
            return ok_result(out, render.feedback(out))
        return await self.run(call)

    @tool(RECORDING)
    async def neuralmind_decision_record(
            self, title: Annotated[str, Field(min_length=1, max_length=MAX_TITLE_CHARS)],
            rationale: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)],
            files: Annotated[Items, Field(description="files it governs")] = None,
            symbols: Annotated[Items, Field(description="path::Qualified.name")] = None,
            rejected: Annotated[Items, Field(description="alternatives and why not")] = None,
            evidence: Items = None,
            decision_type: Annotated[str | None, Field(max_length=50, description=(
                "architecture (default), api, ..."))] = None,
            confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.8,
            tags: Items = None) -> Annotated[CallToolResult, schemas.Decision]:
        """Record a design decision so later sessions know why the code is this way.

        Later sessions: yours, other agents', the developer's. Call after making a non-obvious choice (an approach picked over alternatives, a
        constraint discovered). It is anchored to the current commit; when a later commit
        changes a governed file the decision is flagged STALE in the editor."""
        async def call() -> CallToolResult:
            fields: dict[str, Any] = {"confidence": confidence}
            if files is not None:
                fields["files"] = [self.confine(f) for f in _clean(files) or []]
            if symbols is not None:
                fields["symbols"] = [self._confine_symbol(s) for s in _clean(symbols) or []]
            for key, value in (("rejected", rejected), ("evidence", evidence), ("tags", tags)):
                if value is not None:
                    fields[key] = _clean(value)
            if decision_type and decision_type.strip():
                fields["decision_type"] = decision_type.strip()
            out = await self.service.decisions_record(title, rationale, **fields)
            return ok_result(out, render.decision(out))
        return await self.run(call)

    @tool(RECORDING)
    async def neuralmind_reveal(
            self, file: FilePath, line: Annotated[int, Field(ge=1)],
            end_line: Annotated[int | None, Field(ge=1)] = None,
            note: Annotated[str | None, Field(max_length=MAX_ITEM_CHARS)] = None,
            ) -> Annotated[CallToolResult, schemas.Reveal]:
        """Show the user a range in the editor, with an optional note."""
        async def call() -> CallToolResult:
            out = await self.service.reveal(file, line, end_line, note)
            return ok_result(out, render.reveal(out))
        return await self.run(call)

    # --- registration -------------------------------------------------------------------
    def functions(self) -> list[tuple[str, Callable[..., Any], ToolAnnotations]]:
        """(name, function, annotations) of the tools this role serves, in declaration order."""
        out = []
        for name, role in self.ROLES.items():
            recording = role == RECORDING
            if recording and self.read_only:
                continue
            hints = ToolAnnotations(read_only_hint=not recording, destructive_hint=False,
                                    idempotent_hint=not recording, open_world_hint=False)
            out.append((name, getattr(self, name), hints))
        return out


NeuralMindTools.ROLES = declared_tools(NeuralMindTools)
NeuralMindTools.CONSULTING_TOOLS = tuple(
    n for n, r in NeuralMindTools.ROLES.items() if r == CONSULTING)
NeuralMindTools.RECORDING_TOOLS = tuple(
    n for n, r in NeuralMindTools.ROLES.items() if r == RECORDING)
