"""GraphBuilder end to end on real files: full, incremental, per-save, killed mid-build."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import neuralmind.graph.build as build_mod
from neuralmind.config import WorkspaceConfig
from neuralmind.graph.build import GraphBuilder
from neuralmind.graph.store import Graph, graph_path, load_graph
from neuralmind.graph.validate import validate_graph

PKG = {
    "app/__init__.py": '"""The demo application."""\nfrom .core import Engine\n',
    "app/core.py": (
        '"""Core engine."""\n'
        "from .util import helper\n\n\n"
        "class Base:\n"
        "    def run(self):\n"
        "        return helper(1)\n\n\n"
        "class Engine(Base):\n"
        '    """Runs things."""\n\n'
        "    def start(self):\n"
        "        return self.run()\n"
    ),
    "app/util.py": '"""Helpers."""\n\n\ndef helper(x):\n    return x + 1\n',
    "cli/main.py": "from app.core import Engine\n\n\ndef main():\n    Engine().start()\n",
    "docs/guide.md": "# Guide\n\nText.\n\n## Install\n\nMore.\n",
}


def make_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    for rel, text in (files or PKG).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def canonical(g: Graph) -> dict[str, Any]:
    """Everything a consumer can see, in a comparable form (generation/time excluded)."""
    return {
        "nodes": sorted(tuple(n.to_json().values()) for n in g.nodes.values()),
        "edges": sorted(tuple(e.to_json()) for e in g.edges),
        "files": {p: (i.sha1, i.language, i.size, i.lines, i.partial, i.error)
                  for p, i in g.files.items()},
        "communities": [(c.id, c.name, c.files, c.top_symbols, c.description, c.size)
                        for c in g.communities],
        "refs": {p: [r.to_json() for r in ex.references] for p, ex in g.extracts.items()},
    }


def build(root: Path, changed: list[str] | None = None, **cfg: Any) -> build_mod.BuildReport:
    return GraphBuilder(root, WorkspaceConfig(**cfg)).build(changed=changed)


def fresh_full(root: Path, tmp: Path) -> Graph:
    """A from-scratch build of a copy of `root` (its own state dir), for comparison."""
    copy = tmp / "fresh"
    copy.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(root), str(copy)], check=True)
    subprocess.run(["rm", "-rf", str(copy / ".neuralmind")], check=True)
    return build(copy).graph


def test_full_build_extracts_resolves_and_groups(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    phases: list[str] = []
    report = GraphBuilder(root, WorkspaceConfig()).build(
        progress=lambda phase, done, total: phases.append(phase))
    g = report.graph
    assert report.files_by_language == {"markdown": 1, "python": 4}
    assert report.reextracted == sorted(PKG)
    assert report.removed == [] and report.partial_files == []
    assert {"walk", "extract", "resolve", "communities", "save"} <= set(phases)
    assert "app/core.py::Engine.start" in g.nodes
    kinds = {(e.source, e.target, e.kind) for e in g.edges}
    assert ("app/core.py", "app/util.py", "imports") in kinds
    assert ("cli/main.py::main", "app/core.py::Engine.start", "calls") in kinds
    assert ("app/core.py::Engine", "app/core.py::Base", "inherits") in kinds
    assert report.nodes == len(g.nodes) and report.communities == len(g.communities) >= 1
    assert all(n.community >= 0 for n in g.nodes.values())
    assert validate_graph(g, root) == []
    stored = load_graph(root / ".neuralmind")
    assert canonical(stored) == canonical(g)
    assert stored.generation == 1


def test_unchanged_build_reads_nothing_and_touch_only_hashes(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    build(root)
    again = build(root)
    assert again.reextracted == [] and again.saved is False
    future_ns = time.time_ns() + 5_000_000_000
    os.utime(root / "app/util.py", ns=(future_ns, future_ns))
    touched = build(root)
    assert touched.reextracted == [] and touched.saved is True     # same sha1: not re-parsed
    stored = load_graph(root / ".neuralmind")
    assert stored.files["app/util.py"].mtime_ns == future_ns
    assert build(root).saved is False


def _edit_add_delete(root: Path) -> None:
    (root / "app/util.py").write_text(
        '"""Helpers."""\n\n\ndef helper(x):\n    return twice(x)\n\n\ndef twice(x):\n    return 2 * x\n')
    (root / "app/extra.py").write_text("from .util import twice\n\n\ndef more():\n    return twice(3)\n")
    (root / "cli/main.py").unlink()


def test_incremental_full_walk_equals_fresh_build(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    build(root)
    _edit_add_delete(root)
    report = build(root)
    assert report.reextracted == ["app/extra.py", "app/util.py"]
    assert report.removed == ["cli/main.py"]
    assert ("app/extra.py::more", "app/util.py::twice", "calls") in {
        (e.source, e.target, e.kind) for e in report.graph.edges}
    assert canonical(report.graph) == canonical(fresh_full(root, tmp_path))
    assert canonical(load_graph(root / ".neuralmind")) == canonical(report.graph)


def test_incremental_changed_paths_equals_fresh_build(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    build(root)
    _edit_add_delete(root)
    report = build(root, changed=[str(root / "app/util.py"), "app/extra.py", "cli/main.py",
                                  "../outside.py", "README.unknown"])
    assert report.reextracted == ["app/extra.py", "app/util.py"]
    assert report.removed == ["cli/main.py"]
    assert canonical(report.graph) == canonical(fresh_full(root, tmp_path))


def test_body_only_edit_keeps_edges_and_shifts_spans(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    first = build(root).graph
    edges_before = sorted(tuple(e.to_json()) for e in first.resolved)
    (root / "app/util.py").write_text(
        '"""Helpers."""\n\n# a new comment line\n\ndef helper(x):\n    return x + 1\n')
    report = build(root, changed=["app/util.py"])
    assert report.reextracted == ["app/util.py"]
    assert report.graph.nodes["app/util.py::helper"].start_line == 5
    assert sorted(tuple(e.to_json()) for e in report.graph.resolved) == edges_before
    assert canonical(report.graph) == canonical(fresh_full(root, tmp_path))


def _edges(g: Graph) -> list[tuple]:
    return sorted(tuple(e.to_json()) for e in g.resolved)


@pytest.mark.parametrize("edit", ["new_call", "name_becomes_ambiguous", "name_added",
                                  "method_removed_from_base", "import_changed",
                                  "symbol_removed", "file_added"])
def test_per_save_resolution_equals_a_full_resolve(tmp_path: Path, edit: str) -> None:
    files = dict(PKG)
    files["app/other.py"] = "def lonely():\n    return helper(2)\n\n\ndef unique_fn():\n    return 0\n"
    files["app/caller.py"] = "def use():\n    return unique_fn() + later()\n"
    root = make_repo(tmp_path / "ws", files)
    build(root)
    target = {"new_call": "app/util.py", "name_becomes_ambiguous": "app/util.py",
              "name_added": "app/util.py", "method_removed_from_base": "app/core.py",
              "import_changed": "app/core.py", "symbol_removed": "app/util.py",
              "file_added": "app/fresh.py"}[edit]
    text = (root / target).read_text() if (root / target).exists() else ""
    if edit == "new_call":
        text += "\n\ndef extra():\n    return helper(3)\n"
    elif edit == "name_becomes_ambiguous":      # unique_fn is no longer unique: guess dropped
        text += "\n\ndef unique_fn():\n    return 1\n"
    elif edit == "name_added":                  # `later` now has a definition to guess
        text += "\n\ndef later():\n    return 2\n"
    elif edit == "method_removed_from_base":    # Engine.start's self.run() loses its target
        text = text.replace("    def run(self):\n        return helper(1)\n", "    pass\n")
    elif edit == "import_changed":
        text = text.replace("from .util import helper", "from .other import lonely as helper")
    elif edit == "symbol_removed":              # helper's callers lose their target
        text = '"""Helpers."""\n'
    elif edit == "file_added":                  # a second `lonely`, and calls into app/
        text = "from .core import Engine\n\n\ndef lonely():\n    return Engine().start()\n"
    (root / target).write_text(text)
    report = build(root, changed=[target])
    assert report.reextracted == [target]
    assert _edges(report.graph) == _edges(fresh_full(root, tmp_path))
    assert canonical(report.graph) == canonical(fresh_full(root, tmp_path / "again"))


SAVES = [  # (path, new text or None to delete): what an editor session does
    ("app/util.py", '"""Helpers."""\n\n\ndef helper(x):\n    y = x\n    return y + 1\n'),
    ("app/util.py", '"""Helpers."""\n\n\ndef helper(x):\n    return twice(x)\n\n\n'
                    'def twice(x):\n    """Doubles."""\n    return 2 * x\n'),
    ("app/core.py", PKG["app/core.py"].replace("    def run(self):\n        return helper(1)\n",
                                               "    pass\n")),
    ("cli/main.py", "from app.util import twice\nfrom app.core import Engine\n\n\ndef main():\n"
                    "    Engine().start()\n    return twice(2)\n"),
    ("app/extra.py", "from .util import twice\n\n\nclass Runner:\n    def run(self):\n"
                     "        return twice(3)\n"),
    ("app/extra.py", "class Runner:\n    def run(self):\n        return 3\n"),   # no links left
    ("app/core.py", PKG["app/core.py"]),
    ("app/util.py", None),
    ("docs/guide.md", "# Guide\n\nText.\n"),
]


def test_a_session_of_saves_patches_the_graph_a_full_build_computes(tmp_path: Path) -> None:
    """Each save patches the resolution (and communities) the previous save left: the
    graph, in memory and stored, equals a from-scratch build after every step."""
    root = make_repo(tmp_path / "ws")
    graph = build(root).graph
    resolver = None
    for step, (path, text) in enumerate(SAVES):
        if text is None:
            (root / path).unlink()
        else:
            (root / path).write_text(text, encoding="utf-8")
        report = GraphBuilder(root, WorkspaceConfig()).build(changed=[path], previous=graph)
        assert report.graph.resolver is not None
        if resolver is not None:
            assert report.graph.resolver is resolver      # patched, not built again
            assert graph.resolver is None                 # the old graph no longer holds it
        resolver, graph = report.graph.resolver, report.graph
        fresh = fresh_full(root, tmp_path / f"fresh{step}")
        assert canonical(graph) == canonical(fresh), (step, path)
        assert [e.to_json() for e in graph.resolved] == [e.to_json() for e in fresh.resolved]
        assert {n.id: n.community for n in graph.nodes.values()} == \
            {n.id: n.community for n in fresh.nodes.values()}
        assert canonical(load_graph(root / ".neuralmind")) == canonical(graph)


def test_warm_graph_is_reused_until_another_process_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(tmp_path / "ws")
    build(root)

    def no_load(state: Path) -> Graph:
        raise AssertionError("the warm graph should have been used")

    monkeypatch.setattr(build_mod, "load_graph", no_load)
    (root / "app/util.py").write_text('"""Helpers."""\n\n\ndef helper(x):\n    return x + 2\n')
    assert build(root, changed=["app/util.py"]).reextracted == ["app/util.py"]
    monkeypatch.undo()
    # another process writes a new generation: the next in-process build must see it
    (root / "app/extra.py").write_text("def extra():\n    return 1\n")
    assert _run_build(root) == 0
    (root / "app/util.py").write_text('"""Helpers."""\n\n\ndef helper(x):\n    return x + 3\n')
    report = build(root, changed=["app/util.py"])
    assert "app/extra.py::extra" in report.graph.nodes
    assert canonical(report.graph) == canonical(fresh_full(root, tmp_path))


def test_changed_directory_and_symlinked_root_paths(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    build(root)
    subprocess.run(["rm", "-rf", str(root / "cli")], check=True)
    (root / "newpkg").mkdir()
    (root / "newpkg/mod.py").write_text("def fresh():\n    return 1\n")
    report = build(root, changed=["cli", "newpkg"])
    assert report.removed == ["cli/main.py"] and report.reextracted == ["newpkg/mod.py"]
    link = tmp_path / "link"
    link.symlink_to(root)
    (root / "newpkg/mod.py").write_text("def fresh():\n    return 2\n\n\ndef more():\n    return 3\n")
    report = build(root, changed=[str(link / "newpkg/mod.py")])
    assert report.reextracted == ["newpkg/mod.py"]
    assert "newpkg/mod.py::more" in report.graph.nodes


def test_changed_path_that_became_ignored_is_removed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    build(root)
    (root / ".neuralmindignore").write_text("docs/\n")
    report = build(root, changed=["docs/guide.md"])
    assert report.removed == ["docs/guide.md"]
    assert report.skipped["ignored"]["paths"] == ["docs/guide.md"]
    assert "docs/guide.md" not in report.graph.files


def test_empty_folder_gives_empty_valid_stored_graph(tmp_path: Path) -> None:
    report = build(tmp_path)
    assert report.nodes == 0 and report.communities == 0 and report.files_by_language == {}
    stored = load_graph(tmp_path / ".neuralmind")
    assert stored.generation == 1 and not stored.nodes
    assert validate_graph(stored, tmp_path) == []


def test_bad_inputs_partial_non_utf8_binary_large(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_repo(root, {"ok.py": "def f():\n    return 1\n",
                     "broken.py": "def g(:\n    return 2\n\ndef h():\n    return 3\n"})
    (root / "latin.py").write_bytes(b"# caf\xe9\n\ndef k():\n    return '\xff'\n")
    (root / "blob.py").write_bytes(b"\x00\x01binary")
    (root / "huge.py").write_text("x = 1\n" * 200)
    report = build(root, max_file_bytes=1000)
    g = report.graph
    assert report.partial_files == ["broken.py"]
    assert "broken.py::h" in g.nodes
    assert g.nodes["latin.py::k"].start_line == 3
    assert report.skipped["binary"]["paths"] == ["blob.py"]
    assert report.skipped["too_large"]["paths"] == ["huge.py"]
    assert validate_graph(g, root) == []


def test_language_override_change_reextracts(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws", {"a.h": "int add(int a, int b);\n"})
    assert build(root).graph.files["a.h"].language == "c"
    report = build(root, languages={".h": "cpp"})
    assert report.reextracted == ["a.h"]
    assert report.graph.files["a.h"].language == "cpp"


def test_process_pool_gives_the_serial_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"pkg/m{i:02d}.py": f"from .m{(i + 1) % 24:02d} import f{(i + 1) % 24:02d}\n\n\n"
                                 f"def f{i:02d}():\n    return f{(i + 1) % 24:02d}()\n"
             for i in range(24)}
    files["pkg/__init__.py"] = ""
    serial = build(make_repo(tmp_path / "a", files)).graph
    monkeypatch.setattr(build_mod, "POOL_MIN_FILES", 10)
    monkeypatch.setattr(build_mod, "POOL_CHUNK", 4)
    pooled = build(make_repo(tmp_path / "b", files))
    assert pooled.reextracted == sorted(files)
    assert canonical(pooled.graph) == canonical(serial)


def test_damaged_store_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    build(root)
    db = graph_path(root / ".neuralmind")
    db.write_bytes(b"this is not sqlite" * 100)
    for side in ("-wal", "-shm"):
        db.with_name(db.name + side).unlink(missing_ok=True)
    report = build(root)
    assert report.reextracted == sorted(PKG)
    assert list((root / ".neuralmind").glob("graph.db.corrupt-*"))
    assert validate_graph(load_graph(root / ".neuralmind"), root) == []


# --- killed builds -----------------------------------------------------------------------------

KILL_SCRIPT = """
import sys
from pathlib import Path
from neuralmind.config import WorkspaceConfig
from neuralmind.graph.build import GraphBuilder
if __name__ == "__main__":
    GraphBuilder(Path(sys.argv[1]), WorkspaceConfig()).build()
"""


def _generated_repo(root: Path, n: int, salt: str) -> None:
    for i in range(n):
        body = "".join(f"def fn_{j}_{salt}(x):\n    return fn_{(j + 1) % 8}_{salt}(x) + {i}\n\n\n"
                       for j in range(8))
        make_repo(root, {f"gen/mod{i:03d}.py": f'"""Module {i}."""\nfrom . import mod{(i + 1) % n:03d}\n\n\n' + body})


def _run_build(root: Path, env_extra: dict[str, str] | None = None,
               kill_after: float | None = None) -> int:
    env = {**os.environ, **(env_extra or {})}
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(root)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if kill_after is not None:
        time.sleep(kill_after)
        proc.send_signal(signal.SIGKILL)
    return proc.wait(timeout=120)


def _stored_state(root: Path) -> tuple[int, set[str]]:
    g = load_graph(root / ".neuralmind")
    assert validate_graph(g, None) == [], validate_graph(g, None)[:3]
    return g.generation, {n.name for n in g.nodes.values() if n.kind == "function"}


@pytest.mark.parametrize("point", ["extract", "before_save", "mid_save", "after_save"])
def test_build_killed_at_named_point_leaves_a_valid_graph(tmp_path: Path, point: str) -> None:
    root = tmp_path / "ws"
    _generated_repo(root, 20, "old")
    build(root)
    gen_before, names_before = _stored_state(root)
    _generated_repo(root, 20, "new")
    rc = _run_build(root, {"NEURALMIND_TEST_KILL_AT": point})
    assert rc == -signal.SIGKILL
    gen_after, names_after = _stored_state(root)
    if point == "after_save":
        assert gen_after == gen_before + 1 and all(n.endswith("_new") for n in names_after)
    else:   # the previous graph, untouched
        assert gen_after == gen_before and names_after == names_before
    report = build(root)     # and the next build completes from there
    assert all(n.endswith("_new") for n in _stored_state(root)[1])
    assert validate_graph(report.graph, root) == []


def test_build_killed_at_random_moments_leaves_a_valid_graph(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _generated_repo(root, 60, "v0")
    start = time.monotonic()
    assert _run_build(root) == 0
    full = time.monotonic() - start
    for k, frac in enumerate((0.35, 0.6, 0.8, 0.9, 0.97)):
        _generated_repo(root, 60, f"v{k + 1}")
        _run_build(root, kill_after=full * frac)
        gen, names = _stored_state(root)
        suffixes = {n.rsplit("_", 1)[1] for n in names}
        assert len(suffixes) == 1 and gen >= 1            # one whole generation, never a mix
    db = sqlite3.connect(graph_path(root / ".neuralmind"))
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
