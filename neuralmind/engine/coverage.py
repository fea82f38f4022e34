"""Semantic coverage and what an embedding build should reach first (issue #21 part 2).

Graph questions asked while a cold index is being embedded: which files sit near an
edit (the service's focus sends them to the build first), which asked-about files have
every node embedded (status), and how much other code refers to a node (what the
`max_embedded_nodes` cap keeps a vector for first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from neuralmind import heap
from neuralmind.config import ATTENTION_NEIGHBOURS

if TYPE_CHECKING:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.graph.store import Graph
    from neuralmind.index.search_index import SearchIndex


def nearby_files(graph: Graph, rel: str, k: int = ATTENTION_NEIGHBOURS) -> list[str]:
    """Files an edit of `rel` is likely to touch next: its import neighbours, then the
    files of its folder."""
    linked = [e.target for e in graph.out_edges(rel) if e.kind == "imports"]
    linked += graph.importers(rel)
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


def embed_pending(graph: Graph, index: SearchIndex, config: WorkspaceConfig,
                  progress: Callable[[int, int], None] | None = None,
                  attention: Callable[[], Sequence[str]] = tuple,
                  saved: Callable[[int], None] | None = None, settle: bool = True) -> int:
    """Embed what the last full update left pending: `attention()`'s files first, then
    every file, then the other symbols, up to `config.max_embedded_nodes` vectors (0: no
    cap; see index/embed_order.py). `settle=False`: a server's build child, which writes
    only the vectors (index/vector_handoff.py)."""
    return index.embed_pending(graph, attention=attention,
                               limit=config.max_embedded_nodes or None,
                               importance=lambda i: referenced(graph, i),
                               progress=progress, saved=saved, settle=settle)


def refresh_index(index: SearchIndex) -> None:
    """Load what another process wrote to the search index (a build's vector slices:
    only the vectors are read again when only they changed)."""
    if index.reload_if_changed():
        heap.return_freed_memory()


def semantic_counts(index: SearchIndex) -> dict[str, Any]:
    """The status fields of semantic coverage."""
    nodes, vectors = index.node_count, index.vector_count
    # nodes left to their file's vector by max_embedded_nodes
    return {"file_level_nodes": max(0, nodes - vectors - index.pending),
            "semantic_coverage": round(vectors / nodes, 4) if nodes else 0.0}
