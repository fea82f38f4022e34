"""Semantic coverage and what an embedding build should reach first (issue #21 part 2).

Graph questions asked while a cold index is being embedded: which files sit near an
edit (the service's focus sends them to the build first), which asked-about files have
every node embedded (status), and how much other code refers to a node (what the
`max_embedded_nodes` cap keeps a vector for first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from neuralmind.config import ATTENTION_NEIGHBOURS

if TYPE_CHECKING:
    from neuralmind.graph.store import Graph
    from neuralmind.index.search_index import SearchIndex


def nearby_files(graph: Graph, rel: str, k: int = ATTENTION_NEIGHBOURS) -> list[str]:
    """Files an edit of `rel` is likely to touch next: its import neighbours, then the
    files of its folder."""
    linked = [e.target for e in graph.out_edges(rel) if e.kind == "imports"]
    linked += [e.source for e in graph.in_edges(rel) if e.kind == "imports"]
    folder = rel.rpartition("/")[0]
    linked += sorted(f for f in graph.files if f.rpartition("/")[0] == folder)
    return [f for f in dict.fromkeys(linked) if f != rel and f in graph.files][:k]


def semantic_files(graph: Graph, index: SearchIndex, files: Sequence[str]) -> int:
    """How many of `files` are indexed with no node waiting for its vector."""
    return sum(1 for f in files if f in graph.files
               and not any(index.waiting(n.id) for n in graph.nodes_by_file(f)))


def referenced(graph: Graph, node_id: str) -> int:
    """How often other code refers to a node (calls, imports, inheritance)."""
    return sum(e.count for e in graph.in_edges(node_id) if e.kind != "contains")
