"""What the observatory page asks the service: one engine call each (EngineService mixin)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from neuralmind.config import DEBUG_RECENT_EVENTS


class ObservatoryRequests:
    """Requests of the Brain, Decisions, Memory, Dreams and Debug views (Savings is
    EngineService.savings: the one report the CLI and the status show too)."""

    # provided by EngineService: fn(workspace) on the engine thread
    _call: Callable[..., Awaitable[Any]]
    _partial: Callable[[dict[str, Any]], dict[str, Any]]

    async def ask(self, question: str, budget: int | None = None) -> dict[str, Any]:
        """The context pack for `question`, with each hit's reasons (not learned from)."""
        return self._partial(await self._call(lambda ws: ws.ask(question, budget)))

    async def brain(self) -> dict[str, Any]:
        return await self._call(lambda ws: ws.brain())

    async def brain_node(self, node_id: str) -> dict[str, Any]:
        return await self._call(lambda ws: ws.brain_node(node_id))

    async def decision_board(self) -> dict[str, Any]:
        return await self._call(lambda ws: ws.decision_board())

    async def memory_board(self) -> dict[str, Any]:
        return await self._call(lambda ws: ws.memory_board())

    async def dream_diary(self) -> dict[str, Any]:
        return await self._call(lambda ws: ws.dream_diary())

    async def recent_events(self, limit: int = DEBUG_RECENT_EVENTS) -> list[dict[str, Any]]:
        return await self._call(lambda ws: ws.recent_events(limit))
