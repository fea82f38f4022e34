"""The code-graph IR: nodes, edges and what one file's extraction yields.

These dataclasses are the contract between the extractor (graph.extract), the
builder (graph.build), the store (graph.store) and every consumer (index,
context, synapse, decisions). Ids are stable across builds: `relative/path` for
files, `relative/path::Qualified.name` for symbols.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA_VERSION = 1

NODE_KINDS = frozenset({
    "file", "module", "class", "struct", "interface", "trait", "enum",
    "function", "method", "section",
})
EDGE_KINDS = frozenset({"contains", "imports", "calls", "inherits", "implements"})


ID_SEPARATOR = "::"


def node_id(path: str, qualname: str | None = None) -> str:
    """`path` for a file node, `path::Qualified.name` for a symbol."""
    return f"{path}{ID_SEPARATOR}{qualname}" if qualname else path


def split_node_id(nid: str) -> tuple[str, str]:
    """(path, qualified name) of a node id; the name is "" for a file node."""
    path, _, qual = nid.partition(ID_SEPARATOR)
    return path, qual


def file_of(nid: str) -> str:
    """The file a node id belongs to (`path::Qualified.name` -> `path`)."""
    return nid.partition(ID_SEPARATOR)[0]


@dataclass(slots=True)
class Node:
    id: str
    kind: str                 # one of NODE_KINDS
    name: str
    qualname: str             # "" for file nodes
    file: str                 # repo-relative, '/' separated
    start_line: int           # 1-based, inclusive
    end_line: int             # 1-based, inclusive
    language: str
    signature: str = ""       # declaration line(s), never the body
    docstring: str = ""       # docstring or leading comment, trimmed
    content_hash: str = ""    # sha1 of the node's source text
    community: int = -1       # set by graph.communities

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Node:
        return cls(**d)


@dataclass(slots=True)
class Edge:
    source: str
    target: str
    kind: str                 # one of EDGE_KINDS
    resolved: bool = True     # False when matched by a name heuristic
    count: int = 1            # how many times the relation occurs in the source

    def to_json(self) -> list[Any]:
        return [self.source, self.target, self.kind, self.resolved, self.count]

    @classmethod
    def from_json(cls, row: list[Any]) -> Edge:
        return cls(row[0], row[1], row[2], bool(row[3]), int(row[4]))


def edge_key(e: Edge) -> tuple[str, str, str]:
    """The order of resolved edges everywhere (a graph's list, a stored row)."""
    return (e.source, e.kind, e.target)


NO_NAMES: list[tuple[str, str]] = []


@dataclass(slots=True)
class Reference:
    """A relation found in one file whose target is not resolved yet.

    `source` is the id of the enclosing node (function, class or file).
    `kind` is "imports", "calls", "inherits" or "implements". For imports,
    `target` is the module spec as written (`..utils`, `./a`, `fmt`,
    `crate::x::y`, `java.util.List`) and `names` the imported names with their
    local aliases; for calls and bases, `target` is the name as written
    (`foo`, `self.bar`, `mod.Klass`).
    """

    source: str
    kind: str
    target: str
    line: int = 0
    # (imported name, local alias). Never mutated: references without names (every call,
    # most of a graph's objects) share NO_NAMES instead of an empty list each (56 bytes)
    names: list[tuple[str, str]] = field(default_factory=lambda: NO_NAMES)

    def to_json(self) -> list[Any]:
        return [self.source, self.kind, self.target, self.line, [list(n) for n in self.names]]

    @classmethod
    def from_json(cls, row: list[Any]) -> Reference:
        return cls(row[0], row[1], row[2], int(row[3]), [tuple(n) for n in row[4]])


@dataclass(slots=True)
class FileExtract:
    """Everything extracted from one file, before cross-file resolution."""

    path: str
    language: str
    sha1: str                 # of the file's bytes
    nodes: list[Node]         # the file node first, then symbols in source order
    edges: list[Edge]         # intra-file edges (contains)
    references: list[Reference]
    partial: bool = False     # tree-sitter reported syntax errors
    error: str = ""           # set when extraction failed; nodes then hold only the file node
