"""The stored code graph: one schema-versioned JSON file, `<state>/graph.json`.

Why JSON and not SQLite: the graph is always used whole (communities, resolution and
every consumer read all of it), is written by one builder under a lock, and must be
replaced atomically so a killed build leaves the previous graph readable. A single
file written with temp-file + fsync + rename gives exactly that, readers detect a new
generation by its mtime, and `json` (C-accelerated) loads Django's graph (~2.8k files,
~40k nodes plus every file's unresolved references) in well under a second. SQLite
would add row-by-row object construction for the same whole-graph reads and a second
consistency model next to the rename. Rows are positional arrays to keep the file
small; the per-file extracts (nodes, intra-file edges, references) are stored so an
incremental build re-resolves without re-parsing unchanged files.

Layout:
    {"format": "neuralmind-graph", "schema": N, "generation": G, "built_at": T,
     "meta": {...},
     "files": {path: {"sha1", "language", "size", "mtime_ns", "lines", "partial", "error",
                      "nodes": [[id, kind, name, qualname, start, end, language,
                                 signature, docstring, content_hash, community], ...],
                      "edges": [edge rows], "refs": [reference rows]}},
     "edges": [cross-file edge rows from resolution],
     "communities": [{"id", "name", "files", "top_symbols", "description", "size"}]}
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from neuralmind.graph.model import SCHEMA_VERSION, Edge, FileExtract, Node, Reference
from neuralmind.statedir import atomic_write_bytes, move_aside

log = logging.getLogger("neuralmind.graph")

GRAPH_FILE = "graph.json"
FORMAT = "neuralmind-graph"
KNOWN_SCHEMAS = frozenset({SCHEMA_VERSION})


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
        self.edges: list[Edge] = []
        self.files: dict[str, FileInfo] = {}
        self.communities: list[Community] = []
        self.extracts: dict[str, FileExtract] = {}   # per file, with unresolved references
        self.resolved: list[Edge] = []               # cross-file edges from resolution
        self.meta: dict[str, Any] = {}
        self.schema: int = SCHEMA_VERSION
        self.generation: int = 0
        self.built_at: float = 0.0
        self._by_file: dict[str, list[Node]] | None = None
        self._out: dict[str, list[Edge]] | None = None
        self._in: dict[str, list[Edge]] | None = None

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
        g.resolved = list(resolved)
        g.edges.extend(g.resolved)
        return g

    def __len__(self) -> int:
        return len(self.nodes)

    def nodes_by_file(self, path: str) -> list[Node]:
        if self._by_file is None:
            idx: dict[str, list[Node]] = defaultdict(list)
            for n in self.nodes.values():
                idx[n.file].append(n)
            self._by_file = dict(idx)
        return self._by_file.get(path, [])

    def _edge_indexes(self) -> tuple[dict[str, list[Edge]], dict[str, list[Edge]]]:
        if self._out is None or self._in is None:
            out: dict[str, list[Edge]] = defaultdict(list)
            inn: dict[str, list[Edge]] = defaultdict(list)
            for e in self.edges:
                out[e.source].append(e)
                inn[e.target].append(e)
            self._out, self._in = dict(out), dict(inn)
        return self._out, self._in

    def out_edges(self, node_id: str) -> list[Edge]:
        return self._edge_indexes()[0].get(node_id, [])

    def in_edges(self, node_id: str) -> list[Edge]:
        return self._edge_indexes()[1].get(node_id, [])

    def community(self, cid: int) -> Community | None:
        for c in self.communities:
            if c.id == cid:
                return c
        return None

    def summary(self) -> dict[str, Any]:
        """Counts for `stats`, status requests and build reports."""
        by_lang: dict[str, int] = defaultdict(int)
        for info in self.files.values():
            by_lang[info.language] += 1
        kinds: dict[str, int] = defaultdict(int)
        for n in self.nodes.values():
            kinds[n.kind] += 1
        edge_kinds: dict[str, int] = defaultdict(int)
        resolved = heuristic = 0
        for e in self.edges:
            edge_kinds[e.kind] += 1
            if e.resolved:
                resolved += 1
            else:
                heuristic += 1
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

def _node_row(n: Node) -> list[Any]:
    return [n.id, n.kind, n.name, n.qualname, n.start_line, n.end_line, n.language,
            n.signature, n.docstring, n.content_hash, n.community]


def _node_from_row(path: str, r: list[Any]) -> Node:
    return Node(r[0], r[1], r[2], r[3], path, int(r[4]), int(r[5]), r[6], r[7], r[8], r[9],
                int(r[10]))


def graph_to_json(graph: Graph) -> dict[str, Any]:
    files: dict[str, Any] = {}
    for path, info in graph.files.items():
        ex = graph.extracts.get(path)
        files[path] = {
            "sha1": info.sha1, "language": info.language, "size": info.size,
            "mtime_ns": info.mtime_ns, "lines": info.lines, "partial": info.partial,
            "error": info.error,
            "nodes": [_node_row(n) for n in ex.nodes] if ex else [],
            "edges": [e.to_json() for e in ex.edges] if ex else [],
            "refs": [r.to_json() for r in ex.references] if ex else [],
        }
    return {
        "format": FORMAT,
        "schema": graph.schema,
        "generation": graph.generation,
        "built_at": graph.built_at,
        "meta": graph.meta,
        "files": files,
        "edges": [e.to_json() for e in graph.resolved],
        "communities": [asdict(c) for c in graph.communities],
    }


def graph_from_json(doc: dict[str, Any]) -> Graph:
    """Rebuild a Graph; raises ValueError/KeyError/TypeError on a malformed document."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError("not a NeuralMind graph file")
    schema = doc.get("schema")
    if schema not in KNOWN_SCHEMAS:
        raise ValueError(f"unknown schema version {schema!r} (this build knows {SCHEMA_VERSION})")
    extracts: dict[str, FileExtract] = {}
    files: dict[str, FileInfo] = {}
    for path, f in doc["files"].items():
        files[path] = FileInfo(f["sha1"], f["language"], int(f["size"]), int(f["mtime_ns"]),
                               bool(f["partial"]), str(f["error"]), int(f["lines"]))
        extracts[path] = FileExtract(
            path, f["language"], f["sha1"],
            [_node_from_row(path, r) for r in f["nodes"]],
            [Edge.from_json(r) for r in f["edges"]],
            [Reference.from_json(r) for r in f["refs"]],
            bool(f["partial"]), str(f["error"]),
        )
    g = Graph.from_parts(extracts, files, [Edge.from_json(r) for r in doc["edges"]])
    g.communities = [Community(int(c["id"]), c["name"], list(c["files"]), list(c["top_symbols"]),
                               c["description"], int(c["size"])) for c in doc["communities"]]
    g.schema = int(schema)
    g.generation = int(doc.get("generation", 0))
    g.built_at = float(doc.get("built_at", 0.0))
    g.meta = dict(doc.get("meta") or {})
    return g


def graph_path(state_dir: Path) -> Path:
    return Path(state_dir) / GRAPH_FILE


def load_graph(state_dir: Path) -> Graph:
    """The stored graph; empty when none is stored or the stored one is damaged.

    A damaged or unknown-schema file is moved aside (never deleted) with a warning,
    so the next build starts clean instead of failing on every call.
    """
    path = graph_path(state_dir)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Graph()
    except OSError as e:
        log.warning("cannot read %s: %s; using an empty graph", path, e)
        return Graph()
    try:
        return graph_from_json(json.loads(data))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
        move_aside(path, str(e)[:200])
        return Graph()


def save_graph(state_dir: Path, graph: Graph) -> None:
    """Write the graph atomically: readers see the old or the new file, never a mix."""
    graph.generation += 1
    graph.built_at = time.time()
    # ASCII escapes keep odd file names (undecodable bytes as lone surrogates) round-tripping.
    data = json.dumps(graph_to_json(graph), separators=(",", ":"))
    atomic_write_bytes(graph_path(state_dir), data.encode("ascii"))

