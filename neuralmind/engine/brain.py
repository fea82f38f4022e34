"""What the observatory's Brain view draws: the code graph at file level, grouped in
communities, with the synapses learned from use; and what it shows for one node.

At Django scale (42k nodes) the page gets files and communities only (2.9k nodes),
each file linked to its BRAIN_EDGES_PER_FILE strongest structural neighbours, and
loads a file's symbols when someone drills into it. Lists are positional arrays
(`[path, community, nodes, language]`) to keep the payload small.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from neuralmind.config import BRAIN_EDGES_PER_FILE, BRAIN_FILE_SYMBOLS, BRAIN_SYNAPSES
from neuralmind.engine.navigation import file_decisions
from neuralmind.errors import NotFound
from neuralmind.graph.communities import file_adjacency
from neuralmind.graph.model import file_of

if TYPE_CHECKING:
    from neuralmind.graph.graph import Graph
    from neuralmind.memory.decisions.store import DecisionStore
    from neuralmind.synapse.layer import SynapseLayer

log = logging.getLogger("neuralmind.engine")

ALL_STATUSES = ("ACTIVE", "STALE", "INVALIDATED")
DOC_CHARS = 600          # a node's docstring as the side panel shows it
NEIGHBOURS = 8           # strongest synapses listed for a node


def brain_graph(graph: Graph, synapses: SynapseLayer | None) -> dict[str, Any]:
    """Communities, files, structural file links and learned synapses (see the module doc)."""
    files = sorted(graph.files)
    index = {f: i for i, f in enumerate(files)}
    community = {f: c.id for c in graph.communities for f in c.files}
    counts = {f: len(graph.nodes_by_file(f)) for f in files}
    adjacency = graph.file_adjacency
    if adjacency is None or len(adjacency) != len(files):
        adjacency = file_adjacency(files, graph.nodes, graph.edges)
    links: dict[tuple[int, int], float] = {}
    for i, row in enumerate(adjacency):
        for j, w in sorted(row.items(), key=lambda kv: (-kv[1], kv[0]))[:BRAIN_EDGES_PER_FILE]:
            key = (i, j) if i < j else (j, i)
            links[key] = max(links.get(key, 0.0), w)
    learned: dict[tuple[int, int], float] = {}
    if synapses is not None:
        try:
            strongest = synapses.learned_edges(BRAIN_SYNAPSES)
        except Exception as e:          # learning fails open: the graph is still drawn
            log.warning("learned synapses unavailable: %s", e)
            strongest = []
        for a, b, w, _ in strongest:
            i, j = index.get(file_of(a)), index.get(file_of(b))
            if i is not None and j is not None and i != j:
                key = (i, j) if i < j else (j, i)
                learned[key] = learned.get(key, 0.0) + w
    return {
        "generation": graph.generation,
        "communities": [{"id": c.id, "name": c.name, "size": c.size, "files": len(c.files),
                         "description": c.description} for c in graph.communities],
        "files": [[f, community.get(f, -1), counts[f], graph.files[f].language] for f in files],
        "edges": [[i, j, round(w, 3)] for (i, j), w in sorted(links.items())],
        "synapses": [[i, j, round(w, 4)] for (i, j), w in sorted(learned.items())],
        "nodes": len(graph.nodes),
    }


def node_detail(graph: Graph, decisions: DecisionStore, synapses: SynapseLayer | None,
                node_id: str) -> dict[str, Any]:
    """One node for the side panel: what it is, its decisions, its strongest synapses, the
    files likely next, and a file's symbols (the drill-down)."""
    node = graph.nodes.get(node_id)
    if node is None:
        raise NotFound(f"unknown node {node_id!r}")
    community = next((c for c in graph.communities if c.id == node.community), None)
    out: dict[str, Any] = {
        "id": node.id, "kind": node.kind, "name": node.name, "qualname": node.qualname,
        "file": node.file, "line": node.start_line, "end_line": node.end_line,
        "language": node.language, "signature": node.signature,
        "docstring": node.docstring[:DOC_CHARS],
        "community": {"id": community.id, "name": community.name} if community else None,
        "decisions": [], "synapses": [], "next_likely": [], "memory": [], "symbols": [],
    }
    try:
        found = file_decisions(decisions, node.file, ALL_STATUSES)
        out["decisions"] = [d for d in found if node.kind == "file" or not d["symbols"]
                            or node.qualname in d["symbols"]]
    except Exception as e:              # a damaged decision store does not hide the node
        log.warning("decisions of %s unavailable: %s", node.file, e)
    if synapses is not None:
        try:
            out["synapses"] = [{"id": n, "weight": round(w, 4)}
                               for n, w in synapses.neighbors(node.id, NEIGHBOURS)]
            out["next_likely"] = [{"file": f, "probability": round(p, 4)}
                                  for f, p in synapses.next_likely_file(node.file, 5)]
        except Exception as e:          # learning fails open
            log.warning("synapses of %s unavailable: %s", node.id, e)
    if node.kind == "file":
        symbols = [n for n in graph.nodes_by_file(node.file) if n.id != node.id]
        out["symbols"] = [{"id": n.id, "name": n.qualname or n.name, "kind": n.kind,
                           "line": n.start_line} for n in symbols[:BRAIN_FILE_SYMBOLS]]
        out["symbols_total"] = len(symbols)
    return out
