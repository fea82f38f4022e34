"""The observatory's views of a workspace: what neuralmind/observatory shows, read-only.

A mixin of `Workspace` (workspace.py holds the behaviour the editors and agents use; the
page's views are a concern of their own, and together they passed the 500-line rule).
The Savings page shows `Workspace.savings` (usage.db's report, the CLI's and the status's
too), not a view of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.engine import activity, boards, brain, memory_ops
from neuralmind.events.log import flush_event_log, read_events

if TYPE_CHECKING:
    from neuralmind.context.pack import ContextResult
    from neuralmind.graph.store import Graph
    from neuralmind.memory.decisions.store import DecisionStore
    from neuralmind.memory.store import MemoryStore
    from neuralmind.synapse.layer import SynapseLayer


class ObservatoryViews:
    """The page's views; the attributes below are the Workspace's."""

    root: Path
    state: Path
    graph: Graph
    decisions: DecisionStore
    memory: MemoryStore
    _synapses_or_none: Callable[[], SynapseLayer | None]
    query: Callable[..., ContextResult]

    def ask(self, question: str, budget: int | None = None) -> dict[str, Any]:
        """The Ask view: the pack an editor or agent would get, with each hit's id and the
        reasons behind its score, told to the bus like any question (nothing is learned)."""
        result = self.query(question, budget, explain=True)
        activity.publish_query(self.graph, question, result, "observatory")
        out = result.to_json()
        for shown, hit in zip(out["hits"], result.hits, strict=False):
            shown["id"] = hit.node.id
            shown["why"] = hit.why
        return out

    def brain(self) -> dict[str, Any]:
        """Communities, files, structural links and learned synapses (the Brain view)."""
        return brain.brain_graph(self.graph, self._synapses_or_none())

    def brain_node(self, node_id: str) -> dict[str, Any]:
        """One node with its decisions, memory atoms, synapses, next-likely files and symbols."""
        out = brain.node_detail(self.graph, self.decisions, self._synapses_or_none(), node_id)
        return {**out, "memory": memory_ops.node_memories(self.memory, self.graph, out)}

    def decision_board(self) -> dict[str, Any]:
        return boards.decision_board(self.decisions)

    def dream_diary(self) -> dict[str, Any]:
        return boards.dream_diary(self.state)

    def recent_events(self, limit: int) -> list[dict[str, Any]]:
        """The newest `limit` events of the log, oldest first (every process's)."""
        flush_event_log(0.2)
        return [e.to_json() for e in read_events(self.root, limit=limit)]
