"""Resolver.update (the per-save path) against a full resolve of the same extracts.

Every step patches the kept resolution and compares it with `resolve()` from scratch:
the same edges in the same order, and the same edges per source file. Real tree-sitter
extraction throughout; the workspaces exercise what a patch can get wrong (re-export
aliases, star imports, inheritance chains, unique-name guesses, package peers,
namespaces, files appearing and disappearing).
"""

from __future__ import annotations

import random
from array import array
from collections import defaultdict

import pytest

from neuralmind.graph import lookup
from neuralmind.graph.extract import extract_file
from neuralmind.graph.languages import language_for
from neuralmind.graph.model import FileExtract
from neuralmind.graph.resolve import Resolver, resolve, users_of


def extract(path: str, text: str) -> FileExtract:
    lang = language_for(path)
    assert lang is not None, path
    ex = extract_file(path, text.encode(), lang)
    assert ex.error == "", ex.error
    return ex


def extracts_of(files: dict[str, str]) -> dict[str, FileExtract]:
    return {p: extract(p, t) for p, t in files.items()}


def rows(edges: list) -> list[list]:
    return [e.to_json() for e in edges]


def assert_patched_equals_full(r: Resolver, extracts: dict[str, FileExtract]) -> None:
    full = resolve(extracts)
    assert rows(r.edges) == rows(full)
    by_file: dict[str, list] = defaultdict(list)
    for e in full:
        by_file[e.source.split("::", 1)[0]].append(e.to_json())
    assert {p: rows(v) for p, v in r.out.items() if v} == dict(by_file)


class Workspace:
    """Files as text, their extracts and a Resolver kept across edits."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = dict(files)
        self.extracts = extracts_of(self.files)
        self.resolver = Resolver(self.extracts)
        assert_patched_equals_full(self.resolver, self.extracts)

    def edit(self, path: str, text: str | None) -> list[str]:
        self.extracts = dict(self.extracts)
        if text is None:
            self.files.pop(path)
            self.extracts.pop(path)
        else:
            self.files[path] = text
            self.extracts[path] = extract(path, text)
        changed = self.resolver.update(self.extracts, [path])
        assert_patched_equals_full(self.resolver, self.extracts)
        return changed

    def edge_set(self) -> set[tuple[str, str, str]]:
        return {(e.source, e.target, e.kind) for e in self.resolver.edges}


PY = {
    "pkg/__init__.py": "from .core import Engine as PublicEngine\nfrom .shapes import *\n",
    "pkg/core.py": (
        "class Base:\n"
        "    def save(self):\n"
        "        return 1\n\n\n"
        "class Engine(Base):\n"
        "    def run(self):\n"
        "        return self.save()\n"
    ),
    "pkg/shapes.py": "def area():\n    return 2\n\n\nclass Shape:\n    def draw(self):\n        return area()\n",
    "pkg/models.py": (
        "from .core import Base\n\n\n"
        "class Model(Base):\n"
        "    class Meta:\n"
        "        ordering = 1\n"
    ),
    "app/use.py": (
        "from pkg import PublicEngine\n"
        "from pkg import area\n"
        "from pkg.models import Model\n\n\n"
        "class Thing(Model):\n"
        "    class Meta(Model.Meta):\n"
        "        pass\n\n"
        "    def go(self):\n"
        "        PublicEngine()\n"
        "        self.save()\n"
        "        area()\n"
        "        return unique_helper()\n"
    ),
    "app/more.py": (
        "from app.use import Thing\n\n\n"
        "class Child(Thing):\n"
        "    def again(self):\n"
        "        self.run()\n"
        "        return self.go()\n"
    ),
    "lib/helpers.py": "def unique_helper():\n    return 1\n",
    # resolves `PublicEngine` before app/use.py does: app/use.py then reads the memo
    "app/early.py": "from pkg import PublicEngine\n\n\ndef make():\n    return PublicEngine()\n",
}


def test_adding_a_symbol_patches_only_what_looked_it_up() -> None:
    ws = Workspace(PY)
    resolved: list[str] = []            # the files whose calls a save resolves again
    calls = ws.resolver._resolve_calls
    ws.resolver._resolve_calls = lambda paths: (resolved.extend(paths), calls(paths))[1]
    # a second `unique_helper`: app/use.py's guess is no longer unique
    assert ("app/use.py::Thing.go", "lib/helpers.py::unique_helper", "calls") in ws.edge_set()
    changed = ws.edit("pkg/core.py", PY["pkg/core.py"] + "\n\ndef unique_helper():\n    return 0\n")
    assert ("app/use.py::Thing.go", "lib/helpers.py::unique_helper", "calls") not in ws.edge_set()
    assert changed == ["app/use.py"]
    assert "pkg/shapes.py" not in resolved and "app/use.py" in resolved
    assert not ws.resolver.call_edges, "the pass's per-kind lists are dropped when it ends"
    # a method on the base: Child.again's self.run() finds it through two bases
    ws.edit("pkg/models.py", PY["pkg/models.py"] + "\n    def run(self):\n        return 3\n")
    assert ("app/more.py::Child.again", "pkg/models.py::Model.run", "calls") in ws.edge_set()


def test_removing_a_symbol_reached_through_a_re_export_alias() -> None:
    ws = Workspace(PY)
    assert ("app/use.py::Thing.go", "pkg/core.py::Engine", "calls") in ws.edge_set()
    # Engine goes: `PublicEngine` (an alias in pkg/__init__.py) no longer leads anywhere
    ws.edit("pkg/core.py", "class Base:\n    def save(self):\n        return 1\n")
    assert not any(t.startswith("pkg/core.py::Engine") for _, t, _ in ws.edge_set())
    ws.edit("pkg/core.py", PY["pkg/core.py"])
    assert ("app/use.py::Thing.go", "pkg/core.py::Engine", "calls") in ws.edge_set()
    # the alias now names another class
    ws.edit("pkg/__init__.py", "from .core import Base as PublicEngine\nfrom .shapes import *\n")
    assert ("app/use.py::Thing.go", "pkg/core.py::Base", "calls") in ws.edge_set()


def test_adding_and_removing_files() -> None:
    ws = Workspace(PY)
    ws.edit("lib/more_helpers.py", "def unique_helper():\n    return 2\n")     # ambiguous now
    ws.edit("pkg/extra.py", "from .shapes import Shape\n\n\nclass Square(Shape):\n"
                            "    def draw(self):\n        return super().draw()\n")
    assert ("pkg/extra.py::Square", "pkg/shapes.py::Shape", "inherits") in ws.edge_set()
    ws.edit("lib/helpers.py", None)                                        # unique again
    assert ("app/use.py::Thing.go", "lib/more_helpers.py::unique_helper", "calls") in ws.edge_set()
    ws.edit("pkg/shapes.py", None)                 # a star-imported module disappears
    assert not any(t.startswith("pkg/shapes.py") for _, t, _ in ws.edge_set())
    ws.edit("pkg/shapes.py", PY["pkg/shapes.py"])


def test_changing_bases_and_imports() -> None:
    ws = Workspace(PY)
    inherited = ["app/use.py::Thing.go", "pkg/core.py::Base.save", "calls", True, 1]
    assert inherited in rows(ws.resolver.edges)
    ws.edit("pkg/models.py", "class Model:\n    pass\n")     # no Base, no Meta
    assert inherited not in rows(ws.resolver.edges)      # (only the unique-name guess)
    ws.edit("pkg/models.py", PY["pkg/models.py"])
    assert ("app/use.py::Thing.Meta", "pkg/models.py::Model.Meta", "inherits") in ws.edge_set()
    ws.edit("app/use.py", PY["app/use.py"].replace("from pkg import area\n", ""))
    ws.edit("pkg/__init__.py", "from .core import Engine as PublicEngine\n")


OTHER_LANGUAGES = {
    "go/shop/a.go": "package shop\n\nfunc Helper() int { return 1 }\n",
    "go/shop/b.go": "package shop\n\nfunc Use() int { return Helper() }\n",
    "cs/Cart.cs": "namespace Shop {\n  class Cart {\n    public void Add() {}\n  }\n}\n",
    "cs/Till.cs": ("namespace Shop {\n  class Till {\n    void Ring() {\n"
                   "      var c = new Cart();\n      c.Add();\n      Cart.Make();\n    }\n  }\n}\n"),
    "web/util.ts": "export function fmt(x: number) { return x }\n",
    "web/index.ts": "export * from './util'\n",
    "web/app.ts": "import { fmt } from './index'\n\nexport function show() { return fmt(1) }\n",
}


@pytest.mark.parametrize("path, text", [
    ("go/shop/a.go", "package shop\n\nfunc Other() int { return 1 }\n"),     # peer loses Helper
    ("go/shop/c.go", "package shop\n\nfunc Helper2() int { return 2 }\n"),   # a new peer
    ("go/shop/a.go", None),
    ("cs/Cart.cs", "namespace Shop {\n  class Cart {\n    public static void Make() {}\n  }\n}\n"),
    ("cs/Cart.cs", "namespace Store {\n  class Cart {\n    public void Add() {}\n  }\n}\n"),
    ("web/util.ts", "export function other() { return 2 }\n"),
    ("web/index.ts", "export { fmt as fmt2 } from './util'\n"),
])
def test_package_peers_namespaces_and_star_exports(path: str, text: str | None) -> None:
    ws = Workspace(OTHER_LANGUAGES)
    ws.edit(path, text)
    original = OTHER_LANGUAGES.get(path)
    ws.edit(path, original)          # and back: the first resolution again
    if original is not None:
        assert rows(ws.resolver.edges) == rows(resolve(extracts_of(OTHER_LANGUAGES)))


VARIANTS: dict[str, list[str | None]] = {
    "pkg/core.py": [PY["pkg/core.py"],
                    "class Base:\n    def save(self):\n        return 1\n",
                    PY["pkg/core.py"] + "\n\ndef area():\n    return 5\n",
                    "from .shapes import Shape\n\n\nclass Engine(Shape):\n    def run(self):\n"
                    "        return self.draw()\n"],
    "pkg/__init__.py": [PY["pkg/__init__.py"], "from .core import *\n",
                        "from .models import Model as PublicEngine\nfrom .shapes import area\n"],
    "pkg/models.py": [PY["pkg/models.py"], "class Model:\n    class Meta:\n        pass\n",
                      None, "from pkg import PublicEngine\n\n\nclass Model(PublicEngine):\n"
                            "    def go(self):\n        return unique_helper()\n"],
    "lib/helpers.py": [PY["lib/helpers.py"], None, "def unique_helper():\n    return area()\n",
                       "def save():\n    return 0\n"],
    "app/use.py": [PY["app/use.py"], PY["app/use.py"].replace("self.save()", "self.run()"),
                   "from pkg.core import *\n\n\ndef go():\n    return Engine().run()\n"],
    "app/third.py": [None, "from app.more import Child\n\n\nclass Grand(Child):\n"
                           "    def last(self):\n        return self.again()\n"],
}


def random_edits(ws: Workspace, variants: dict[str, list[str | None]], seed: int) -> None:
    """40 edits, each a file set to one of its variants (None: deleted); `Workspace.edit`
    asserts equality with a full resolve after each."""
    rng = random.Random(seed)
    paths = sorted(variants)
    for _ in range(40):
        path = rng.choice(paths)
        text = rng.choice(variants[path])
        if text is None and path not in ws.files:
            continue
        ws.edit(path, text)


def test_random_edit_sequences_match_full_resolution() -> None:
    random_edits(Workspace(dict(PY)), VARIANTS, seed=7)


C_FILES = {
    "include/list.h": ("static inline int list_add(int x) { return x; }\n"
                       "static inline int list_del(int x) { return -x; }\n"),
    "include/slab.h": "void *kmalloc(int size);\nstatic inline void kfree(void *p) { }\n",
    "include/sched.h": "#include \"list.h\"\nstatic inline int schedule(void) { return 0; }\n",
    "mm/slab.c": "#include \"../include/slab.h\"\n\nvoid *kmalloc(int size) { return 0; }\n",
    "kernel/fork.c": ("#include \"../include/slab.h\"\n#include \"../include/list.h\"\n\n"
                      "int copy_process(void) { kmalloc(1); kfree(0); list_add(2);\n"
                      "  return schedule(); }\n"),
    "kernel/sched.c": ("#include \"../include/sched.h\"\n#include \"../include/slab.h\"\n\n"
                       "int run(void) { kfree(0); return list_del(1) + schedule(); }\n"),
}
C_VARIANTS: dict[str, list[str | None]] = {
    "include/list.h": [C_FILES["include/list.h"],
                       "static inline int list_add(int x) { return x; }\n",
                       C_FILES["include/list.h"] + "static inline int schedule(void) { return 1; }\n"],
    "include/slab.h": [C_FILES["include/slab.h"], "void *kmalloc(int size);\n", None],
    "include/sched.h": [C_FILES["include/sched.h"], "static inline int schedule(void) { return 2; }\n"],
    "kernel/fork.c": [C_FILES["kernel/fork.c"],
                      C_FILES["kernel/fork.c"] + "void kfree(void *p) { }\n"],
    "mm/slab.c": [C_FILES["mm/slab.c"], None, "int list_del(int x) { return x; }\n"],
}


@pytest.mark.parametrize("kept", [1024, 1])
def test_c_header_edits_match_full_resolution(kept: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Header symbols are looked up through merged include tables (recorded per name,
    shared by every file; with `kept` = 1 every other table is rebuilt when read): adding,
    removing and moving them patches like a full resolve."""
    monkeypatch.setattr(lookup, "VISIBLE_TABLES_KEPT", kept)
    ws = Workspace(C_FILES)
    fork, sched = ws.resolver.call_deps["kernel/fork.c"], ws.resolver.call_deps["kernel/sched.c"]
    shared = set(fork) & set(sched)
    assert "kfree" in fork and "kfree" in sched            # names, not (table id, name)
    assert all(any(k is other for other in sched) for k in shared)   # one object for both
    random_edits(ws, C_VARIANTS, seed=21)


CPP_FILES = {
    "geo/geo.hpp": "namespace geo {\nint helper() { return 1; }\nint other() { return 2; }\n}\n",
    "geo/use.cpp": ("#include \"geo.hpp\"\n\nnamespace geo {\nint use() { return helper(); }\n}\n"),
}


def test_names_relative_to_an_enclosing_namespace_follow_header_edits() -> None:
    """`helper()` inside `geo::use` is found as `geo.helper` through the include table: the
    lookup is recorded by its scope's prefix (`geo.`), which a change of `geo.helper` names."""
    ws = Workspace(CPP_FILES)
    assert ("geo/use.cpp::geo.use", "geo/geo.hpp::geo.helper", "calls") in ws.edge_set()
    assert set(ws.resolver.call_deps["geo/use.cpp"]) == {"geo.use.", "geo."}  # one per scope
    ws.edit("geo/geo.hpp", "namespace geo {\nint other() { return 2; }\n}\n")
    ws.edit("geo/geo.hpp", CPP_FILES["geo/geo.hpp"])
    assert ("geo/use.cpp::geo.use", "geo/geo.hpp::geo.helper", "calls") in ws.edge_set()


def test_a_key_most_files_hold_patches_like_a_full_resolve() -> None:
    """Past a few dozen files, the files holding one dependency key are a set (the reversed
    table, `call_users`): edits that move the key's answer, remove holders and add them back
    still patch like a full resolve, and the reversed table stays the forward one's mirror."""
    files = {"lib/util.h": "int kfree(int p);\nint other(int p);\n",
             "lib/util.c": "int kfree(int p) { return p; }\n"}
    for i in range(40):
        files[f"drv/d{i}.c"] = f'#include "../lib/util.h"\nint probe{i}(int x) {{ return kfree(x); }}\n'
    ws = Workspace(files)

    def mirror() -> None:
        users: dict[object, set[str]] = {}
        for path, deps in ws.resolver.call_deps.items():
            for k in deps:
                users.setdefault(k, set()).add(path)
        held = {k: set(users_of(v, ws.resolver.files)) for k, v in ws.resolver.call_users.items()}
        assert held == users

    assert any(isinstance(v, array) for v in ws.resolver.call_users.values())
    mirror()
    ws.edit("lib/util.c", "int kfree_renamed(int p) { return p; }\n")
    mirror()
    for i in range(0, 40, 3):
        ws.edit(f"drv/d{i}.c", None)
    mirror()
    ws.edit("lib/util.c", files["lib/util.c"])
    for i in range(0, 40, 3):
        ws.edit(f"drv/d{i}.c", files[f"drv/d{i}.c"])
    mirror()
    assert ("drv/d3.c::probe3", "lib/util.c::kfree", "calls") in ws.edge_set()
