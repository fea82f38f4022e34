"""Name lookup for cross-file resolution: symbol tables, import bindings, scopes.

`SymbolIndex` holds, for a whole workspace, every file's qualified names, the unique
definitions per language family, import bindings and the names brought in by
wildcard imports and package peers; `FileScope` answers, for one file, what a
referenced name means: the enclosing scope (same class, same file), then names the
file imported, then a definition that is unique in the workspace for that language
family (a guess: its edges carry `resolved=False`). Every lookup records the
dependency key it read (see `resolve.py`), so a save can re-resolve only the files
whose answers changed. Every lookup result is a pure function of the indexes (the
re-export memo is keyed by hop depth and never keeps an answer cut short by an
import cycle further up).
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Iterable, Mapping
from typing import Any

from neuralmind.config import VISIBLE_TABLES_KEPT
from neuralmind.graph.import_rules import Binding
from neuralmind.graph.languages import (
    DECLARED_NAMESPACES,
    FAMILY_BUILTINS,
    MEMBERS_IN_SCOPE,
    STAR_REEXPORTS,
    family_of,
)
from neuralmind.graph.model import Edge, FileExtract, Node, split_node_id

log = logging.getLogger("neuralmind.graph")

_CLASS_LIKE = frozenset({"class", "struct", "interface", "trait", "enum", "module"})
_CALLABLE = frozenset({"class", "struct", "interface", "trait", "enum", "function", "method"})
_TYPES = frozenset({"class", "struct", "interface", "trait", "enum"})
# How any of the languages names the receiver and the parent class in a member access.
_SELF_NAMES = frozenset({"self", "this", "cls", "Self", "static"})
_SUPER_NAMES = frozenset({"super", "parent", "base"})  # Python/Java/JS, PHP, C#
_MAX_HOPS = 4  # re-export chains followed through __init__/index files


def symbol_table(fe: FileExtract) -> dict[str, Node]:
    """Qualified name -> the file's first node of that name (the nodes' `file` is the path)."""
    table: dict[str, Node] = {}
    for node in fe.nodes:
        if node.kind != "file":
            table.setdefault(node.qualname, node)
    return table


def callables(fe: FileExtract) -> list[tuple[str, str]]:
    """(name, id) of the definitions the unique-name guess may pick."""
    return [(n.name, n.id) for n in fe.nodes if n.kind in _CALLABLE and "#" not in n.qualname]


def namespaces(fe: FileExtract | None) -> list[str]:
    """What ImportRules reads from a file's nodes (C# and PHP namespaces)."""
    if fe is None or fe.language not in DECLARED_NAMESPACES:
        return []
    return [n.qualname for n in fe.nodes if n.kind == "module" and "#" not in n.qualname]


class SymbolIndex:
    """Lookups over the whole workspace, patched file by file.

    While `deps` is a set, every lookup into another file's table, bindings or
    wildcards, every unique-name guess and every read of a class's bases adds its
    dependency key there (lookups into `here`, the file being resolved, are left out:
    a change there re-resolves it anyway).
    """

    def __init__(self, extracts: Mapping[str, FileExtract]) -> None:
        self.quals: dict[str, dict[str, Node]] = {}    # file -> qualname -> symbol
        # family -> name -> its one id, or its ids (a list) when there are several: one
        # dict entry and no list for most names (the Linux kernel has ~10^6 callables)
        self.by_name: dict[str, dict[str, str | list[str]]] = {}
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
        # file -> ids of the merged tables whose bindings name it (ids only ever added):
        # a save's `drop_visible` visits those, not every table (~0.04 s a save on the kernel)
        self._vis_readers: dict[str, array] = {}
        for path in sorted(extracts):
            fe = extracts[path]
            self.families[path] = family = family_of(fe.language)
            self.quals[path] = symbol_table(fe)
            self.add_names(family, fe)

    def add_names(self, family: str, fe: FileExtract) -> None:
        table = self.by_name.setdefault(family, {})
        for name, nid in callables(fe):
            ids = table.get(name)
            if ids is None:
                table[name] = nid
            elif isinstance(ids, str):
                table[name] = [ids, nid]
            else:
                ids.append(nid)

    def remove_names(self, family: str, fe: FileExtract) -> None:
        table = self.by_name.get(family, {})
        for name, nid in callables(fe):
            ids = table.get(name)
            if ids == nid:
                del table[name]
            elif isinstance(ids, list) and nid in ids:
                ids.remove(nid)
                if len(ids) == 1:
                    table[name] = ids[0]

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
        ids = self.by_name.get(family, {}).get(name)
        return ids if isinstance(ids, str) else None

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
        if self.families.get(path) in STAR_REEXPORTS:
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
        enclosing scope however many headers or namespace files are in play. At most
        `VISIBLE_TABLES_KEPT` are kept (the least recently used go; any is rebuilt from
        `quals` on demand): a C file's includes are nearly its own, and the kernel's
        merged tables held every header symbol once per including file.

        A lookup in the table records its dependency key `(vid, name)` as the bare `name`
        (no `::`, unlike a class id; `Resolver` knows each file's `vid`): the same name
        string is then shared by every file that looks it up, instead of one tuple per file.
        A lookup relative to an enclosing scope (`fn.callee` for a call inside C's `fn`)
        records the scope's prefix `fn.` instead, one key per scope rather than per scope
        and name (2.5M keys on the Linux kernel); a changed qualname `a.b.c` names its
        prefixes `a.` and `a.b.` too (`drop_visible`), so those files are resolved again.
        """
        vid = self._vis_ids.get(bindings)
        if vid is None:
            vid = self._vis_ids[bindings] = len(self._vis_ids)
            self._vis_bindings[vid] = bindings
            readers = self._vis_readers
            for f in {f for binding in bindings for f in binding.files}:
                if (ids := readers.get(f)) is None:
                    ids = readers[f] = array("i")
                ids.append(vid)
        table = self._vis_tables.pop(vid, None)
        if table is not None:
            self._vis_tables[vid] = table          # most recently used last
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
        while len(self._vis_tables) > VISIBLE_TABLES_KEPT:
            del self._vis_tables[next(iter(self._vis_tables))]
        return vid, table

    def drop_visible(self, path: str, quals: set[str], keys: set[Any]) -> None:
        """Forget the merged tables that read `path`, whose `quals` changed; add the keys
        of the names concerned (and `(id, "")`, the table's emptiness)."""
        for vid in self._vis_readers.get(path, ()):
            bindings = self._vis_bindings[vid]
            hit = False
            for binding in bindings:
                if path not in binding.files:
                    continue
                hit = True
                if binding.remote:
                    prefix = binding.remote + "."
                    names = [q[len(prefix):] for q in quals if q.startswith(prefix)]
                else:
                    names = list(quals)
                for q in names:
                    keys.add((vid, q))
                    dot = q.find(".")
                    while dot >= 0:             # the scope prefixes lookups recorded
                        keys.add((vid, q[:dot + 1]))
                        dot = q.find(".", dot + 1)
            if hit:
                keys.add((vid, ""))
                self._vis_tables.pop(vid, None)


class FileScope:
    """One file's view: its own symbols and the names its imports bound."""

    def __init__(self, index: SymbolIndex, fe: FileExtract) -> None:
        self.index = index
        self.path = fe.path
        self.table = index.quals[fe.path]
        self.family = family_of(fe.language)
        self.bindings = index.bindings.get(fe.path, {})
        self.wildcards = index.wildcards.get(fe.path, [])
        seen = tuple(self.wildcards + index.implicit.get(fe.path, []))
        self.vid, self.visible = index.visible(seen) if seen else (-1, {})
        self.reexports = self.family in STAR_REEXPORTS

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
        if name in FAMILY_BUILTINS.get(self.family, ()):
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
        hide_members = self.family not in MEMBERS_IN_SCOPE
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
            if deps is not None:     # the bare name, or its scope's prefix: see `visible`
                deps.add(".".join(scope) + "." if scope else key)
            found = self.visible.get(key)
            if found and found != source:
                return found
            if not scope:
                break
            scope.pop()
        if len(parts) > 1:
            if deps is not None:
                deps.add(parts[0])
            owner = self.index.symbol(self.visible.get(parts[0], ""))
            if owner is not None and owner.kind in _CLASS_LIKE:
                return self.index.member(owner, parts[1:])
        if self.reexports:  # star imports of star imports (`from .fields import *`)
            for binding in self.wildcards:
                found = self.index.follow(binding, parts, 1)
                if found:
                    return found
        return None



def add_edge(acc: dict[tuple[str, str, str], list[int]], source: str, target: str, kind: str,
         resolved: bool) -> None:
    slot = acc.get((source, target, kind))
    if slot is None:
        acc[(source, target, kind)] = [int(resolved), 1]
    else:
        slot[0] &= int(resolved)
        slot[1] += 1


def edges_of(acc: dict[tuple[str, str, str], list[int]]) -> list[Edge]:
    return [Edge(s, t, k, bool(v[0]), v[1]) for (s, t, k), v in acc.items()]
