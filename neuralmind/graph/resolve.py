"""Cross-file resolution: References from every file -> edges between node ids.

Imports resolve to workspace files where the language makes that decidable
(`import_rules.py` holds the per-language rules). Calls and base classes resolve
by name, in order of confidence: the enclosing scope (same class, same file),
then names the file imported, then a definition that is unique in the workspace
for that language family. The last step is a guess and its edges carry
`resolved=False`. Unresolvable references (library calls, builtins) are dropped.

Everything goes through dict indexes built once, so the cost is linear in the
number of references; Django (~43k nodes, ~190k references) resolves in ~2 s.

A save must not pay that: `Resolver` keeps the indexes and, per file, what its
resolution looked up in other files (its dependency keys). When files change,
`Resolver.update` patches the indexes, collects the keys whose answer changed
(a qualified name added or removed in a file, a name that became or stopped being
unique, a file's import bindings, a class's resolved bases) and resolves again only
the files that looked one of them up. Every lookup result is a pure function of the
indexes (the re-export memo is keyed by hop depth and never keeps an answer cut short
by an import cycle further up; bases are resolved before any base is known), so the
patched result equals a full `resolve` of the new extracts, edge for edge and in order.

Dependency keys (tuples, or a class id for "the resolved bases of this class"):
    (path, qualname)           a symbol looked up in another file's table
    (path, alias, "b")         another file's import binding of `alias` (re-exports)
    (path, "", "w")            another file's wildcard imports
    (family, name, "u")        the unique-definition guess for `name`
    (visible table id, key)    a name brought in by wildcard imports or package peers
"""

from __future__ import annotations

import bisect
import builtins
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from neuralmind.graph.import_rules import Binding, ImportRules, family_of
from neuralmind.graph.model import Edge, FileExtract, Node, edge_key, split_node_id
from neuralmind.graph.store import release_dict

log = logging.getLogger("neuralmind.graph")

_CLASS_LIKE = frozenset({"class", "struct", "interface", "trait", "enum", "module"})
_CALLABLE = frozenset({"class", "struct", "interface", "trait", "enum", "function", "method"})
_TYPES = frozenset({"class", "struct", "interface", "trait", "enum"})
# Languages where a bare name inside a method can mean another member of the class;
# in the others (Python `self.x`, JS `this.x`, PHP `$this->x`, Rust `Self::x`) it cannot.
_MEMBERS_IN_SCOPE = frozenset({"java", "csharp", "c", "ruby"})
_SELF_NAMES = frozenset({"self", "this", "cls", "Self", "static"})
_SUPER_NAMES = frozenset({"super", "parent", "base"})  # Python/Java/JS, PHP, C#
# Names no workspace definition should capture by the unique-name guess.
_BUILTINS: dict[str, frozenset[str]] = {
    "python": frozenset(dir(builtins)),
    "js": frozenset({"require", "parseInt", "parseFloat", "setTimeout", "setInterval",
                     "clearTimeout", "String", "Number", "Boolean", "Array", "Object",
                     "Promise", "Error", "Symbol", "Map", "Set", "Date", "RegExp", "fetch"}),
    "go": frozenset({"make", "len", "cap", "append", "new", "panic", "recover", "copy",
                     "delete", "close", "print", "println", "string", "int", "error"}),
    "c": frozenset({"printf", "malloc", "free", "sizeof", "memcpy", "strlen", "assert"}),
    "ruby": frozenset({"new", "puts", "print", "raise", "require", "require_relative",
                       "attr_accessor", "attr_reader", "include", "extend", "lambda", "proc"}),
    "php": frozenset({"count", "isset", "array_map", "array_filter", "sprintf", "strlen",
                      "in_array", "implode", "explode", "is_array", "json_encode"}),
}
# Languages whose star imports re-export (Python `from x import *` in `__init__`,
# `export * from`, Rust `pub use x::*`); C includes and Java/C# imports do not chain here.
_STAR_REEXPORTS = frozenset({"python", "js", "rust"})
_MAX_HOPS = 4  # re-export chains followed through __init__/index files


def _table(fe: FileExtract) -> dict[str, Node]:
    """Qualified name -> the file's first node of that name (the nodes' `file` is the path)."""
    table: dict[str, Node] = {}
    for node in fe.nodes:
        if node.kind != "file":
            table.setdefault(node.qualname, node)
    return table


def _callables(fe: FileExtract) -> list[tuple[str, str]]:
    """(name, id) of the definitions the unique-name guess may pick."""
    return [(n.name, n.id) for n in fe.nodes if n.kind in _CALLABLE and "#" not in n.qualname]


def _namespaces(fe: FileExtract | None) -> list[str]:
    """What ImportRules reads from a file's nodes (C# and PHP namespaces)."""
    if fe is None or fe.language not in ("csharp", "php"):
        return []
    return [n.qualname for n in fe.nodes if n.kind == "module" and "#" not in n.qualname]


class _Index:
    """Lookups over the whole workspace, patched file by file.

    While `deps` is a set, every lookup into another file's table, bindings or
    wildcards, every unique-name guess and every read of a class's bases adds its
    dependency key there (lookups into `here`, the file being resolved, are left out:
    a change there re-resolves it anyway).
    """

    def __init__(self, extracts: Mapping[str, FileExtract]) -> None:
        self.quals: dict[str, dict[str, Node]] = {}    # file -> qualname -> symbol
        self.by_name: dict[tuple[str, str], list[str]] = {}  # (family, name) -> ids
        self.bindings: dict[str, dict[str, list[Binding]]] = {}  # file -> alias -> bindings
        self.wildcards: dict[str, list[Binding]] = {}  # file -> modules imported wholesale
        self.implicit: dict[str, list[Binding]] = {}   # file -> package/namespace peers
        self.families: dict[str, str] = {}
        self.bases: dict[str, list[str]] = {}         # class id -> resolved base ids
        self.deps: set[Any] | None = None
        self.here = ""
        self.read_bases = True
        self._memo: dict[tuple[str, tuple[str, ...], int], str | None] = {}
        self._memo_deps: dict[tuple[str, tuple[str, ...], int], set[Any]] = {}
        self._vis_ids: dict[tuple[Binding, ...], int] = {}
        self._vis_bindings: dict[int, tuple[Binding, ...]] = {}
        self._vis_tables: dict[int, dict[str, str]] = {}
        for path in sorted(extracts):
            fe = extracts[path]
            self.families[path] = family = family_of(fe.language)
            self.quals[path] = _table(fe)
            self.add_names(family, fe)

    def add_names(self, family: str, fe: FileExtract) -> None:
        for name, nid in _callables(fe):
            self.by_name.setdefault((family, name), []).append(nid)

    def remove_names(self, family: str, fe: FileExtract) -> None:
        for name, nid in _callables(fe):
            ids = self.by_name.get((family, name))
            if ids is not None and nid in ids:
                ids.remove(nid)
                if not ids:
                    del self.by_name[(family, name)]

    def lookup(self, files: Iterable[str], qual: str) -> Node | None:
        deps = self.deps
        for f in files:
            if deps is not None and f != self.here:
                deps.add((f, qual))
            table = self.quals.get(f)
            sym = table.get(qual) if table is not None else None
            if sym is not None:
                return sym
        return None

    def symbol(self, node_id: str) -> Node | None:
        path, qual = split_node_id(node_id)
        if not qual:
            return None
        if self.deps is not None and path != self.here:
            self.deps.add((path, qual))
        table = self.quals.get(path)
        return table.get(qual) if table is not None else None

    def forget(self) -> None:
        self._memo.clear()
        self._memo_deps.clear()

    def unique(self, family: str, name: str) -> str | None:
        if self.deps is not None:
            self.deps.add((family, name, "u"))
        ids = self.by_name.get((family, name))
        return ids[0] if ids is not None and len(ids) == 1 else None

    def member(self, owner: Node, rest: list[str], depth: int = 0) -> str | None:
        """`rest` inside class `owner`, else inside its bases (a few levels up)."""
        sym = self.lookup((owner.file,), ".".join([owner.qualname, *rest]))
        if sym is not None:
            return sym.id
        if depth < _MAX_HOPS and self.read_bases:
            if self.deps is not None:
                self.deps.add(owner.id)
            for base_id in self.bases.get(owner.id, ()):
                base = self.symbol(base_id)
                found = self.member(base, rest, depth + 1) if base is not None else None
                if found:
                    return found
        return None

    def follow(self, binding: Binding, rest: list[str], depth: int = 0) -> str | None:
        """What `alias.rest` names when `alias` is bound by `binding`."""
        if binding.mode == "module":
            if not rest:
                return None  # the module itself, not a symbol
            parts = [*binding.remote.split("."), *rest] if binding.remote else rest
        else:
            parts = [*binding.remote.split("."), *rest]
        for f in binding.files:
            found = self.exported(f, tuple(parts), depth)
            if found:
                return found
        return None

    def exported(self, path: str, parts: tuple[str, ...], depth: int = 0) -> str | None:
        """The symbol `parts` names in module `path`, following its re-exports.

        Re-exports are the module's own imports (`from .models import Model` in a
        package's `__init__.py`, `export { x } from './x'`, `from .fields import *`).
        Memoised (star-import chains and header include trees would otherwise be walked
        again for every call) by hop depth too: every hop goes one level deeper, up to
        _MAX_HOPS, so an import cycle cannot come back to a lookup under way, and an
        answer is the same whichever file asked first. Each answer keeps its dependency
        keys, which every later asker inherits.
        """
        key = (path, parts, depth)
        if key in self._memo:
            if self.deps is not None:
                self.deps |= self._memo_deps[key]
            return self._memo[key]
        outer_deps, outer_here = self.deps, self.here
        mine = set() if outer_deps is not None else None
        self.deps, self.here = mine, ""     # the answer's keys, whoever asks: all of them
        try:
            found = self._exported(path, parts, depth)
        finally:
            self.deps, self.here = outer_deps, outer_here
        self._memo[key] = found
        if mine is not None:
            self._memo_deps[key] = mine
            if outer_deps is not None:
                outer_deps |= mine
        return found

    def _exported(self, path: str, parts: tuple[str, ...], depth: int) -> str | None:
        deps = self.deps
        joined = ".".join(parts)
        if deps is not None:
            deps.add((path, joined))
        table = self.quals.get(path)
        if table is None:
            return None
        sym = table.get(joined)
        if sym is not None:
            return sym.id
        for cut in range(len(parts) - 1, 0, -1):  # Class.member, member maybe inherited
            prefix = ".".join(parts[:cut])
            if deps is not None:
                deps.add((path, prefix))
            owner = table.get(prefix)
            if owner is not None and owner.kind in _CLASS_LIKE:
                return self.member(owner, list(parts[cut:]))
        if depth >= _MAX_HOPS:
            return None
        if deps is not None:
            deps.add((path, parts[0], "b"))
        for inner in self.bindings.get(path, {}).get(parts[0], ()):
            found = self.follow(inner, list(parts[1:]), depth + 1)
            if found:
                return found
        if self.families.get(path) in _STAR_REEXPORTS:
            if deps is not None:
                deps.add((path, "", "w"))
            for inner in self.wildcards.get(path, ()):
                found = self.follow(inner, list(parts), depth + 1)
                if found:
                    return found
        return None

    def visible(self, bindings: tuple[Binding, ...]) -> tuple[int, dict[str, str]]:
        """Every name that wildcard imports bring into scope -> node id (first wins),
        with the table's id (dependency keys name it).

        One merged table per distinct set of bindings (files of one Go package or
        C# namespace share theirs), so an unresolved name costs one dict lookup per
        enclosing scope however many headers or namespace files are in play.
        """
        vid = self._vis_ids.get(bindings)
        if vid is None:
            vid = self._vis_ids[bindings] = len(self._vis_ids)
            self._vis_bindings[vid] = bindings
        table = self._vis_tables.get(vid)
        if table is not None:
            return vid, table
        table = {}
        for binding in bindings:
            cut = len(binding.remote) + 1 if binding.remote else 0
            for f in binding.files:
                for qual, sym in self.quals.get(f, {}).items():
                    if cut and not qual.startswith(binding.remote + "."):
                        continue
                    table.setdefault(qual[cut:], sym.id)
        self._vis_tables[vid] = table
        return vid, table

    def drop_visible(self, path: str, quals: set[str], keys: set[Any]) -> None:
        """Forget the merged tables that read `path`, whose `quals` changed; add the keys
        of the names concerned (and `(id, "")`, the table's emptiness)."""
        for vid, bindings in self._vis_bindings.items():
            hit = False
            for binding in bindings:
                if path not in binding.files:
                    continue
                hit = True
                if binding.remote:
                    prefix = binding.remote + "."
                    keys.update((vid, q[len(prefix):]) for q in quals if q.startswith(prefix))
                else:
                    keys.update((vid, q) for q in quals)
            if hit:
                keys.add((vid, ""))
                self._vis_tables.pop(vid, None)


class _FileScope:
    """One file's view: its own symbols and the names its imports bound."""

    def __init__(self, index: _Index, fe: FileExtract) -> None:
        self.index = index
        self.path = fe.path
        self.table = index.quals[fe.path]
        self.family = family_of(fe.language)
        self.bindings = index.bindings.get(fe.path, {})
        self.wildcards = index.wildcards.get(fe.path, [])
        seen = tuple(self.wildcards + index.implicit.get(fe.path, []))
        self.vid, self.visible = index.visible(seen) if seen else (-1, {})
        self.reexports = self.family in _STAR_REEXPORTS

    def resolve(self, source: str, target: str) -> tuple[str, bool] | None:
        """(node id, resolved) for a call or base name used inside `source`."""
        target = target.lstrip("@").replace("::", ".").replace("\\", ".")
        if not target:
            return None
        parts = target.split(".")
        if parts[0] == "":
            return self._guess(parts[-1])
        if parts[0] in _SUPER_NAMES and len(parts) >= 2:
            found = self._member_of_enclosing(source, parts[1:], bases_only=True)
            return (found, True) if found else self._guess(parts[-1])
        if parts[0] in _SELF_NAMES and len(parts) >= 2:
            found = self._member_of_enclosing(source, parts[1:])
            return (found, True) if found else self._guess(parts[-1])
        found = self._scoped(source, parts) or self._imported(source, parts)
        if found:
            return found, True
        if len(parts) == 2:  # `s.helper()` in a method of the class that has `helper`
            found = self._member_of_enclosing(source, parts[1:])
            if found:
                return found, False
        return self._guess(parts[-1])

    def _guess(self, name: str) -> tuple[str, bool] | None:
        if name in _BUILTINS.get(self.family, ()):
            return None
        found = self.index.unique(self.family, name)
        return (found, False) if found else None

    @staticmethod
    def _source_qual(source: str) -> list[str]:
        qual = split_node_id(source)[1]
        return qual.split("#", 1)[0].split(".") if qual else []

    def _scoped(self, source: str, parts: list[str]) -> str | None:
        scope = self._source_qual(source)
        wanted = ".".join(parts)
        hide_members = self.family not in _MEMBERS_IN_SCOPE
        while True:
            prefix = ".".join(scope)
            owner = self.table.get(prefix) if scope else None
            if not (hide_members and owner is not None and owner.kind in _TYPES):
                sym = self.table.get(f"{prefix}.{wanted}" if scope else wanted)
                if sym is not None and sym.id != source:
                    return sym.id
            if not scope:
                break
            scope.pop()
        if len(parts) > 1:
            owner = self.table.get(parts[0])
            if owner is not None and owner.kind in _CLASS_LIKE:
                return self.index.member(owner, parts[1:])
        return None

    def _member_of_enclosing(self, source: str, rest: list[str],
                             bases_only: bool = False) -> str | None:
        scope = self._source_qual(source)
        while scope:
            owner = self.table.get(".".join(scope))
            if owner is not None and owner.kind in _CLASS_LIKE:
                if not bases_only:
                    return self.index.member(owner, rest)
                if self.index.deps is not None:
                    self.index.deps.add(owner.id)
                for base_id in self.index.bases.get(owner.id, ()):
                    base = self.index.symbol(base_id)
                    found = self.index.member(base, rest) if base is not None else None
                    if found:
                        return found
                return None
            scope.pop()
        return None

    def _imported(self, source: str, parts: list[str]) -> str | None:
        for cut in range(len(parts), 0, -1):
            for binding in self.bindings.get(".".join(parts[:cut]), ()):
                found = self.index.follow(binding, parts[cut:])
                if found:
                    return found
        deps = self.index.deps
        if not self.visible:
            if deps is not None and self.vid >= 0:
                deps.add((self.vid, ""))
            return None
        # Names inside a namespace or module (Ruby `module Shop`, C++ `namespace geo`)
        # may be written relative to it: try the enclosing scopes, innermost first.
        scope = self._source_qual(source)
        wanted = ".".join(parts)
        while True:
            key = ".".join([*scope, wanted]) if scope else wanted
            if deps is not None:
                deps.add((self.vid, key))
            found = self.visible.get(key)
            if found and found != source:
                return found
            if not scope:
                break
            scope.pop()
        if len(parts) > 1:
            if deps is not None:
                deps.add((self.vid, parts[0]))
            owner = self.index.symbol(self.visible.get(parts[0], ""))
            if owner is not None and owner.kind in _CLASS_LIKE:
                return self.index.member(owner, parts[1:])
        if self.reexports:  # star imports of star imports (`from .fields import *`)
            for binding in self.wildcards:
                found = self.index.follow(binding, parts, 1)
                if found:
                    return found
        return None



def _add(acc: dict[tuple[str, str, str], list[int]], source: str, target: str, kind: str,
         resolved: bool) -> None:
    slot = acc.get((source, target, kind))
    if slot is None:
        acc[(source, target, kind)] = [int(resolved), 1]
    else:
        slot[0] &= int(resolved)
        slot[1] += 1


def _edges(acc: dict[tuple[str, str, str], list[int]]) -> list[Edge]:
    return [Edge(s, t, k, bool(v[0]), v[1]) for (s, t, k), v in acc.items()]


# Above this many edges to insert or remove, one sort beats binary-search insertion.
_PATCH_LIMIT = 2000


class Resolver:
    """The resolution of a whole workspace, kept so that a save re-resolves little.

    Per file it holds its import, base and call edges and (with `track`) the dependency
    keys of its base and call lookups; `edges` is every resolved edge in `edge_key` order
    and `out` the same edges per file of their source.
    """

    def __init__(self, extracts: Mapping[str, FileExtract], track: bool = True) -> None:
        self.track = track
        self.extracts: dict[str, FileExtract] = dict(extracts)
        self.index = _Index(self.extracts)
        self.rules = ImportRules(self.extracts)
        self.import_edges: dict[str, list[Edge]] = {}
        self.base_edges: dict[str, list[Edge]] = {}
        self.call_edges: dict[str, list[Edge]] = {}
        # Bases resolve in two rounds, each with the bases the round before found (none
        # for the first): `class Meta(Parent.Meta)` may need Parent's bases, and the answer
        # must not depend on which file came first. Per round: file -> class id -> bases.
        self.class_bases: tuple[dict[str, dict[str, list[str]]], ...] = ({}, {})
        self.base_deps: tuple[dict[str, set[Any]], ...] = ({}, {})
        self.first_bases: dict[str, list[str]] = {}
        self.call_deps: dict[str, set[Any]] = {}
        self.out: dict[str, list[Edge]] = {}
        self._keys: dict[Any, Any] = {}
        paths = sorted(self.extracts)
        for path in paths:
            self._resolve_imports(path)
        for stage, found in enumerate((self.first_bases, self.index.bases)):
            self._resolve_bases(paths, stage)
            for path in paths:
                found.update(self.class_bases[stage][path])
        self._resolve_calls(paths)
        for path in paths:
            self.out[path] = self._merge(path)
        self.edges = [e for path in paths for e in self.out[path]]
        if any(edge_key(self.out[a][-1]) > edge_key(self.out[b][0])
               for a, b in zip(paths, paths[1:], strict=False) if self.out[a] and self.out[b]):
            self.edges.sort(key=edge_key)   # ids of one file sort among another's (a.py, a.py.x)
        self.removed: list[Edge] = []       # what the last update took out and put in
        self.added: list[Edge] = list(self.edges)

    # --- the three passes, over some files -----------------------------------------------

    def _begin(self, path: str) -> set[Any] | None:
        deps = set() if self.track else None
        self.index.deps, self.index.here = deps, path
        return deps

    def _begin_file(self, path: str) -> tuple[FileExtract, set[Any] | None, _FileScope]:
        """A file's references are about to be resolved: its extract, the set recording the
        lookups it makes (None when not tracked), and its name scope."""
        fe = self.extracts[path]
        return fe, self._begin(path), _FileScope(self.index, fe)

    def _resolve_imports(self, path: str) -> None:
        rules, index = self.rules, self.index
        counts: dict[str, int] = {}
        bindings: dict[str, list[Binding]] = {}
        wildcards: list[Binding] = []
        for ref in self.extracts[path].references:
            if ref.kind != "imports":
                continue
            result = rules.resolve_import(path, ref)
            for target in result.files:
                if target != path:
                    counts[target] = counts.get(target, 0) + 1
            for alias, binding in result.bindings:
                if alias:
                    bindings.setdefault(alias, []).append(binding)
                elif binding.files != (path,):
                    wildcards.append(binding)
        index.bindings[path] = bindings
        index.wildcards[path] = wildcards
        index.implicit[path] = rules.implicit_bindings(path)
        self.import_edges[path] = [Edge(path, t, "imports", True, n) for t, n in counts.items()]

    def _resolve_bases(self, paths: list[str], stage: int) -> None:
        """Round 0 knows no bases (no lookup through inheritance), round 1 those of round 0:
        either way a class's bases do not depend on which files were resolved before it."""
        index = self.index
        known = index.bases
        index.bases, index.read_bases = (self.first_bases, True) if stage else ({}, False)
        index.forget()
        try:
            for path in paths:
                fe, deps, scope = self._begin_file(path)
                acc: dict[tuple[str, str, str], list[int]] = {}
                found_bases: dict[str, list[str]] = {}
                for ref in fe.references:
                    if ref.kind in ("inherits", "implements"):
                        found = scope.resolve(ref.source, ref.target)
                        if found and found[0] != ref.source:
                            _add(acc, ref.source, found[0], ref.kind, found[1])
                            found_bases.setdefault(ref.source, []).append(found[0])
                if stage:
                    self.base_edges[path] = _edges(acc)
                self.class_bases[stage][path] = found_bases
                if deps is not None:
                    self.base_deps[stage][path] = self._shared(deps)
        finally:
            index.bases, index.read_bases, index.deps = known, True, None
            index.forget()

    def _resolve_calls(self, paths: list[str]) -> None:
        index = self.index
        index.forget()
        try:
            for path in paths:
                fe, deps, scope = self._begin_file(path)
                acc: dict[tuple[str, str, str], list[int]] = {}
                seen: dict[tuple[str, str], tuple[str, bool] | None] = {}  # repeated calls: once
                for ref in fe.references:
                    if ref.kind == "calls":
                        key = (ref.source, ref.target)
                        if key in seen:
                            found = seen[key]
                        else:
                            found = seen[key] = scope.resolve(ref.source, ref.target)
                        if found and found[0] != ref.source:
                            _add(acc, ref.source, found[0], "calls", found[1])
                self.call_edges[path] = _edges(acc)
                if deps is not None:
                    self.call_deps[path] = self._shared(deps)
        finally:
            index.deps = None
            index.forget()

    def _shared(self, deps: set[Any]) -> set[Any]:
        """The same keys, each one object for all files (~4 of 5 recur: -15 MB on Django)."""
        keys = self._keys
        return {keys.setdefault(k, k) for k in deps}

    def adopt(self, edges: list[Edge]) -> bool:
        """Hold `edges` (a graph's, equal to what was resolved) instead of equal copies."""
        if edges != self.edges:
            return False
        mine = {edge_key(e): e for e in edges}
        for table in (self.import_edges, self.base_edges, self.call_edges, self.out):
            for path, rows in table.items():
                table[path] = [mine[edge_key(e)] for e in rows]
        self.edges = edges
        return True

    def _merge(self, path: str) -> list[Edge]:
        edges = self.import_edges[path] + self.base_edges[path] + self.call_edges[path]
        edges.sort(key=edge_key)
        return edges

    def release(self) -> None:
        """Empty the state piece by piece (see Graph.release)."""
        index = self.index
        for table in (self.base_deps[0], self.base_deps[1], self.call_deps, index._memo_deps,
                      self.import_edges, self.base_edges, self.call_edges, self.out,
                      self.class_bases[0], self.class_bases[1], index.quals, index.by_name,
                      index.bindings, index.wildcards, index.implicit, index._vis_tables,
                      index._memo, self.extracts, self._keys):
            release_dict(table)
        self.edges = []

    # --- patching --------------------------------------------------------------------------

    def update(self, extracts: Mapping[str, FileExtract], touched: Iterable[str]) -> list[str]:
        """Bring the resolution to `extracts`, which differ from the current ones only at
        `touched` paths (re-extracted, added or removed). Returns the files whose resolved
        edges changed; `edges` is then a new list (else the same object), and `removed` /
        `added` hold the edges taken out and put in."""
        index = self.index
        touched = sorted(set(touched))
        before = self.extracts
        self.extracts = dict(extracts)
        keys: set[Any] = set()          # dependency keys whose answer may have changed
        regroup = False                 # the file set or what import rules read changed
        for path in touched:
            old, new = before.get(path), self.extracts.get(path)
            if ((old is None) != (new is None) or (old and new and old.language != new.language)
                    or _namespaces(old) != _namespaces(new)):
                regroup = True
            self._replace_symbols(path, old, new, keys)
        present = [p for p in touched if p in self.extracts]
        for path in touched:
            if path not in self.extracts:
                self._forget_file(path, keys)
        if regroup:
            self.rules = ImportRules(self.extracts)
        redo = set(present)
        for path in sorted(self.extracts) if regroup else present:
            if self._rebind(path, keys):
                redo.add(path)
        redone = set(redo)
        for stage, found in enumerate((self.first_bases, index.bases)):
            base_redo = sorted(redo | {p for p, d in self.base_deps[stage].items()
                                       if p in self.extracts and not keys.isdisjoint(d)})
            old_bases = {p: self.class_bases[stage].get(p, {}) for p in base_redo}
            self._resolve_bases(base_redo, stage)
            for path in base_redo:
                was, now = old_bases[path], self.class_bases[stage][path]
                for cls in was.keys() | now.keys():
                    if was.get(cls) != now.get(cls):
                        keys.add(cls)
                        found.pop(cls, None)
                found.update(now)
            if stage:
                redone.update(base_redo)
        call_redo = sorted(redo | {p for p, d in self.call_deps.items()
                                   if p in self.extracts and not keys.isdisjoint(d)})
        self._resolve_calls(call_redo)
        return self._patch_edges(redone | set(call_redo),
                                 [p for p in touched if p not in self.extracts])

    def _replace_symbols(self, path: str, old: FileExtract | None, new: FileExtract | None,
                         keys: set[Any]) -> None:
        index = self.index
        old_table = index.quals.get(path, {})
        new_table = _table(new) if new is not None else {}
        changed = set()
        for qual in old_table.keys() | new_table.keys():
            a, b = old_table.get(qual), new_table.get(qual)
            if a is None or b is None or a.id != b.id or a.kind != b.kind:
                changed.add(qual)
        keys.update((path, q) for q in changed)
        if changed:
            index.drop_visible(path, changed, keys)
        old_family = family_of(old.language) if old is not None else ""
        new_family = family_of(new.language) if new is not None else ""
        if old is not None and new is not None and old_family != new_family:
            keys.add((path, "", "w"))
        names = set()
        if old is not None:
            names.update((old_family, n) for n, _ in _callables(old))
        if new is not None:
            names.update((new_family, n) for n, _ in _callables(new))
        was = {k: index.unique(*k) for k in names}
        if old is not None:
            index.remove_names(old_family, old)
        if new is not None:
            index.add_names(new_family, new)
            index.quals[path] = new_table
            index.families[path] = new_family
        else:
            index.quals.pop(path, None)
            index.families.pop(path, None)
        keys.update((f, n, "u") for f, n in names if index.unique(f, n) != was[(f, n)])

    def _forget_file(self, path: str, keys: set[Any]) -> None:
        index = self.index
        keys.update((path, alias, "b") for alias in index.bindings.pop(path, {}))
        keys.add((path, "", "w"))
        index.wildcards.pop(path, None)
        index.implicit.pop(path, None)
        for stage, found in enumerate((self.first_bases, index.bases)):
            for cls in self.class_bases[stage].pop(path, {}):
                keys.add(cls)
                found.pop(cls, None)
        for table in (self.import_edges, self.base_edges, self.call_edges, *self.base_deps,
                      self.call_deps):
            table.pop(path, None)

    def _rebind(self, path: str, keys: set[Any]) -> bool:
        """Resolve the file's imports again; add the keys of bindings that changed.
        True when anything the file's own resolution reads from its imports changed."""
        index = self.index
        old_bindings = index.bindings.get(path, {})
        old = (old_bindings, index.wildcards.get(path), index.implicit.get(path),
               self.import_edges.get(path))
        self._resolve_imports(path)
        new_bindings = index.bindings[path]
        for alias in old_bindings.keys() | new_bindings.keys():
            if old_bindings.get(alias) != new_bindings.get(alias):
                keys.add((path, alias, "b"))
        if old[1] != index.wildcards[path]:
            keys.add((path, "", "w"))
        return old != (new_bindings, index.wildcards[path], index.implicit[path],
                       self.import_edges[path])

    def _patch_edges(self, redone: set[str], gone: list[str]) -> list[str]:
        changed: list[str] = []
        removed: list[Edge] = []
        added: list[Edge] = []
        for path in sorted(redone):
            merged = self._merge(path)
            old = self.out.get(path, [])
            if merged != old:
                kept = {edge_key(e): e for e in old}
                for i, e in enumerate(merged):
                    was = kept.pop(edge_key(e), None)
                    if was == e:
                        merged[i] = was           # an unchanged edge keeps its identity
                    else:
                        added.append(e)
                        if was is not None:
                            removed.append(was)
                removed.extend(kept.values())
                changed.append(path)
                self.out[path] = merged
        for path in gone:
            old = self.out.pop(path, [])
            if old:
                changed.append(path)
                removed.extend(old)
        self.removed, self.added = removed, added
        if not removed and not added:
            return sorted(changed)
        edges = list(self.edges)
        if len(removed) + len(added) > _PATCH_LIMIT:
            drop = {edge_key(e) for e in removed}
            edges = [e for e in edges if edge_key(e) not in drop]
            edges.extend(added)
            edges.sort(key=edge_key)
        else:
            for e in removed:
                i = bisect.bisect_left(edges, edge_key(e), key=edge_key)
                del edges[i]
            for e in added:
                bisect.insort(edges, e, key=edge_key)
        self.edges = edges
        return sorted(changed)


def resolve(extracts: Mapping[str, FileExtract]) -> list[Edge]:
    """Import, call and inheritance edges across the workspace, in `edge_key` order."""
    edges = Resolver(extracts, track=False).edges
    log.debug("resolved %d files into %d edges (%d heuristic)", len(extracts), len(edges),
              sum(1 for e in edges if not e.resolved))
    return edges
