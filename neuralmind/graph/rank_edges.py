"""PageRank's input per graph generation, made once and patched by saves.

L1's roles (context.summary) run PageRank over every edge but `contains`, with nodes
numbered in `Graph.node_ids` order. Numbering 2.6M edges of the Linux kernel in Python
was most of the 7-8 s the first context answer took after every save that added a
function; numpy's 20 passes are well under a second. So the numbered edges are kept per
generation as arrays (`RankEdges`), and a save patches them (`patched`) from what it
changed: the saved files' node ids (a file's nodes sit in one block, so the positions
after it shift by what it gained or lost) and the resolver's delta (the resolved edges
it removed and added, found by `edge_key` in the sorted lists). The arrays equal a fresh
build's, edge for edge and in the same order, so PageRank's sums are the same bit for
bit. A graph whose layout is not blocks (a node id in two files) is numbered through a
dict instead and never patched.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neuralmind.graph.model import Edge, edge_key, file_of

Graph = Any           # graph.graph.Graph, which imports this module (no import cycle)

_SKIPPED = "contains"        # structure, not reference: PageRank does not walk it


@dataclass(slots=True)
class RankEdges:
    """The edges PageRank walks, as node positions in `Graph.node_ids` order."""

    n: int                            # nodes
    # first position of each file's block (`Graph.extracts` order) and the end; None when
    # the nodes are not in blocks (then `index` numbers them and nothing is patched)
    offsets: np.ndarray | None
    index: dict[str, int] | None
    own: tuple[np.ndarray, np.ndarray]     # the extracts' own edges other than `contains`
    # per edge of `graph.resolved` (same order): its ends' positions, -1 when not walked
    res_src: np.ndarray
    res_dst: np.ndarray
    # resolved edges (not `contains`) with an end that is not a node: a save re-checks them
    missing: list[Edge] = field(default_factory=list)
    # per file, what readers above derived from its extract: file -> (extract, value).
    # Shared by the generations a save patches (a reader checks the extract is its own)
    memo: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def endpoints(self) -> tuple[np.ndarray, np.ndarray]:
        """Sources and targets of every walked edge, in the graph's edge order."""
        walked = self.res_src >= 0
        return (np.concatenate((self.own[0], self.res_src[walked])),
                np.concatenate((self.own[1], self.res_dst[walked])))

    def positions(self, graph: Graph, path: str) -> np.ndarray:
        """The positions of `path`'s nodes, in `graph.nodes_by_file(path)` order."""
        if self.offsets is not None:
            at = graph.layout()[0][path]
            return np.arange(self.offsets[at], self.offsets[at + 1])
        assert self.index is not None
        return np.fromiter((self.index[n.id] for n in graph.nodes_by_file(path)),
                           dtype=np.int64)


def rank_edges(graph: Graph) -> RankEdges:
    """The graph's `RankEdges`: kept on the graph (a save hands a patched copy on), else
    made with one pass over the edges."""
    held = graph.rank_edges
    if held is None:
        held = graph.rank_edges = _made(graph)
    return held


def _blocks(graph: Graph) -> np.ndarray | None:
    """Block offsets when every file's distinct ids are its own and the edge list is the
    extracts' edges then the resolved ones (`Graph.from_parts`), else None."""
    if not graph.extracts:
        return None
    _, counts, edge_counts = graph.layout()
    if sum(counts) != len(graph.nodes) or sum(edge_counts) + len(graph.resolved) != len(
            graph.edges):
        return None
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _made(graph: Graph) -> RankEdges:
    offsets = _blocks(graph)
    ids = graph.node_ids()
    index = {i: k for k, i in enumerate(ids)}
    if offsets is None:         # main's walk, over the edge list as it is
        src, dst = _numbered(index, [e for e in graph.edges if e.kind != _SKIPPED])
        return RankEdges(len(ids), None, index, (src, dst), np.zeros(0, dtype=np.int64),
                         np.zeros(0, dtype=np.int64))
    own = [e for ex in graph.extracts.values() for e in ex.edges if e.kind != _SKIPPED]
    res_src, res_dst = _numbered(index, graph.resolved, keep_all=True)
    missing = [graph.resolved[i] for i in np.flatnonzero(res_src < 0)
               if graph.resolved[i].kind != _SKIPPED]
    return RankEdges(len(ids), offsets, None, _numbered(index, own), res_src, res_dst, missing)


def _numbered(index: dict[str, int], edges: list[Edge], keep_all: bool = False,
              ) -> tuple[np.ndarray, np.ndarray]:
    """Ends' positions (-1 for an end that is not a node, and both -1 for a `contains`
    edge or a missing end); with `keep_all` one entry per edge, else walked edges only."""
    get = index.get
    ends = np.fromiter(((get(e.source, -1), get(e.target, -1)) if e.kind != _SKIPPED
                        else (-1, -1) for e in edges), dtype=(np.int64, 2), count=len(edges))
    src, dst = ends[:, 0].copy(), ends[:, 1].copy()      # one pass over the edges
    skip = (src < 0) | (dst < 0)
    if not keep_all:
        return src[~skip], dst[~skip]
    src[skip] = -1
    dst[skip] = -1
    return src, dst


def patched(prev: Any, graph: Any, changed: list[str],
            delta: tuple[list[Edge], list[Edge]]) -> RankEdges | None:
    """`prev`'s RankEdges brought to `graph`, which `Graph.patched` made from `prev` with
    the `changed` files re-extracted and the resolved edges `delta` (removed, added)
    changed; None when prev has none or the change is not one this follows (the next
    answer then numbers the edges again)."""
    old = prev.rank_edges
    if old is None or old.offsets is None:
        return None
    if any(e.kind != _SKIPPED for p in changed
           for e in (*prev.extracts[p].edges, *graph.extracts[p].edges)):
        return None                               # own edges other than `contains`: none today
    index, counts, _ = graph.layout()
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    before, after = prev.resolved, graph.resolved
    removed, added = delta
    if (len(offsets) != len(old.offsets) or offsets[-1] != len(graph.nodes)
            or len(before) - len(removed) + len(added) != len(after)):
        return None
    res_src, res_dst, own = old.res_src, old.res_dst, old.own
    lost: list[int] = []                  # positions (in `before`) of edges losing an end
    if not np.array_equal(offsets, old.offsets) or any(
            _ids(prev, p) != _ids(graph, p) for p in changed):
        remap = _remap(prev, graph, changed, old.offsets, offsets, index)
        if remap is None or len(own[0]):     # own edges are not followed (none today)
            return None
        walked = res_src >= 0
        res_src = np.where(walked, remap[np.maximum(res_src, 0)], -1)
        res_dst = np.where(walked, remap[np.maximum(res_dst, 0)], -1)
        gone_end = walked & ((res_src < 0) | (res_dst < 0))
        lost = np.flatnonzero(gone_end).tolist()
    gone = sorted(_at(before, e) for e in removed)   # type: ignore[type-var]
    if any(i is None for i in gone):
        return None
    # every edge whose ends are looked up again: the added ones, the missing ones (an end
    # may be a node now) and those that lost an end; by their place in `after`
    again = [*added, *old.missing, *(before[i] for i in lost)]
    places = {i for i in (_at(after, e) for e in again) if i is not None}
    if len(gone):
        res_src, res_dst = np.delete(res_src, gone), np.delete(res_dst, gone)
    if added:
        at = np.array(sorted(_at(after, e) for e in added), dtype=np.int64)  # type: ignore
        res_src = np.insert(res_src, at - np.arange(len(at)), -1)
        res_dst = np.insert(res_dst, at - np.arange(len(at)), -1)
    elif places and res_src is old.res_src:
        res_src, res_dst = res_src.copy(), res_dst.copy()
    if len(res_src) != len(after):
        return None
    ends = _EndFinder(graph, offsets, index)
    missing: list[Edge] = []
    for i in sorted(places):
        e = after[i]
        a, b = ends.find(e.source), ends.find(e.target)
        if e.kind == _SKIPPED or a < 0 or b < 0:
            a = b = -1
            if e.kind != _SKIPPED:
                missing.append(e)
        res_src[i], res_dst[i] = a, b
    if ends.broken:
        return None
    return RankEdges(int(offsets[-1]), offsets, None, own, res_src, res_dst, missing, old.memo)


def _ids(graph: Graph, path: str) -> list[str]:
    return [n.id for n in graph.nodes_by_file(path)]


def _remap(prev: Graph, graph: Graph, changed: list[str], old_offsets: np.ndarray,
           offsets: np.ndarray, index: dict[str, int]) -> np.ndarray | None:
    """Old position -> new position (-1: the id is gone) for every node of `prev`."""
    n_old = int(old_offsets[-1])
    old_file = np.repeat(np.arange(len(old_offsets) - 1), np.diff(old_offsets))
    remap = np.arange(n_old, dtype=np.int64) - old_offsets[old_file] + offsets[old_file]
    for p in changed:
        at = index[p]
        new_local = {i: k for k, i in enumerate(_ids(graph, p))}
        ids = _ids(prev, p)
        if len(ids) != old_offsets[at + 1] - old_offsets[at]:
            return None
        remap[old_offsets[at]:old_offsets[at + 1]] = [
            offsets[at] + new_local[i] if i in new_local else -1 for i in ids]
    return remap


def _at(edges: list[Edge], e: Edge) -> int | None:
    """Where `e` (by `edge_key`) sits in the sorted `edges`, or None."""
    key = edge_key(e)
    i = bisect.bisect_left(edges, key, key=edge_key)
    return i if i < len(edges) and edge_key(edges[i]) == key else None


class _EndFinder:
    """A node id's position from its file's block (a per-file dict, made on first ask)."""

    def __init__(self, graph: Graph, offsets: np.ndarray, index: dict[str, int]) -> None:
        self.graph, self.offsets, self.index = graph, offsets, index
        self.local: dict[str, dict[str, int]] = {}
        self.broken = False           # an id that is a node but not in its file's block

    def find(self, nid: str) -> int:
        path = file_of(nid)
        at = self.index.get(path)
        if at is None:
            if nid in self.graph.nodes:
                self.broken = True
            return -1
        local = self.local.get(path)
        if local is None:
            local = self.local[path] = {i: k for k, i in enumerate(_ids(self.graph, path))}
        k = local.get(nid)
        if k is None:
            if nid in self.graph.nodes:
                self.broken = True
            return -1
        return int(self.offsets[at]) + k
