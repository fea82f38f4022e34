"""The code-graph IR: nodes, edges and what one file's extraction yields.

These dataclasses are the contract between the extractor (graph.extract), the
builder (graph.build), the store (graph.store) and every consumer (index,
context, synapse, decisions). Ids are stable across builds: `relative/path` for
files, `relative/path::Qualified.name` for symbols.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, overload

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


# Reference kinds as one byte each in PackedReferences (a process-wide table, grown as new
# kinds appear: the IR has four).
_KINDS: list[str] = []
_KIND_CODES: dict[str, int] = {}


def reference_kind_code(kind: str) -> int:
    code = _KIND_CODES.get(kind)
    if code is None:
        if len(_KINDS) >= 256:
            raise ValueError(f"too many reference kinds for PackedReferences: {kind!r}")
        code = _KIND_CODES[kind] = len(_KINDS)
        _KINDS.append(kind)
    return code


class PackedReferences(Sequence[Reference]):
    """A file's references as columns, read back as equal `Reference` objects.

    Why: a loaded graph holds every file's unresolved references for the resolution a save
    may redo, and on the Linux kernel that is 4.75M of them. As objects in a list each cost
    ~80 bytes of its own (object, slots, list slot); as columns ~21 (two pointers to strings
    the graph already shares, a kind byte, a 32-bit line): ~0.3 GB less in a server. Names
    are kept only for the references that have any (imports). Equal, element for element,
    to the list of `Reference` it was made from (`==` works both ways); never mutated.
    """

    __slots__ = ("sources", "kinds", "targets", "lines", "names")

    def __init__(self, sources: tuple[str, ...], kinds: bytes, targets: tuple[str, ...],
                 lines: array, names: dict[int, list[tuple[str, str]]] | None) -> None:
        self.sources = sources
        self.kinds = kinds
        self.targets = targets
        self.lines = lines          # array("I")
        self.names = names          # position -> names, only where there are names

    @classmethod
    def of(cls, refs: Iterable[Reference]) -> PackedReferences:
        rows = list(refs)
        names = {i: r.names for i, r in enumerate(rows) if r.names}
        return cls(tuple(r.source for r in rows), bytes(reference_kind_code(r.kind) for r in rows),
                   tuple(r.target for r in rows), array("I", (r.line for r in rows)),
                   names or None)

    def __len__(self) -> int:
        return len(self.kinds)

    def _at(self, i: int) -> Reference:
        names = self.names.get(i, NO_NAMES) if self.names else NO_NAMES
        return Reference(self.sources[i], _KINDS[self.kinds[i]], self.targets[i],
                         self.lines[i], names)

    @overload
    def __getitem__(self, i: int) -> Reference: ...

    @overload
    def __getitem__(self, i: slice) -> list[Reference]: ...

    def __getitem__(self, i: int | slice) -> Reference | list[Reference]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("reference index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[Reference]:
        for i in range(len(self.kinds)):
            yield self._at(i)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedReferences):
            return (self.kinds == other.kinds and self.sources == other.sources
                    and self.targets == other.targets and self.lines == other.lines
                    and (self.names or {}) == (other.names or {}))
        if isinstance(other, list):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other,
                                                                           strict=True))
        return NotImplemented

    __hash__ = None     # type: ignore[assignment]  # like the list it stands for

    def __repr__(self) -> str:
        return f"PackedReferences({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # kind codes are this process's: a pickle carries the kinds' names with them
        return (_unpickle_references, (self.sources, self.kinds, tuple(_KINDS), self.targets,
                                       self.lines, self.names))

    def has_kind(self, kinds: Iterable[str]) -> bool:
        """Whether any reference is of one of `kinds`."""
        return any(k in _KIND_CODES and _KIND_CODES[k] in self.kinds for k in kinds)

    def pairs(self, kind: str) -> list[tuple[str, str]]:
        """(source, target) of the references of `kind`, in order (no object per reference)."""
        code = _KIND_CODES.get(kind)
        if code is None or code not in self.kinds:
            return []
        return [(s, t) for s, c, t in zip(self.sources, self.kinds, self.targets, strict=True)
                if c == code]

    def of_kind(self, kind: str) -> list[Reference]:
        """The references of `kind`, in order."""
        code = _KIND_CODES.get(kind)
        if code is None or code not in self.kinds:
            return []
        return [self._at(i) for i, c in enumerate(self.kinds) if c == code]


def _unpickle_references(sources: tuple[str, ...], kinds: bytes, names_of_kinds: tuple[str, ...],
                         targets: tuple[str, ...], lines: array,
                         names: dict[int, list[tuple[str, str]]] | None) -> PackedReferences:
    """A pickled PackedReferences, its kind bytes mapped to this process's codes."""
    table = bytes(reference_kind_code(k) for k in names_of_kinds).ljust(256, b"\0")
    return PackedReferences(sources, kinds.translate(table), targets, lines, names)


def reference_pairs(refs: Sequence[Reference], kind: str) -> list[tuple[str, str]]:
    """(source, target) of a file's references of `kind`, packed or not, in order."""
    if type(refs) is PackedReferences:
        return refs.pairs(kind)
    return [(r.source, r.target) for r in refs if r.kind == kind]


def references_of(refs: Sequence[Reference], kind: str) -> list[Reference]:
    """A file's references of `kind`, packed or not, in order."""
    if type(refs) is PackedReferences:
        return refs.of_kind(kind)
    return [r for r in refs if r.kind == kind]


def has_reference_kind(refs: Sequence[Reference], kinds: tuple[str, ...]) -> bool:
    """Whether a file's references (packed or not) include one of `kinds`."""
    if type(refs) is PackedReferences:
        return refs.has_kind(kinds)
    return any(r.kind in kinds for r in refs)


@dataclass(slots=True)
class FileExtract:
    """Everything extracted from one file, before cross-file resolution."""

    path: str
    language: str
    sha1: str                 # of the file's bytes
    nodes: list[Node]         # the file node first, then symbols in source order
    edges: list[Edge]         # intra-file edges (contains)
    # a list when extracted; PackedReferences when loaded from the store (equal either way)
    references: list[Reference] | PackedReferences
    partial: bool = False     # tree-sitter reported syntax errors
    error: str = ""           # set when extraction failed; nodes then hold only the file node
