"""Semantic coverage and what an embedding build should reach first (issue #21 part 2).

Graph questions asked while a cold index is being embedded: which files sit near an
edit (the service's focus sends them to the build first), which asked-about files have
every node embedded (status), and how much other code refers to a node (what the
`max_embedded_nodes` cap keeps a vector for first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from neuralmind import heap
from neuralmind.config import ATTENTION_NEIGHBOURS
from neuralmind.graph.model import file_of
from neuralmind.index.save_vectors import changed_text, embedded_hashes

if TYPE_CHECKING:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.graph.store import Graph
    from neuralmind.index.search_index import SearchIndex, VectorsRead


def nearby_files(graph: Graph, rel: str, k: int = ATTENTION_NEIGHBOURS) -> list[str]:
    """Files an edit of `rel` is likely to touch next: its import neighbours, then the
    files of its folder."""
    return files_near(graph, [rel], k)[rel]


def files_near(graph: Graph, rels: Iterable[str], k: int = ATTENTION_NEIGHBOURS,
               ) -> dict[str, list[str]]:
    """`nearby_files` of each of `rels`, with one pass over the edges and the files for all."""
    rels = list(dict.fromkeys(rels))
    into = graph.importers_of(rels)
    folders: dict[str, list[str]] = {rel.rpartition("/")[0]: [] for rel in rels}
    for f in graph.files:
        if (inside := folders.get(f.rpartition("/")[0])) is not None:
            inside.append(f)
    near: dict[str, list[str]] = {}
    for rel in rels:
        linked = [e.target for e in graph.out_edges(rel) if e.kind == "imports"]
        linked += into[rel]
        linked += sorted(folders[rel.rpartition("/")[0]])
        near[rel] = [f for f in dict.fromkeys(linked) if f != rel and f in graph.files][:k]
    return near


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


def refresh_index(index: SearchIndex, read: VectorsRead | None = None) -> None:
    """Load what another process wrote to the search index (a build's vector slices:
    only the vectors are read again when only they changed, or taken from `read`)."""
    if index.reload_if_changed(read):
        heap.return_freed_memory()


def semantic_counts(index: SearchIndex) -> dict[str, Any]:
    """The status fields of semantic coverage."""
    nodes, vectors = index.node_count, index.vector_count
    # nodes left to their file's vector by max_embedded_nodes
    return {"file_level_nodes": max(0, nodes - vectors - index.pending),
            "semantic_coverage": round(vectors / nodes, 4) if nodes else 0.0}


class TextChanges:
    """Per file, the nodes whose embedded text a save or an unsaved buffer changed and
    that have not been handed to the embedding yet (a buffer's, until it is saved). Only
    these get a vector for a save (index/save_vectors.py says why)."""

    def __init__(self) -> None:
        self._by_file: dict[str, set[str]] = {}

    @staticmethod
    def hashes(index: SearchIndex, graph: Any, ids: Iterable[str]) -> dict[str, str]:
        """The embedded-text hashes of `ids` in `graph` (before a save)."""
        return embedded_hashes(graph, index.root, ids, index.text_options)

    def note(self, index: SearchIndex, graph: Any, before: Mapping[str, str],
             ids: Iterable[str]) -> None:
        """`graph` is the generation after the save: record its changed texts."""
        for i in changed_text(before, self.hashes(index, graph, ids)):
            self._by_file.setdefault(file_of(i), set()).add(i)

    def take(self, files: Iterable[str]) -> list[str]:
        """The changed nodes of the saved `files`, handed over (forgotten here)."""
        return sorted(i for f in files for i in self._by_file.pop(f, ()))
