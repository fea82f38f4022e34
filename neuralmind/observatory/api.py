"""The observatory's JSON routes: each is one EngineService call, encoded off the loop.

Results are JSON; the page renders every string in them as text. The encoding of a
large answer (the Brain graph of a big repository is a few hundred KB) runs on the
engine thread with the call, so the editor's event loop never holds the GIL for it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from neuralmind.config import DEBUG_RECENT_EVENTS, MAX_BUDGET, MAX_QUESTION_CHARS, MIN_BUDGET
from neuralmind.errors import EngineError

if TYPE_CHECKING:
    from neuralmind.service.engine_service import EngineService

STATUS_BY_CODE = {"not_found": 404, "not_indexed": 409, "store_unavailable": 503,
                  "model_unavailable": 503}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def to_json(self) -> dict[str, str]:
        return {"error": self.code, "message": self.message}


def encode(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


class Api:
    """Route name -> handler; GET routes take the query string, POST routes a JSON body."""

    def __init__(self, service: EngineService) -> None:
        self.service = service
        self.get: dict[str, Callable[[dict[str, str]], Awaitable[Any]]] = {
            "status": lambda q: service.status(),
            "brain": lambda q: service.brain(),
            "node": lambda q: service.brain_node(_required(q, "id")),
            "decisions": lambda q: service.decision_board(),
            "memory": lambda q: service.memory_board(),
            "dreams": lambda q: service.dream_diary(),
            "savings": lambda q: service.savings(count=False),
            "events": lambda q: service.recent_events(
                _int(q, "limit", 1, DEBUG_RECENT_EVENTS, DEBUG_RECENT_EVENTS)),
        }
        self.post: dict[str, Callable[[Any], Awaitable[Any]]] = {"ask": self._ask}

    async def handle(self, name: str, method: str, query: dict[str, str], body: Any) -> bytes:
        routes: dict[str, Any] = self.get if method == "GET" else self.post
        handler = routes.get(name)
        if handler is None:
            raise ApiError(404, "not_found", f"no {method} route {name!r}")
        try:
            result = await handler(query if method == "GET" else body)
        except EngineError as e:
            raise ApiError(STATUS_BY_CODE.get(e.code, 400), e.code, e.message) from None
        return await self.service.run_serialised(lambda: encode(result))

    async def _ask(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ApiError(400, "invalid_argument", "the body must be a JSON object")
        question = body.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ApiError(400, "invalid_argument", "a question is required")
        if len(question) > MAX_QUESTION_CHARS:
            raise ApiError(400, "invalid_argument", "the question is too long")
        budget = body.get("budget")
        if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool)
                                   or not MIN_BUDGET <= budget <= MAX_BUDGET):
            raise ApiError(400, "invalid_argument",
                           f"budget must be an integer between {MIN_BUDGET} and {MAX_BUDGET}")
        return await self.service.ask(question, budget)


def _required(query: dict[str, str], name: str) -> str:
    value = query.get(name, "")
    if not value:
        raise ApiError(400, "invalid_argument", f"{name} is required")
    return value


def _int(query: dict[str, str], name: str, low: int, high: int, default: int) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, "invalid_argument", f"{name} must be an integer") from None
    if not low <= value <= high:
        raise ApiError(400, "invalid_argument", f"{name} must be between {low} and {high}")
    return value
