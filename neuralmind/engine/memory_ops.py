"""What the engine adds around the memory store: code-aware recall, the memory part of the
wake-up pack, memories in hover and per-file inbox diagnostics, promotion after HEAD moves.

The memory component knows atoms; the engine knows the code graph, the search index and
the synapse layer. Recall asks the code search the same question, so atoms `about` the code
it retrieves are boosted; what an agent recalled together is co-activated in the synapse
layer's `memory` namespace (what the dreams' rem phase reads). The `Workspace` methods
call these with the components they need.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from neuralmind.config import RECALL_CODE_HITS
from neuralmind.context.tokens import count_tokens
from neuralmind.errors import EngineError
from neuralmind.memory.dreams import ATOM_NAMESPACE, ATOM_NODE
from neuralmind.memory.recall import CodeHit
from neuralmind.memory.wakeup import WakeupMemory

if TYPE_CHECKING:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.context.pack import ContextResult, RankedHit
    from neuralmind.graph.store import Graph
    from neuralmind.memory.recall import RecallResult
    from neuralmind.memory.store import MemoryStore
    from neuralmind.synapse.layer import SynapseLayer

log = logging.getLogger("neuralmind.engine")

Search = Callable[..., "tuple[list[RankedHit], str, str]"]   # Workspace.search


def confine_targets(resolve: Callable[[str], str], about: list[str] | None) -> list[str]:
    """`about` files and `path::Qualified.name` symbols, their paths confined to the root."""
    out = []
    for raw in about or []:
        path, sep, qual = raw.strip().partition("::")
        out.append(resolve(path) + (f"::{qual.strip()}" if sep else ""))
    return out


def recall(memory: MemoryStore, search: Search, synapses: SynapseLayer | None, indexed: bool,
           question: str, budget: int | None, session: str | None, record: bool,
           searched: Sequence[RankedHit] | None = None) -> RecallResult:
    if searched is not None:
        code = [CodeHit(h.node.id, h.node.file, h.score) for h in searched[:RECALL_CODE_HITS]]
    else:
        code = _code_hits(memory, search, question) if indexed else []
    result = memory.recall(question, budget, code, session=session, record=record)
    if session and record and synapses is not None and len(result.hits) > 1:
        try:
            synapses.activate([ATOM_NODE + h.atom.id for h in result.hits], ATOM_NAMESPACE)
        except Exception as e:  # learning fails open
            log.info("recall co-activation not recorded: %s", e)
    return result


def _code_hits(memory: MemoryStore, search: Search, question: str) -> list[CodeHit]:
    """The code search's best hits for the question, when any atom is about code."""
    if not memory.connection().execute(
            "SELECT 1 FROM edges WHERE kind = 'about' AND dst_type != 'atom' LIMIT 1").fetchone():
        return []
    try:
        hits, _, _ = search(question, k=RECALL_CODE_HITS)
    except EngineError as e:
        log.info("recall without code hits: %s", e)
        return []
    return [CodeHit(h.node.id, h.node.file, h.score) for h in hits]


def wakeup_block(memory: MemoryStore, config: WorkspaceConfig, budget: int) -> WakeupMemory:
    """Memory's part of the wake-up pack; nothing (and no memory.db created) when the store
    does not exist, and nothing but a log line when it cannot be read."""
    if not memory.path.exists():
        return WakeupMemory()
    try:
        return memory.wakeup_block(budget, config.directives_max_lines,
                                   config.directives_max_chars)
    except (EngineError, sqlite3.Error) as e:
        log.warning("wake-up without memory: %s", e)
        return WakeupMemory()


def with_memory(result: ContextResult, block: WakeupMemory) -> ContextResult:
    """The wake-up pack with the memory block after L0 + L1 (`layers["memory"]` its size)."""
    if not block.text:
        return result
    context = f"{result.context}\n\n## Memory\n\n{block.text}" if result.context else block.text
    layers = {**result.layers, "memory": block.tokens}
    return dataclasses.replace(result, context=context, tokens=count_tokens(context),
                               layers=layers)


def review_proposals(memory: MemoryStore) -> None:
    try:
        report = memory.review_proposals()
    except EngineError as e:   # a read-only or locked store: the next HEAD move retries
        log.info("proposed memories not reviewed: %s", e)
        return
    if report.promoted or report.rejected:
        log.info("memory: %d proposed atom(s) promoted, %d rejected", len(report.promoted),
                 len(report.rejected))


def hover_memories(memory: MemoryStore, symbol: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Atoms (other than decisions, which hover lists already) about the symbol or a symbol
    that contains it."""
    if not symbol:
        return []
    node = symbol["id"]
    path, _, qual = node.partition("::")
    parts = qual.split(".")
    targets = [f"{path}::{'.'.join(parts[:i])}" for i in range(len(parts), 0, -1)]
    return [{"id": a.id, "type": a.type, "label": a.label, "state": a.state}
            for a in memory.atoms_about(targets) if a.type != "decision"]


def node_memories(memory: MemoryStore, graph: Graph, node: dict[str, Any]
                  ) -> list[dict[str, Any]]:
    """The observatory's node panel: atoms (not decisions, listed beside them) about a file
    or any of its symbols, or about a symbol or one containing it. None (and no memory.db
    created) without a store; a damaged store does not hide the node."""
    if not memory.path.exists():
        return []
    try:
        if node["kind"] != "file":
            return hover_memories(memory, node)
        symbols = [n.id for n in graph.nodes_by_file(node["file"]) if n.kind != "file"]
        return [{"id": a.id, "type": a.type, "label": a.label, "state": a.state}
                for a in memory.atoms_about([node["file"], *symbols]) if a.type != "decision"]
    except (EngineError, sqlite3.Error) as e:
        log.warning("memory of %s unavailable: %s", node["id"], e)
        return []


def file_inbox(memory: MemoryStore, graph: Graph, rel: str) -> list[dict[str, Any]]:
    """Proposed atoms about `rel` or one of its symbols, with the line of the first symbol the
    graph knows (1 when none)."""
    symbols = {n.id: n.start_line for n in graph.nodes_by_file(rel) if n.kind != "file"}
    found = memory.atoms_about([rel, *symbols], states=("proposed",))
    out = []
    for a in found:
        lines = [symbols[t] for t in a.about if t in symbols]
        out.append({"id": a.id, "type": a.type, "label": a.label, "text": a.text,
                    "line": lines[0] if lines else 1})
    return out
