"""Cross-file resolution: References from every file -> edges between node ids.

Imports resolve to workspace files where the language makes that decidable
(`import_rules.py` holds the per-language rules). Calls and base classes resolve
by name, in order of confidence: the enclosing scope (same class, same file),
then names the file imported, then a definition that is unique in the workspace
for that language family. The last step is a guess and its edges carry
`resolved=False`. Unresolvable references (library calls, builtins) are dropped.

Everything goes through the dict indexes of `lookup.py`, built once, so the cost is
linear in the number of references; Django (~43k nodes, ~190k references) resolves
in ~2 s.

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
    (visible table id, key)    a name brought in by wildcard imports or package peers,
                               kept as the bare `key`, or `scope.` for a name tried
                               relative to an enclosing scope (the table id is in `vids`)
    (visible table id, "")     that table being empty

What this held on the Linux kernel (1.7 GB, now 0.8: BENCHMARKS.md) was mostly dependency
keys: a C file's includes are nearly its own set, so `(table id, name)` tuples were one per
file and name (and per enclosing function: `fn.callee`). The bare names and scope prefixes
are shared by every file, a file without lookups shares one empty tuple, and inheritance
rounds skip files that name no base. A file's keys are a tuple, and each table is also kept
reversed (key -> files): a save asks which files hold a changed key, never whether one
file holds it, so the sets (~4x the bytes) and the pass over every file's keys went.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from neuralmind.graph.dep_tables import _NO_DEPS, FileNumbers, _drop_deps, _set_deps, users_of
from neuralmind.graph.import_rules import Binding, ImportRules
from neuralmind.graph.languages import family_of
from neuralmind.graph.lookup import (
    FileScope,
    SymbolIndex,
    add_edge,
    callables,
    edges_of,
    namespaces,
    symbol_table,
)
from neuralmind.graph.model import (
    Edge,
    FileExtract,
    edge_key,
    has_reference_kind,
    reference_pairs,
    references_of,
)
from neuralmind.heap import release_dict

log = logging.getLogger("neuralmind.graph")


# Above this many edges to insert or remove, one sort beats binary-search insertion.
_PATCH_LIMIT = 2000
_BASE_KINDS = ("inherits", "implements")


class Resolver:
    """The resolution of a whole workspace, kept so that a save re-resolves little.

    Per file it holds its import, base and call edges and (with `track`) the dependency
    keys of its base and call lookups; `edges` is every resolved edge in `edge_key` order
    and `out` the same edges per file of their source.
    """

    def __init__(self, extracts: Mapping[str, FileExtract], track: bool = True) -> None:
        self.track = track
        self.extracts: dict[str, FileExtract] = dict(extracts)
        # the mapping it was given, never changed after (a graph's `extracts`): a save's
        # check that this state is the held graph's is then one identity test
        self.source: Mapping[str, FileExtract] = extracts
        self.index = SymbolIndex(self.extracts)
        self.rules = ImportRules(self.extracts)
        # Per file, the edges of each kind resolved in the pass under way (a save's, or the
        # first): emptied when it ends. A file's edges of a kind not resolved again are
        # read back from `out` (`_kind_edges`): three more lists per file were ~45 MB on the
        # Linux kernel, for a server's life.
        self.import_edges: dict[str, list[Edge]] = {}
        self.base_edges: dict[str, list[Edge]] = {}
        self.call_edges: dict[str, list[Edge]] = {}
        # Bases resolve in two rounds, each with the bases the round before found (none
        # for the first): `class Meta(Parent.Meta)` may need Parent's bases, and the answer
        # must not depend on which file came first. Per round: file -> class id -> bases.
        self.class_bases: tuple[dict[str, dict[str, list[str]]], ...] = ({}, {})
        self.base_deps: tuple[dict[str, tuple[Any, ...]], ...] = ({}, {})
        self.first_bases: dict[str, list[str]] = {}
        self.call_deps: dict[str, tuple[Any, ...]] = {}
        # the same tables the other way round, key -> the files holding it (a path for one
        # file, a list for more): a save's stale files are found from its changed keys, not
        # by scanning every file's keys (55k files on the kernel, ~0.08 s a save)
        self.base_users: tuple[dict[Any, Any], ...] = ({}, {})
        self.call_users: dict[Any, Any] = {}
        self.files = FileNumbers()           # the numbers those tables' long lists hold
        self.vids: dict[str, int] = {}       # file -> id of the visible table it reads
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
        self._end_pass()
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

    def _begin_file(self, path: str) -> tuple[FileExtract, set[Any] | None, FileScope]:
        """A file's references are about to be resolved: its extract, the set recording the
        lookups it makes (None when not tracked), and its name scope."""
        fe = self.extracts[path]
        return fe, self._begin(path), FileScope(self.index, fe)

    def _resolve_imports(self, path: str) -> None:
        rules, index = self.rules, self.index
        counts: dict[str, int] = {}
        bindings: dict[str, list[Binding]] = {}
        wildcards: list[Binding] = []
        for ref in references_of(self.extracts[path].references, "imports"):
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
                if not has_reference_kind(self.extracts[path].references, _BASE_KINDS):
                    if stage:                   # no base named: no lookup, nothing found
                        self.base_edges[path] = []
                    self.class_bases[stage][path] = {}
                    if self.track:
                        _set_deps(self.base_deps[stage], self.base_users[stage], path, _NO_DEPS,
                                  self.files)
                    continue
                fe, deps, scope = self._begin_file(path)
                acc: dict[tuple[str, str, str], list[int]] = {}
                found_bases: dict[str, list[str]] = {}
                self.vids[path] = scope.vid
                for ref in fe.references:
                    if ref.kind in ("inherits", "implements"):
                        found = scope.resolve(ref.source, ref.target)
                        if found and found[0] != ref.source:
                            add_edge(acc, ref.source, found[0], ref.kind, found[1])
                            found_bases.setdefault(ref.source, []).append(found[0])
                if stage:
                    self.base_edges[path] = edges_of(acc)
                self.class_bases[stage][path] = found_bases
                if deps is not None:
                    _set_deps(self.base_deps[stage], self.base_users[stage], path,
                              self._shared(deps), self.files)
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
                self.vids[path] = scope.vid
                for key in reference_pairs(fe.references, "calls"):
                    if key in seen:
                        found = seen[key]
                    else:
                        found = seen[key] = scope.resolve(*key)
                    if found and found[0] != key[0]:
                        add_edge(acc, key[0], found[0], "calls", found[1])
                self.call_edges[path] = edges_of(acc)
                if deps is not None:
                    _set_deps(self.call_deps, self.call_users, path, self._shared(deps),
                              self.files)
        finally:
            index.deps = None
            index.forget()

    def _shared(self, deps: set[Any]) -> tuple[Any, ...]:
        """The same keys, each one object for all files (~4 of 5 recur: -15 MB on Django),
        as a tuple (8 bytes a key; a set was ~4x that, 283 MB on the Linux kernel): nothing
        asks a file's keys for one key, `*_users` answers which files hold it. No keys:
        one shared empty tuple."""
        if not deps:
            return _NO_DEPS
        keys = self._keys
        return tuple([keys.setdefault(k, k) for k in deps])

    def _stale(self, users: dict[Any, Any], keys: set[Any],
               seen: dict[int, set[str]]) -> set[str]:
        """Files that looked up one of `keys` (`seen`: the names per visible table among
        them, which deps hold as bare names), found through `users` (a dependency table
        reversed: key -> files): time proportional to the changed keys' files, where a
        scan of every file's keys was 0.08 s a save on the kernel's 55k files."""
        extracts, vids, files = self.extracts, self.vids, self.files
        found: set[str] = set()
        for k in keys:
            if (held := users.get(k)) is not None:
                found.update(users_of(held, files))
        for vid, names in seen.items():
            for name in names:
                if (held := users.get(name)) is not None:
                    found.update(p for p in users_of(held, files) if vids.get(p, -1) == vid)
        return {p for p in found if p in extracts}

    def adopt(self, edges: list[Edge]) -> bool:
        """Hold `edges` (a graph's, equal to what was resolved) instead of equal copies."""
        if edges != self.edges:
            return False
        mine = {edge_key(e): e for e in edges}
        for path, rows in self.out.items():
            self.out[path] = [mine[edge_key(e)] for e in rows]
        self.edges = edges
        return True

    def _kind_edges(self, table: dict[str, list[Edge]], path: str,
                    kinds: tuple[str, ...]) -> list[Edge]:
        """`path`'s edges of `kinds`: as resolved in this pass, else from its merged ones."""
        found = table.get(path)
        if found is None:
            found = [e for e in self.out.get(path, ()) if e.kind in kinds]
        return found

    def _merge(self, path: str) -> list[Edge]:
        edges = (self._kind_edges(self.import_edges, path, ("imports",))
                 + self._kind_edges(self.base_edges, path, _BASE_KINDS)
                 + self._kind_edges(self.call_edges, path, ("calls",)))
        edges.sort(key=edge_key)
        return edges

    def _end_pass(self) -> None:
        self.import_edges, self.base_edges, self.call_edges = {}, {}, {}

    def release(self) -> None:
        """Empty the state piece by piece (see Graph.release)."""
        index = self.index
        for table in (self.base_deps[0], self.base_deps[1], self.call_deps, index._memo_deps,
                      self.base_users[0], self.base_users[1], self.call_users, self.vids,
                      self.import_edges, self.base_edges, self.call_edges, self.out,
                      self.class_bases[0], self.class_bases[1], index.quals, index.by_name,
                      index.bindings, index.wildcards, index.implicit, index._vis_tables,
                      index._vis_readers, index._memo, self.extracts, self._keys,
                      self.files.number):
            release_dict(table)
        self.files.paths = []
        self.edges = []
        self.source = {}

    # --- patching --------------------------------------------------------------------------

    def update(self, extracts: Mapping[str, FileExtract], touched: Iterable[str]) -> list[str]:
        """Bring the resolution to `extracts`, which differ from the current ones only at
        `touched` paths (re-extracted, added or removed). Returns the files whose resolved
        edges changed; `edges` is then a new list (else the same object), and `removed` /
        `added` hold the edges taken out and put in."""
        index = self.index
        touched = sorted(set(touched))
        before = self.extracts
        # a table clone when a dict, even after deletions (see Graph.patched)
        self.extracts = extracts.copy() if type(extracts) is dict else dict(extracts)
        self.source = extracts
        keys: set[Any] = set()          # dependency keys whose answer may have changed
        regroup = False                 # the file set or what import rules read changed
        for path in touched:
            old, new = before.get(path), self.extracts.get(path)
            if ((old is None) != (new is None) or (old and new and old.language != new.language)
                    or namespaces(old) != namespaces(new)):
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
        seen: dict[int, set[str]] = {}      # (table id, name) keys: names per table
        for k in keys:
            if type(k) is tuple and len(k) == 2 and type(k[0]) is int:
                seen.setdefault(k[0], set()).add(k[1])
        for stage, found in enumerate((self.first_bases, index.bases)):
            base_redo = sorted(redo | self._stale(self.base_users[stage], keys, seen))
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
        call_redo = sorted(redo | self._stale(self.call_users, keys, seen))
        self._resolve_calls(call_redo)
        changed = self._patch_edges(redone | set(call_redo),
                                    [p for p in touched if p not in self.extracts])
        self._end_pass()
        return changed

    def _replace_symbols(self, path: str, old: FileExtract | None, new: FileExtract | None,
                         keys: set[Any]) -> None:
        index = self.index
        old_table = index.quals.get(path, {})
        new_table = symbol_table(new) if new is not None else {}
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
            names.update((old_family, n) for n, _ in callables(old))
        if new is not None:
            names.update((new_family, n) for n, _ in callables(new))
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
        for table in (self.import_edges, self.base_edges, self.call_edges, self.vids):
            table.pop(path, None)
        for deps, users in ((self.base_deps[0], self.base_users[0]),
                            (self.base_deps[1], self.base_users[1]),
                            (self.call_deps, self.call_users)):
            _drop_deps(deps, users, path, self.files)

    def _rebind(self, path: str, keys: set[Any]) -> bool:
        """Resolve the file's imports again; add the keys of bindings that changed.
        True when anything the file's own resolution reads from its imports changed."""
        index = self.index
        old_bindings = index.bindings.get(path, {})
        # its import edges as `out` holds them (in edge order; nothing reads their order)
        old = (old_bindings, index.wildcards.get(path), index.implicit.get(path),
               [e for e in self.out[path] if e.kind == "imports"] if path in self.out else None)
        self._resolve_imports(path)
        new_bindings = index.bindings[path]
        for alias in old_bindings.keys() | new_bindings.keys():
            if old_bindings.get(alias) != new_bindings.get(alias):
                keys.add((path, alias, "b"))
        if old[1] != index.wildcards[path]:
            keys.add((path, "", "w"))
        return old != (new_bindings, index.wildcards[path], index.implicit[path],
                       sorted(self.import_edges[path], key=edge_key))

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
