"""The memory operations of a `Workspace` (a mixin, so the engine's one object keeps one
method per operation while workspace.py stays readable): the commit scan of decisions
and promotion of proposed memories when HEAD moves, remember, code-aware recall, dreams,
the standing directives and the inbox of a file. The work is the memory
component's and `memory_ops.py`'s; these pick the workspace's parts for it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from neuralmind.engine import boards, memory_ops

if TYPE_CHECKING:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.context.pack import RankedHit
    from neuralmind.graph.store import Graph
    from neuralmind.memory.atoms import Atom
    from neuralmind.memory.decisions.invalidation import ScanReport
    from neuralmind.memory.decisions.store import DecisionStore
    from neuralmind.memory.dreams import DreamReport
    from neuralmind.memory.recall import RecallResult
    from neuralmind.memory.store import MemoryStore
    from neuralmind.synapse.layer import SynapseLayer


class WorkspaceMemory:
    """Memory (atoms: recall, feedback, directives, promotion, dreams) on a Workspace."""

    # provided by Workspace
    memory: MemoryStore
    decisions: DecisionStore
    graph: Graph
    config: WorkspaceConfig
    resolve_path: Callable[[str], str]
    search: memory_ops.Search
    _synapses_or_none: Callable[[], SynapseLayer | None]

    # --- decisions after HEAD moved, and what it settles for proposed memories -------------
    def scan_commits(self, previous: str | None) -> list[ScanReport]:
        """Mark STALE what the commits HEAD moved over since `previous` changed (HEAD alone when
        None), then promote or reject the proposed memories HEAD now settles; the last
        report's `commit` is the new HEAD (an `error` outside git)."""
        reports = self.decisions.scan_since(previous)
        memory_ops.review_proposals(self.memory)
        return reports

    def remember(self, text: str, atom_type: str = "note", label: str | None = None,
                 hubs: list[str] | None = None, about: list[str] | None = None,
                 source: str = "cli", proposed: bool = False) -> Atom:
        """Store a memory; `about` paths are confined to the workspace like every client path."""
        targets = memory_ops.confine_targets(self.resolve_path, about)
        return self.memory.remember(text, atom_type, label, hubs, targets, source=source,
                                    proposed=proposed)

    def recall(self, question: str, budget: int | None = None, session: str | None = None,
               record: bool = True, code_hits: Sequence[RankedHit] | None = None
               ) -> RecallResult:
        """The memories a question needs within `budget` tokens; atoms about the code the
        same question retrieves are boosted. `session` names an agent session (pending
        feedback); `record` False changes nothing (read-only); `code_hits`: that code when
        the caller already searched for it (a prompt hook), so it is not searched twice."""
        indexed = bool(self.graph.files)
        return memory_ops.recall(self.memory, self.search, self._synapses_or_none(), indexed,
                                 question, budget, session, record, code_hits)

    def dream(self, phase: str | None = None) -> DreamReport:
        """A consolidation pass (light, rem, deep or all) and its DREAMS.md entry."""
        return self.memory.dream(phase, self._synapses_or_none())

    def directives(self) -> dict[str, Any]:
        """The standing directives block, within this workspace's limits."""
        return self.memory.directives(self.config.directives_max_lines,
                                      self.config.directives_max_chars).to_json()

    def memory_board(self) -> dict[str, Any]:
        """The observatory's Memory view: atoms by state, the inbox, the directives."""
        return boards.memory_board(self.memory, self.directives)

    def file_inbox(self, rel: str) -> list[dict[str, Any]]:
        """Proposed memories about `rel` or its symbols, each with its 1-based line."""
        return memory_ops.file_inbox(self.memory, self.graph, rel)
