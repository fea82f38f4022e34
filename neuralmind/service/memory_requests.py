"""The memory requests of EngineService: one memory call each, on the engine thread.

A mixin of EngineService (kept apart so each file holds one job), like the decision
requests; results are the JSON shapes of the CLI's `--json`. Memory errors are
EngineErrors with codes already, so nothing is translated here. Changes that can move an
inbox diagnostic (a proposed atom created, judged or forgotten) tell the listeners, as
decision changes do; a new atom is embedded in the background right after it is stored.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from neuralmind.engine import Workspace
    from neuralmind.service.engine_thread import EngineThread

T = TypeVar("T")


def _embed_new(ws: Workspace) -> None:
    """Embed atoms that have no vector yet, so the next recall does not wait for it."""
    memory = ws.memory
    memory.vectors.refresh(memory.connection(), memory.write, memory.generation())


class MemoryRequests:
    """remember, recall, rate, pin, directives, inbox, link, forget, restore, dream, stats."""

    # provided by EngineService
    _call: Callable[..., Awaitable[Any]]
    _notify: Callable[..., None]
    _thread: EngineThread
    resolve: Callable[[str], str]

    async def _memory(self, fn: Callable[[Workspace], T], changes: bool = False) -> T:
        out: T = await self._call(fn)
        if changes:
            self._notify("decisions_changed")     # inbox diagnostics live with decisions'
        return out

    async def memory_remember(self, text: str, atom_type: str = "note", label: str | None = None,
                              hubs: list[str] | None = None, about: list[str] | None = None,
                              source: str = "lsp", proposed: bool = False) -> dict[str, Any]:
        atom = await self._memory(lambda ws: ws.remember(text, atom_type, label, hubs, about,
                                                         source=source, proposed=proposed),
                                  changes=proposed)
        self._thread.spawn(self._call(_embed_new), "embed-memory")
        return atom.to_json()

    async def memory_recall(self, question: str, budget: int | None = None,
                            session: str | None = None, record: bool = True) -> dict[str, Any]:
        result = await self._memory(lambda ws: ws.recall(question, budget, session, record))
        return result.to_json()

    async def memory_rate(self, atom_id: str, verdict: str, session: str = "") -> dict[str, Any]:
        return await self._memory(lambda ws: ws.memory.rate(atom_id, verdict, session))

    async def memory_pin(self, atom_id: str, on: bool = True) -> dict[str, Any]:
        return (await self._memory(lambda ws: ws.memory.pin(atom_id, on))).to_json()

    async def memory_directives(self) -> dict[str, Any]:
        return await self._memory(lambda ws: ws.directives())

    async def memory_inbox(self) -> list[dict[str, Any]]:
        return await self._memory(lambda ws: ws.memory.inbox())

    async def memory_atom(self, atom_id: str) -> dict[str, Any]:
        # Not `memory_get`: DecisionRequests.memory_get (ids, the MCP tool's progressive step) comes
        # first in EngineService's bases and shadowed it, so the LSP request looked up characters.
        return await self._memory(lambda ws: ws.memory.atom_json(atom_id))

    async def memory_link(self, src: str, kind: str, dst: str) -> dict[str, Any]:
        return await self._memory(lambda ws: ws.memory.link(src, kind, dst))

    async def memory_forget(self, atom_id: str) -> dict[str, Any]:
        return (await self._memory(lambda ws: ws.memory.forget(atom_id), True)).to_json()

    async def memory_restore(self, atom_id: str) -> dict[str, Any]:
        return (await self._memory(lambda ws: ws.memory.restore_atom(atom_id), True)).to_json()

    async def memory_accept(self, atom_id: str) -> dict[str, Any]:
        return (await self._memory(lambda ws: ws.memory.accept(atom_id), True)).to_json()

    async def memory_reject(self, atom_id: str) -> dict[str, Any]:
        return (await self._memory(lambda ws: ws.memory.reject(atom_id), True)).to_json()

    async def memory_close(self, atom_id: str) -> dict[str, Any]:
        return (await self._memory(lambda ws: ws.memory.close(atom_id))).to_json()

    async def memory_dream(self, phase: str | None = None) -> dict[str, Any]:
        return (await self._memory(lambda ws: ws.dream(phase))).to_json()

    async def memory_stats(self) -> dict[str, Any]:
        return await self._memory(lambda ws: ws.memory.stats())

    async def inbox_diagnostics(self, path: str) -> list[dict[str, Any]]:
        """Proposed memories about `path` or its symbols, each with its 1-based line."""
        rel = self.resolve(path)
        return await self._call(lambda ws: ws.file_inbox(rel))
