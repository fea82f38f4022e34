"""The decision requests of EngineService: one decision-store call each, on the engine thread.

A mixin of EngineService (kept apart so each file holds one job); results are the
JSON shapes of the CLI's `--json`. Decision errors are EngineErrors with codes
already (not found, read-only, store unavailable, model unavailable), so nothing
is translated here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from neuralmind.service.use import recall_hits

if TYPE_CHECKING:
    from neuralmind.memory.decisions.store import DecisionStore
    from neuralmind.service.use import UseTracking

T = TypeVar("T")


class DecisionRequests:
    """Decision record/query/get/audit/restore/invalidate, diagnostics, agent retrieval."""

    # provided by EngineService
    _call: Callable[..., Awaitable[Any]]
    _notify: Callable[..., None]
    resolve: Callable[[str], str]
    use: UseTracking

    async def _decisions(self, fn: Callable[[DecisionStore], T], changes: bool = False) -> T:
        """`fn(decision store)` on the engine thread, which is also where the store is first
        opened; `changes`: tell the listeners (diagnostics) afterwards."""
        out: T = await self._call(lambda ws: fn(ws.decisions))
        if changes:
            self._notify("decisions_changed")
        return out

    async def decisions_record(self, title: str, rationale: str, **fields: Any) -> dict[str, Any]:
        record = await self._decisions(lambda s: s.record(title, rationale, **fields), True)
        return record.to_json()

    async def decisions_query(self, question: str, mode: str | None = None,
                              status: str = "ACTIVE", limit: int = 10) -> dict[str, Any]:
        result = await self._decisions(
            lambda s: s.search(question, mode=mode, status=status, limit=limit))
        out = result.to_json()
        self.use.answered("recall", None, question, recall_hits(out))
        return out

    async def decisions_get(self, decision_id: str) -> dict[str, Any]:
        return (await self._decisions(lambda s: s.get(decision_id))).to_json()

    async def decisions_audit(self, stale: bool = False,
                              orphaned: bool = False) -> list[dict[str, Any]]:
        report = await self._call(lambda ws: ws.decisions_audit(stale=stale, orphaned=orphaned))
        return report.to_json()

    async def decisions_restore(self, decision_id: str) -> dict[str, Any]:
        return (await self._decisions(lambda s: s.restore(decision_id), True)).to_json()

    async def decisions_invalidate(self, decision_id: str, reason: str) -> dict[str, Any]:
        return (await self._decisions(lambda s: s.invalidate(decision_id, reason), True)).to_json()

    async def decisions_reaffirm(self, decision_id: str, note: str = "") -> dict[str, Any]:
        """The pending change respects the decision: fingerprint its files as they are now."""
        return (await self._decisions(lambda s: s.reaffirm(decision_id, note=note), True)).to_json()

    async def decisions_supersede(self, decision_id: str, title: str, rationale: str,
                                  **fields: Any) -> dict[str, Any]:
        """A new decision that supersedes `decision_id`, which is invalidated."""
        new, old = await self._decisions(
            lambda s: s.supersede(decision_id, title, rationale, **fields), True)
        return {**new.to_json(), "superseded": old.to_json()}

    async def decision_diagnostics(self, path: str) -> list[dict[str, Any]]:
        """STALE and INVALIDATED decisions governing `path`, each with the 1-based line of
        its first governed symbol in the current graph (None when unknown)."""
        rel = self.resolve(path)
        return await self._call(lambda ws: ws.file_decisions(rel, ("STALE", "INVALIDATED")))

    # progressive retrieval for agents (search -> timeline -> get)
    async def memory_search(self, query: str, limit: int = 10, status: str = "ACTIVE",
                            mode: str | None = None) -> dict[str, Any]:
        out = await self._decisions(
            lambda s: s.memory_search(query, limit=limit, status=status, mode=mode))
        self.use.answered("recall", None, query, recall_hits(out))
        return out

    async def memory_timeline(self, decision_id: str | None = None, query: str | None = None,
                              before: int = 3, after: int = 3,
                              mode: str | None = None) -> dict[str, Any]:
        return await self._decisions(lambda s: s.memory_timeline(
            decision_id, query, before=before, after=after, mode=mode))

    async def memory_get(self, ids: list[str]) -> dict[str, Any]:
        return await self._decisions(lambda s: s.memory_get(ids))
