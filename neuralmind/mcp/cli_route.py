"""`POST /neuralmind/cli` on the loopback endpoint: the CLI's consulting commands, warm.

Why: a cold `neuralmind query` pays for imports, the model and the index load before
it can answer; the editor's server has all of them in memory. The CLI finds the
server through the discovery file and sends its command here (`cli/remote.py`).
Plain JSON, not MCP: one POST, one EngineService call, no session and no SDK (the
MCP app costs ~40 MB and ~0.6 s on its first request). The Guard has checked Host,
Origin and the bearer token before a request reaches this route.

Request:  {"method": "query" | "search" | "next" | "recall", "params": {...}}
Answer:   {"root": str, "result": ...} or {"root": str, "error": {"code", "message"}}
Results are the service's own JSON (the shapes of the CLI's `--json`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from neuralmind.errors import EngineError, InvalidArgument
from neuralmind.mcp.asgi import Receive, Scope, Send, plain, posted_body

if TYPE_CHECKING:
    from neuralmind.service.engine_service import EngineService

log = logging.getLogger("neuralmind.mcp")

MAX_BODY_BYTES = 1 << 20     # a question is at most 10k characters; more is not a request
JSON_HEADERS = [(b"content-type", b"application/json")]


def _text(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise InvalidArgument(f"{key} must be a string")
    return value


def _int(params: dict[str, Any], key: str, default: int | None) -> int | None:
    value = params.get(key, default)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise InvalidArgument(f"{key} must be an integer")
    return value


async def _query(service: EngineService, p: dict[str, Any]) -> Any:
    return await service.query(_text(p, "question"), _int(p, "budget", None),
                               explain=bool(p.get("explain")), source="cli")


async def _search(service: EngineService, p: dict[str, Any]) -> Any:
    return await service.search(_text(p, "question"), _int(p, "k", 10) or 10)


async def _next(service: EngineService, p: dict[str, Any]) -> Any:
    return await service.next_likely(_text(p, "file"), _int(p, "k", 5) or 5)


def _session(params: dict[str, Any]) -> str | None:
    value = params.get("session")
    if value is not None and not isinstance(value, str):
        raise InvalidArgument("session must be a string")
    return value


async def _recall(service: EngineService, p: dict[str, Any]) -> Any:
    return await service.memory_recall(_text(p, "question"), _int(p, "budget", None),
                                       session=_session(p))


METHODS: dict[str, Callable[[EngineService, dict[str, Any]], Awaitable[Any]]] = {
    "query": _query, "search": _search, "next": _next, "recall": _recall,
}


class CliRoute:
    """The ASGI handler of CLI_PATH for one EngineService."""

    def __init__(self, service: EngineService) -> None:
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await posted_body(scope.get("method", ""), receive, send, MAX_BODY_BYTES)
        if body is None:
            return
        status, answer = await self.answer(body)
        await plain(send, status, json.dumps(answer).encode(), JSON_HEADERS)

    async def answer(self, body: bytes) -> tuple[int, dict[str, Any]]:
        out: dict[str, Any] = {"root": str(self.service.root)}
        try:
            request = json.loads(body)
            method = request.get("method") if isinstance(request, dict) else None
            params = (request.get("params") or {}) if isinstance(request, dict) else None
        except ValueError:
            method = params = None
        if method not in METHODS or not isinstance(params, dict):
            out["error"] = {"code": "invalid_argument",
                            "message": f"expected {{method: {'|'.join(METHODS)}, params: {{}}}}"}
            return 400, out
        try:
            out["result"] = await METHODS[method](self.service, params)
        except EngineError as e:
            out["error"] = {"code": e.code, "message": e.message}
        except Exception as e:   # a bug: logged with its traceback, answered, never a crash
            log.exception("CLI request %s failed", method)
            out["error"] = {"code": "internal", "message": f"{type(e).__name__}: {e}"}
            return 500, out
        return 200, out

