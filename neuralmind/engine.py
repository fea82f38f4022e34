"""The workspace engine: one object per project root that owns every component.

Adapters (CLI, LSP, MCP) hold a `Workspace` and call its methods; an operation
offered by more than one adapter is one method here. Components are created
lazily so a command pays only for what it uses (the LSP server must answer
`initialize` before the embedding model is loaded).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from neuralmind.config import WorkspaceConfig, load_workspace_config
from neuralmind.graph.build import BuildReport, GraphBuilder
from neuralmind.graph.store import Graph, load_graph
from neuralmind.statedir import state_dir

if TYPE_CHECKING:
    from neuralmind.decisions.store import DecisionStore
    from neuralmind.synapse.layer import SynapseLayer

log = logging.getLogger("neuralmind.engine")

ProgressFn = Callable[[str, int, int], None]  # (phase, done, total)


class Workspace:
    """The engine for one project root."""

    def __init__(self, root: Path, config: WorkspaceConfig | None = None) -> None:
        self.root = Path(root).resolve()
        self.config = config or load_workspace_config(self.root)
        self._graph: Graph | None = None

    @property
    def state(self) -> Path:
        return state_dir(self.root)

    # --- graph ---------------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        """The last complete graph on disk (empty when the workspace was never built)."""
        if self._graph is None:
            self._graph = load_graph(self.state)
        return self._graph

    def build(self, changed: list[str] | None = None, progress: ProgressFn | None = None) -> BuildReport:
        """Bring the graph up to date: all files, or only `changed` (repo-relative or absolute)."""
        report = GraphBuilder(self.root, self.config).build(changed=changed, progress=progress)
        self._graph = report.graph
        return report

    # --- learned memory ------------------------------------------------------------------
    @functools.cached_property
    def synapses(self) -> SynapseLayer:
        from neuralmind.synapse.layer import SynapseLayer

        return SynapseLayer(self.state, self.root)

    @functools.cached_property
    def decisions(self) -> DecisionStore:
        from neuralmind.decisions.store import DecisionStore

        return DecisionStore(self.root)
