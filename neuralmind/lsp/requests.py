"""Custom requests under `neuralmind/`, each also offered as a workspace/executeCommand.

Params and results are plain JSON with the shapes of the CLI's `--json`
output, plus `uri` next to each `file` for editors. The README section
"Language server (LSP)" documents every one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from neuralmind.config import MAX_BUDGET, MAX_NEXT_K, MAX_QUESTION_CHARS, MAX_SEARCH_K, MIN_BUDGET
from neuralmind.lsp.agent_endpoint import AgentEndpoints
from neuralmind.lsp.params import Params, translate_errors
from neuralmind.lsp.server import Feature

if TYPE_CHECKING:
    from neuralmind.lsp.server import NeuralMindServer

log = logging.getLogger("neuralmind.lsp")

Handler = Callable[[Params], Awaitable[Any]]
DECISION_MODES = ("keyword", "semantic", "hybrid")
DECISION_STATUSES = ("ACTIVE", "STALE", "INVALIDATED", "ALL")


def _with_uris(server: NeuralMindServer, out: dict[str, Any]) -> dict[str, Any]:
    for item in [*out.get("files", []), *out.get("hits", [])]:
        if "file" in item:
            item["uri"] = server.rel_to_uri(item["file"])
    return out


def handlers(server: NeuralMindServer) -> dict[str, Handler]:
    """Method name -> handler taking checked Params."""

    async def context(p: Params) -> dict[str, Any]:
        question = p.str("query", required=True, max_len=MAX_QUESTION_CHARS)
        budget = p.int("budget", MIN_BUDGET, MAX_BUDGET)
        uri = p.str("uri")
        if uri is not None:
            server.uri_to_rel(uri)   # refuse documents outside the workspace
        service = await server.ready_service()
        out = await service.query(question or "", budget, session=server.session)
        return _with_uris(server, out)

    async def wakeup(p: Params) -> dict[str, Any]:
        budget = p.int("budget", MIN_BUDGET, MAX_BUDGET)
        service = await server.ready_service()
        return await service.wakeup(budget)

    async def search(p: Params) -> dict[str, Any]:
        question = p.str("query", required=True, max_len=MAX_QUESTION_CHARS)
        k = p.int("k", 1, MAX_SEARCH_K) or 10
        service = await server.ready_service()
        return _with_uris(server, await service.search(question or "", k))

    async def next_likely(p: Params) -> list[dict[str, Any]]:
        rel = server.uri_to_rel(p.str("uri", required=True))
        k = p.int("k", 1, MAX_NEXT_K) or 5
        service = await server.ready_service()
        found = await service.next_likely(rel, k)
        return [{"uri": server.rel_to_uri(f["file"]), **f} for f in found]

    async def feedback(p: Params) -> dict[str, Any]:
        node = p.str("node", required=True, max_len=2000)
        positive = p.bool("positive", True)
        ctx = p.str_list("context")
        service = await server.ready_service()
        return await service.feedback(node or "", positive, ctx)

    async def status(p: Params) -> dict[str, Any]:
        service = await server.ready_service()
        return await service.status()

    async def record(p: Params) -> dict[str, Any]:
        confidence = p.float("confidence", 0.0, 1.0)
        fields: dict[str, Any] = {
            "files": p.str_list("files"), "symbols": p.str_list("symbols"),
            "decision_type": p.str("type", max_len=100),
            "rejected": p.str_list("rejected"), "evidence": p.str_list("evidence"),
            "tags": p.str_list("tags"), "commit": p.str("commit", max_len=100),
            "depends_on": p.str_list("depends_on"),
        }
        if confidence is not None:
            fields["confidence"] = confidence
        fields = {k: v for k, v in fields.items() if v is not None}
        service = await server.ready_service()
        return await service.decisions_record(p.str("title", required=True, max_len=500) or "",
                                              p.str("rationale", required=True) or "", **fields)

    async def query(p: Params) -> dict[str, Any]:
        question = p.str("query", required=True, max_len=MAX_QUESTION_CHARS)
        mode = p.str("mode")
        if mode is not None and mode not in DECISION_MODES:
            raise JsonRpcInvalidParams(message=f"mode must be one of {', '.join(DECISION_MODES)}")
        status_ = (p.str("status") or "ACTIVE").upper()
        if status_ not in DECISION_STATUSES:
            raise JsonRpcInvalidParams(
                message=f"status must be one of {', '.join(DECISION_STATUSES)}")
        limit = p.int("limit", 1, 100) or 10
        service = await server.ready_service()
        return await service.decisions_query(question or "", mode, status_, limit)

    async def get(p: Params) -> dict[str, Any]:
        service = await server.ready_service()
        return await service.decisions_get(p.str("id", required=True, max_len=100) or "")

    async def audit(p: Params) -> list[dict[str, Any]]:
        stale, orphaned = p.bool("stale", False), p.bool("orphaned", False)
        service = await server.ready_service()
        return await service.decisions_audit(stale, orphaned)

    async def reindex(p: Params) -> dict[str, Any]:
        service = await server.ready_service()
        service.reindex()
        return {"started": True}

    async def observatory(p: Params) -> dict[str, Any]:
        view = p.str("view", max_len=40)
        await server.ready_service()
        endpoints = server.get_feature(AgentEndpoints)
        await endpoints.settled.wait()
        if endpoints.endpoint is None:
            raise JsonRpcInvalidParams(message=(
                "the observatory is served by the loopback endpoint, which is off here "
                "(turn the `mcp` setting on, or run `neuralmind serve`)"))
        return {"url": endpoints.endpoint.login_url(view)}

    return {
        "neuralmind/context": context,
        "neuralmind/wakeup": wakeup,
        "neuralmind/search": search,
        "neuralmind/nextLikely": next_likely,
        "neuralmind/feedback": feedback,
        "neuralmind/status": status,
        "neuralmind/reindex": reindex,
        "neuralmind/decisions/record": record,
        "neuralmind/decisions/query": query,
        "neuralmind/decisions/get": get,
        "neuralmind/decisions/audit": audit,
        "neuralmind/observatory": observatory,
    }


def command_name(method: str) -> str:
    """`neuralmind/decisions/record` -> `neuralmind.decisions.record`."""
    return method.replace("/", ".")


class CustomRequests(Feature):
    """Every `neuralmind/*` request, also offered as a workspace/executeCommand."""

    def register(self) -> None:
        for method, handler in handlers(self.server).items():
            register_one(self.server, method, handler)


def register_one(server: NeuralMindServer, method: str, handler: Handler) -> None:
    @server.feature(method)
    @translate_errors
    async def request(params: Any) -> Any:
        return await handler(Params(params, method))

    @server.command(command_name(method))
    @translate_errors
    async def command(*args: Any) -> Any:
        if len(args) > 1:
            raise JsonRpcInvalidParams(message=f"{command_name(method)} takes one params object")
        return await handler(Params(args[0] if args else None, command_name(method)))
