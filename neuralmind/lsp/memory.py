"""Memory over LSP: `neuralmind/memory/*` custom requests (each also an executeCommand).

The editor is a person's tool: recall from here registers no pending feedback, and
what is remembered here is active at once (an agent's memory is proposed). Proposed
atoms appear as Information diagnostics on the files they are about, with accept and
reject code actions (diagnostics.py); the commands below are what those actions run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from neuralmind.config import MAX_BUDGET, MAX_QUESTION_CHARS, MIN_BUDGET
from neuralmind.lsp.params import Params
from neuralmind.lsp.requests import Handler, register_one
from neuralmind.lsp.server import Feature

if TYPE_CHECKING:
    from neuralmind.lsp.server import NeuralMindServer

VERDICTS = ("used", "useful", "noise")
ID_CHARS = 100


def handlers(server: NeuralMindServer) -> dict[str, Handler]:
    """Method name -> handler taking checked Params."""

    def atom_id(p: Params) -> str:
        return p.str("id", required=True, max_len=ID_CHARS) or ""

    def one(call: str) -> Handler:
        async def handler(p: Params) -> Any:
            service = await server.ready_service()
            return await getattr(service, call)(atom_id(p))
        return handler

    async def remember(p: Params) -> dict[str, Any]:
        text = p.str("text", required=True, max_len=20_000) or ""
        about = [server.uri_to_rel(u) for u in p.str_list("uris") or []]
        about += p.str_list("about") or []
        service = await server.ready_service()
        return await service.memory_remember(
            text, p.str("type", max_len=20) or "note", p.str("label", max_len=300),
            p.str_list("hubs"), about, source="lsp", proposed=p.bool("proposed", False))

    async def recall(p: Params) -> dict[str, Any]:
        question = p.str("query", required=True, max_len=MAX_QUESTION_CHARS) or ""
        budget = p.int("budget", MIN_BUDGET, MAX_BUDGET)
        service = await server.ready_service()
        return await service.memory_recall(question, budget, session=None)

    async def rate(p: Params) -> dict[str, Any]:
        verdict = p.str("verdict", required=True, max_len=10) or ""
        if verdict not in VERDICTS:
            raise JsonRpcInvalidParams(message=f"verdict must be one of {', '.join(VERDICTS)}")
        service = await server.ready_service()
        return await service.memory_rate(atom_id(p), verdict, "lsp")

    async def pin(p: Params) -> dict[str, Any]:
        service = await server.ready_service()
        return await service.memory_pin(atom_id(p), not p.bool("off", False))

    async def link(p: Params) -> dict[str, Any]:
        kind = p.str("kind", required=True, max_len=20) or ""
        target = p.str("target", required=True, max_len=4096) or ""
        service = await server.ready_service()
        return await service.memory_link(atom_id(p), kind, target)

    async def dream(p: Params) -> dict[str, Any]:
        service = await server.ready_service()
        return await service.memory_dream(p.str("phase", max_len=10))

    async def no_params(call: str) -> Any:
        service = await server.ready_service()
        return await getattr(service, call)()

    return {
        "neuralmind/memory/remember": remember,
        "neuralmind/memory/recall": recall,
        "neuralmind/memory/rate": rate,
        "neuralmind/memory/pin": pin,
        "neuralmind/memory/link": link,
        "neuralmind/memory/get": one("memory_atom"),
        "neuralmind/memory/forget": one("memory_forget"),
        "neuralmind/memory/restore": one("memory_restore"),
        "neuralmind/memory/accept": one("memory_accept"),
        "neuralmind/memory/reject": one("memory_reject"),
        "neuralmind/memory/close": one("memory_close"),
        "neuralmind/memory/dream": dream,
        "neuralmind/memory/directives": lambda p: no_params("memory_directives"),
        "neuralmind/memory/inbox": lambda p: no_params("memory_inbox"),
        "neuralmind/memory/stats": lambda p: no_params("memory_stats"),
    }


class MemoryRequests(Feature):
    """Every `neuralmind/memory/*` request, also offered as a workspace/executeCommand."""

    def register(self) -> None:
        for method, handler in handlers(self.server).items():
            register_one(self.server, method, handler)
