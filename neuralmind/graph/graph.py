"""`Graph`: one complete generation of the code graph in memory, with its indexes.

Nodes, edges, files and communities as the builder made them or `store.load_graph`
read them; per-file and per-node indexes are built on first use. `release` empties
a replaced generation piece by piece (dropping a Django-sized graph at once held
the GIL ~50-150 ms).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.graph.model import SCHEMA_VERSION, Edge, FileExtract, Node, file_of
from neuralmind.graph.rank_edges import patched as patched_rank_edges
from neuralmind.heap import RELEASE_CHUNK, release_dict

if TYPE_CHECKING:
    from collections.abc import Iterable

    from neuralmind.graph.resolve import Resolver


@dataclass(slots=True)
class FileInfo:
    sha1: str
    language: str
    size: int
    mtime_ns: int
    partial: bool = False
    error: str = ""
    lines: int = 0            # line count of the file as extracted (for span validation)


@dataclass(slots=True)
class Community:
    id: int
    name: str
    files: list[str]
    top_symbols: list[str]    # node ids, most central first
    description: str
    size: int                 # number of nodes in the community


class Graph:
    """Nodes, edges, files and communities, with indexes built on first use."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        # every edge: each file's own (in `extracts` order), then `resolved`. None after a
        # save (`patched`) until read: a save reads none of it, and the kernel's 2.6M cost
        # ~45 ms to copy, then more to drop with the generation (see `edges`)
        self._edges: list[Edge] | None = []
        self.files: dict[str, FileInfo] = {}
        self.communities: list[Community] = []
        self.extracts: dict[str, FileExtract] = {}   # per file, with unresolved references
        self.resolved: list[Edge] = []               # cross-file edges from resolution
        self.meta: dict[str, Any] = {}
        self.schema: int = SCHEMA_VERSION
        self.generation: int = 0
        self.token: str = ""          # random per save: tells this graph from any other
        self.file_adjacency: list[dict[int, float]] | None = None   # kept by communities
        self.centrality: dict[str, float] | None = None              # kept by communities
        self.partition: Any = None    # sorted files, community per file (communities.py)
        # per community id, what re-ranking it after a save needs (community_rank.Ranking)
        self.rankings: dict[int, Any] = {}
        # files per language, partial files, failed files (graph.build's report, every save)
        self.file_stats: tuple[Counter[str], set[str], set[str]] | None = None
        # id(community) -> (community, its stored JSON): a save encodes only changed ones
        self.community_texts: dict[int, tuple[Community, str]] = {}
        # L1's community roles (context.summary), filled on first use. One holder per set
        # of what they read (nodes' names and docstrings, edges, communities): a save that
        # changes none of it hands the same holder on, so its first answer does not run
        # PageRank over the whole graph again (~0.25 s at 20k files, seconds on the kernel)
        self.roles_cache: dict[str, Any] = {}
        # L1's PageRank input (graph.rank_edges.RankEdges), made on first use; a save
        # patches it from what it changed (numbering the kernel's edges again: ~5 s)
        self.rank_edges: Any = None
        # `resolved` per file of the edges' source, in the same order (a store row each)
        self.out_by_file: dict[str, list[Edge]] | None = None
        # The resolution state a save patches (never stored; see graph.resolve.Resolver)
        self.resolver: Resolver | None = None
        self.built_at: float = 0.0
        # Unsaved editor buffers this graph extracted instead of the file on disk (rel ->
        # text; never stored): readers of source lines take them from here
        self.buffers: dict[str, str] = {}
        self._by_file: dict[str, list[Node]] | None = None
        self._file_nodes: dict[str, list[Node]] = {}   # nodes_by_file, per file read
        self.heuristic: int | None = None    # edges with resolved=False (heuristic_edges)
        self._out: dict[str, list[Edge]] | None = None
        self._in: dict[str, list[Edge]] | None = None
        # Where each file's nodes and own edges sit in `nodes` and `edges` (see `patched`):
        # file -> position in `extracts`, distinct node ids and own edges per position.
        # The positions are shared by generations with the same files.
        self._layout: tuple[dict[str, int], list[int], list[int]] | None = None
        # `nodes` is in `from_parts` order (False after a save added ids: see node_ids)
        self.ordered = True
        # (the `files` dict counted, its size, files per language): see language_counts
        self._languages: tuple[dict[str, FileInfo], int, dict[str, int]] | None = None

    @property
    def edges(self) -> list[Edge]:
        """Every edge: the files' own in `extracts` order, then `resolved` (`from_parts`'s
        order). Made on first read for a saved generation: full community detection,
        `summary`, `validate` and the walk read it; a save does not."""
        if self._edges is None:
            edges = [e for ex in self.extracts.values() for e in ex.edges]
            edges += self.resolved
            self._edges = edges
        return self._edges

    @edges.setter
    def edges(self, value: list[Edge]) -> None:
        self._edges = value

    def edge_count(self) -> int:
        """len(edges), without making them (a save's report)."""
        if self._edges is not None:
            return len(self._edges)
        return sum(self.layout()[2]) + len(self.resolved)

    def language_counts(self) -> dict[str, int]:
        """Files per language, in the order `files` first names each (L0's languages,
        in every answer: a count was ~0.13 ms over the Django subset's 1,404 files, and
        grows with the tree). Counted again when `files` is another dict or changed size;
        a caller must not change the result."""
        memo = self._languages
        if memo is None or memo[0] is not self.files or memo[1] != len(self.files):
            langs: dict[str, int] = {}
            for info in self.files.values():
                langs[info.language] = langs.get(info.language, 0) + 1
            memo = self._languages = (self.files, len(self.files), langs)
        return memo[2]

    def buffer_lines(self, rel: str) -> list[str] | None:
        """The lines of `rel` as extracted when that was an unsaved buffer, else None (read
        the file)."""
        text = self.buffers.get(rel)
        return None if text is None else text.splitlines()

    @classmethod
    def from_parts(cls, extracts: dict[str, FileExtract], files: dict[str, FileInfo],
                   resolved: list[Edge]) -> Graph:
        """Assemble a graph from per-file extracts (sorted by path) and resolved edges."""
        g = cls()
        for path in sorted(extracts):
            ex = extracts[path]
            g.extracts[path] = ex
            for n in ex.nodes:
                g.nodes[n.id] = n
            g.edges.extend(ex.edges)
        g.files = {p: files[p] for p in sorted(files)}
        g.resolved = resolved
        g.edges.extend(resolved)
        return g

    def node_ids(self) -> list[str]:
        """Node ids in `from_parts` order (files sorted, each file's nodes in order): what
        readers whose output follows node order iterate (L1's PageRank, keyword texts, a
        full index update), so a patched generation gives a fresh build's answers."""
        if self.ordered or not self.extracts:
            return list(self.nodes)
        return list(dict.fromkeys(n.id for ex in self.extracts.values() for n in ex.nodes))

    def layout(self) -> tuple[dict[str, int], list[int], list[int]]:
        """Per file (in `extracts` order, which `from_parts` sorts): its position, and how
        many distinct node ids and own edges it puts into `nodes` and `edges`. Built once
        per loaded graph (a pass over every node); `patched` carries it over."""
        if self._layout is None:
            self._layout = ({p: i for i, p in enumerate(self.extracts)},
                            [len({n.id for n in ex.nodes}) for ex in self.extracts.values()],
                            [len(ex.edges) for ex in self.extracts.values()])
        return self._layout

    @classmethod
    def patched(cls, prev: Graph, extracts: dict[str, FileExtract],
                files: dict[str, FileInfo], resolved: list[Edge], changed: list[str],
                delta: tuple[list[Edge], list[Edge]] | None = None) -> Graph | None:
        """`from_parts(extracts, files, resolved)` built from `prev` in time proportional to
        the `changed` files rather than the graph: `prev`'s node dict copied with those
        files' nodes replaced (ids a file gained go last: `ordered` is then False and
        `node_ids` gives `from_parts`'s order) and its edge list with their slices replaced
        (the same order). Only when the same files are there (`extracts` is
        `prev.extracts` with `changed` re-extracted, in the same order) and `prev` was
        assembled this way; else None. Why: assembling the Linux kernel's 835k-node dict
        again took 0.5-0.7 s of every save. With the resolver's `delta` (edges removed,
        added), `prev`'s PageRank input is patched too (graph.rank_edges)."""
        if (not changed or len(extracts) != len(prev.extracts) or len(files) != len(extracts)
                or any(p not in prev.extracts or p not in extracts or p not in files
                       for p in changed) or list(files) != list(extracts)):
            return None
        index, node_counts, edge_counts = prev.layout()
        made = prev._edges          # None: made from `extracts` when read, so it matches
        if ((made is not None and len(made) != sum(edge_counts) + len(prev.resolved))
                or len(prev.nodes) != sum(node_counts)):
            return None
        node_counts, edge_counts = list(node_counts), list(edge_counts)
        cuts = []      # (position, new extract, its distinct ids), by position
        same_ids = True
        for p in sorted(set(changed), key=index.__getitem__):
            i, old, new = index[p], prev.extracts[p], extracts[p]
            ids = dict.fromkeys(n.id for n in new.nodes)
            if same_ids and list(ids) != list(dict.fromkeys(n.id for n in old.nodes)):
                same_ids = False
            cuts.append((i, new, ids))
            node_counts[i], edge_counts[i] = len(ids), len(new.edges)
        g = cls()
        g.extracts = extracts
        g.files = files
        # `copy`, not `dict(...)`: both clone the table in one memcpy (~20 ms on the kernel's
        # 835k ids) when it has no deleted slot, but after a save deleted an id `dict(...)`
        # inserts every key again (~0.2 s) while `copy` still clones up to a third deleted
        g.nodes = prev.nodes.copy()
        for _, new, ids in cuts:
            if not same_ids:           # ids the file no longer has go; new ones go last
                for gone in dict.fromkeys(n.id for n in prev.extracts[new.path].nodes):
                    if gone not in ids:
                        del g.nodes[gone]
            g.nodes.update((n.id, n) for n in new.nodes)
        g.ordered = prev.ordered and same_ids
        g._edges = None                  # made from `extracts` and `resolved` when read
        if len(g.nodes) != sum(node_counts):     # an id also in another file: rare, as before
            return None
        g.resolved = resolved
        g._layout = (index, node_counts, edge_counts)
        if delta is not None:            # the resolver's (removed, added) since `prev`
            g.rank_edges = patched_rank_edges(prev, g, changed, delta)
        return g

    def __len__(self) -> int:
        return len(self.nodes)

    def release(self) -> None:
        """Empty this graph piece by piece, for a long-lived process that drops a whole
        generation (a reload). Dropping a Django graph at once frees ~10^6 objects in one
        C call, ~150 ms with the GIL held; piecewise, other threads run in between. Only
        for a graph nobody else uses: it is empty afterwards."""
        if self.resolver is not None:
            self.resolver.release()
            self.resolver = None
        for table in (self.extracts, self.nodes, self.files, self.out_by_file or {},
                      self._by_file or {}, self._file_nodes, self._out or {}, self._in or {},
                      self.centrality or {}, self.rankings, self.community_texts):
            release_dict(table)
        for rows in (self._edges or [], self.resolved, self.file_adjacency or []):
            while rows:
                del rows[-RELEASE_CHUNK * 16:]
        self._by_file = self._out = self._in = self.rank_edges = None

    def nodes_by_file(self, path: str) -> list[Node]:
        """`path`'s nodes in graph order. Read from its extract when the graph has one, so
        a new generation (each save makes one) does not index every node again: the Linux
        kernel's 835k took ~0.5 s per save, twice (before and after)."""
        ex = self.extracts.get(path)
        if ex is not None:       # ids are unique per graph; a repeated one keeps its last node
            found = self._file_nodes.get(path)
            if found is None:
                found = self._file_nodes[path] = list({n.id: n for n in ex.nodes}.values())
            return found
        if self._by_file is None:    # a graph assembled without extracts
            idx: dict[str, list[Node]] = defaultdict(list)
            for n in self.nodes.values():
                idx[n.file].append(n)
            self._by_file = dict(idx)
        return self._by_file.get(path, [])

    def file_out_edges(self, path: str) -> dict[str, list[Edge]]:
        """The edges leaving `path`'s nodes, per source node id, in graph order (its
        extract's edges, then its resolved edges in `edge_key` order). From the file's own
        rows when the graph keeps its resolved edges per file (loaded, or patched by a
        save), so answers and saves never index all edges: 2.6M on the Linux kernel, seconds
        of the engine thread and ~0.3 GB per generation."""
        ex = self.extracts.get(path)
        if ex is None or self.out_by_file is None:
            out = self._out_index()
            return {n.id: out[n.id] for n in self.nodes_by_file(path) if n.id in out}
        by_source: dict[str, list[Edge]] = {}
        for rows in (ex.edges, self.out_by_file.get(path, ())):
            for e in rows:
                by_source.setdefault(e.source, []).append(e)
        return by_source

    def _out_index(self) -> dict[str, list[Edge]]:
        if self._out is None:
            out: dict[str, list[Edge]] = defaultdict(list)
            for e in self.edges:
                out[e.source].append(e)
            self._out = dict(out)
        return self._out

    def out_edges(self, node_id: str) -> list[Edge]:
        return self.file_out_edges(file_of(node_id)).get(node_id, [])

    def in_edges(self, node_id: str) -> list[Edge]:
        """Edges into `node_id`, in graph order (an index of every edge, built on first use
        per generation: only embedding order and the files near a first edit ask)."""
        if self._in is None:
            inn: dict[str, list[Edge]] = defaultdict(list)
            for e in self.edges:
                inn[e.target].append(e)
            self._in = dict(inn)
        return self._in.get(node_id, [])

    def importers(self, node_id: str) -> list[str]:
        """Sources of the `imports` edges into `node_id`, in graph order. From the in-edge
        index when built, else one pass over the resolved edges (an import into another
        file's node is always cross-file): the files near a first edit are asked once per
        file, and indexing every edge of a new generation for it stalled the engine thread
        ~29 ms per save at 20k files."""
        if self._in is not None:
            return [e.source for e in self._in.get(node_id, ()) if e.kind == "imports"]
        return [e.source for e in self.resolved if e.target == node_id and e.kind == "imports"]

    def importers_of(self, targets: Iterable[str]) -> dict[str, list[str]]:
        """`importers` of each of `targets`, from one pass over the resolved edges (the
        files near several first edits are found together: a pass each was ~250 ms of the
        server's engine thread per file on the Linux kernel, KERN13)."""
        found: dict[str, list[str]] = {t: [] for t in targets}
        if self._in is not None:
            return {t: self.importers(t) for t in found}
        for e in self.resolved:
            if e.kind == "imports" and (into := found.get(e.target)) is not None:
                into.append(e.source)
        return found

    def heuristic_edges(self) -> int:
        """Edges a unique-name guess resolved (`resolved=False`: only cross-file edges can
        be), counted once per generation; a save carries the count over from the one before
        (2.6M edges on the Linux kernel: ~0.1 s per save to count again)."""
        if self.heuristic is None:
            self.heuristic = sum(1 for e in self.edges if not e.resolved)
        return self.heuristic

    def community(self, cid: int) -> Community | None:
        for c in self.communities:
            if c.id == cid:
                return c
        return None

    def summary(self) -> dict[str, Any]:
        """Counts for `stats`, status requests and build reports."""
        # Generators, not map(attrgetter): a C-only pass over ~10^5 edges would hold the
        # GIL for tens of ms; a generator lets other threads in every few ms.
        by_lang = Counter(info.language for info in self.files.values())
        kinds = Counter(n.kind for n in self.nodes.values())
        edge_kinds = Counter(e.kind for e in self.edges)
        heuristic = sum(1 for e in self.edges if not e.resolved)
        resolved = len(self.edges) - heuristic
        return {
            "schema": self.schema,
            "generation": self.generation,
            "built_at": self.built_at,
            "files": len(self.files),
            "files_by_language": dict(sorted(by_lang.items())),
            "partial_files": sorted(p for p, i in self.files.items() if i.partial),
            "failed_files": sorted(p for p, i in self.files.items() if i.error),
            "nodes": len(self.nodes),
            "nodes_by_kind": dict(sorted(kinds.items())),
            "edges": len(self.edges),
            "edges_by_kind": dict(sorted(edge_kinds.items())),
            "edges_resolved": resolved,
            "edges_heuristic": heuristic,
            "communities": len(self.communities),
            "skipped": self.meta.get("skipped", {}),
        }


# --- serialisation -----------------------------------------------------------------------


def group_by_source_file(graph: Graph) -> dict[str, list[Edge]]:
    """Resolved edges per file of their source node (edge order kept)."""
    if graph.out_by_file is not None:
        return graph.out_by_file
    out: dict[str, list[Edge]] = defaultdict(list)
    for e in graph.resolved:
        n = graph.nodes.get(e.source)
        out[n.file if n is not None else file_of(e.source)].append(e)
    return out


def assign_node_communities(graph: Graph) -> None:
    for n in graph.nodes.values():
        n.community = -1
    for c in graph.communities:
        for f in c.files:
            for n in graph.nodes_by_file(f):
                n.community = c.id


# --- the database ------------------------------------------------------------------------


def extracted_lines(graph: Graph, root: Path, rel: str) -> list[str] | None:
    """`rel`'s lines as `graph` extracted them: an unsaved editor buffer's when the graph
    holds one, else the file on disk (None when it cannot be read)."""
    buffered = graph.buffer_lines(rel)
    if buffered is not None:
        return buffered
    try:
        return (Path(root) / rel).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
