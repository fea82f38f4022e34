"""A save's graph, communities and stored rows equal a fresh build's, and are made from the
saved files only: no new node dict of the whole graph, no re-ranking of a community's
other files, no comparison of rows the save cannot have changed (the Linux kernel paid
~1.5 s per save for those three)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import neuralmind.graph.build as build_mod
import neuralmind.graph.community_rank as community_rank
import neuralmind.graph.rank_edges as rank_edges_mod
import neuralmind.graph.store as store_mod
from neuralmind.config import L1_KEY_SYMBOLS, WorkspaceConfig
from neuralmind.context import summary
from neuralmind.context.summary import community_roles
from neuralmind.graph.build import GraphBuilder, prepare_incremental
from neuralmind.graph.store import Graph, graph_path, load_graph
from neuralmind.index.node_text import file_children
from neuralmind.statedir import state_dir

PACKAGES = 3
FILES_PER_PACKAGE = 6
FUNCTIONS = 5


def py_file(pkg: int, i: int, extra: str = "") -> str:
    """Functions calling the next file's functions (a ring per package: one community
    each), a class, and a module docstring on every other file."""
    nxt = (i + 1) % FILES_PER_PACKAGE
    lines = [f'"""Module {pkg}.{i} of the test ring."""\n'] if i % 2 == 0 else []
    lines.append(f"from pkg{pkg}.m{nxt} import " + ", ".join(
        f"f{pkg}_{nxt}_{k}" for k in range(FUNCTIONS)) + "\n\n")
    for k in range(FUNCTIONS):
        calls = "".join(f"    f{pkg}_{nxt}_{j}(x)\n" for j in range(k + 1))
        lines.append(f"def f{pkg}_{i}_{k}(x):\n    \"\"\"Doc {k}.\"\"\"\n{calls}    return x\n\n\n")
        lines.append(f"def _private{pkg}_{i}_{k}(x):\n    return f{pkg}_{nxt}_0(x)\n\n\n")
    lines.append(f"class Thing{pkg}_{i}:\n    def run(self):\n        return f{pkg}_{i}_0(1)\n")
    return "".join(lines) + extra


def make_repo(root: Path) -> None:
    for pkg in range(PACKAGES):
        (root / f"pkg{pkg}").mkdir(parents=True)
        (root / f"pkg{pkg}" / "__init__.py").write_text("")
        for i in range(FILES_PER_PACKAGE):
            (root / f"pkg{pkg}" / f"m{i}.py").write_text(py_file(pkg, i))
    (root / "native").mkdir()
    (root / "native" / "util.h").write_text("int helper(int v);\n")
    (root / "native" / "util.c").write_text('#include "util.h"\n\nint helper(int v)\n{\n'
                                            "\treturn v + 1;\n}\n")
    (root / "native" / "main.c").write_text('#include "util.h"\n\nint main(void)\n{\n'
                                            "\treturn helper(1);\n}\n")


def state(g: Graph) -> dict[str, Any]:
    """Everything a graph holds that answers and the store read, in order."""
    return {
        "extracts": list(g.extracts),
        # in a fresh build's order (a save appends the ids it adds: Graph.node_ids)
        "nodes": [(k, n.id, n.kind, n.name, n.qualname, n.file, n.start_line, n.end_line,
                   n.signature, n.docstring, n.community)
                  for k, n in ((k, g.nodes[k]) for k in g.node_ids())],
        "node_keys": sorted(g.nodes),
        "roles": community_roles(g),                 # L1: PageRank over the nodes in order
        "children": file_children(g),                # file nodes' keyword texts list these
        "edges": [(e.source, e.target, e.kind, e.resolved, e.count) for e in g.edges],
        "resolved": [(e.source, e.target, e.kind, e.resolved, e.count) for e in g.resolved],
        "files": [(p, i.sha1, i.language, i.size, i.lines, i.partial, i.error)
                  for p, i in g.files.items()],
        "communities": [(c.id, c.name, c.files, c.top_symbols, c.description, c.size)
                        for c in g.communities],
    }


def tables(g: Graph) -> list[list[tuple[Any, int]]]:
    """Which objects a graph's tables hold, in order (generations share the objects)."""
    return [[(k, id(v)) for k, v in table.items()]
            for table in (g.nodes, g.extracts, g.files, g.out_by_file or {})] + [
        [(i, id(e)) for i, e in enumerate(rows)] for rows in (g.edges, g.resolved)]


def stored_rows(root: Path) -> dict[str, Any]:
    """The stored rows (modification times aside: the copy has its own) and communities."""
    con = sqlite3.connect(str(graph_path(state_dir(root))))
    try:
        rows = con.execute("SELECT path, sha1, language, size, lines, partial, error, "
                           "extract, out FROM files ORDER BY path").fetchall()
        communities = con.execute("SELECT value FROM meta WHERE key='communities'").fetchone()
    finally:
        con.close()
    return {"rows": rows, "communities": communities}


def report_facts(report: Any) -> tuple[Any, ...]:
    return (report.files_by_language, report.nodes, report.edges_resolved,
            report.edges_heuristic, report.communities, report.partial_files,
            report.failed_files)


def fresh(root: Path, tmp: Path) -> tuple[Any, dict[str, Any]]:
    """A full build of a copy of `root` as it is now: its report and stored rows."""
    copy = tmp / "fresh"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".neuralmind"))
    build_mod._warm.clear()
    report = GraphBuilder(copy, WorkspaceConfig()).build()
    return report, stored_rows(copy)


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1))


SAVES: list[tuple[str, list[tuple[str, str, str]]]] = [
    ("a function added (new ids mid-graph)",
     [("pkg1/m2.py", "class Thing1_2:", "def added_one(x):\n    return x\n\n\nclass Thing1_2:")]),
    ("a body-only edit", [("pkg1/m2.py", "return x\n\n\nclass", "return x + 1\n\n\nclass")]),
    ("a new call to a far file (edges and scores move in two communities)",
     [("pkg0/m1.py", "def f0_1_0(x):\n", "def f0_1_0(x):\n    f2_3_4(x)\n"),
      ("pkg0/m1.py", "from pkg0", "from pkg2.m3 import f2_3_4\nfrom pkg0")]),
    ("the most called function removed",
     [("pkg2/m4.py", "def f2_4_0(x):", "def gone_now(x):")]),
    ("a module docstring added and one removed, in two files at once",
     [("pkg1/m1.py", "from pkg1", '"""Now documented: the best file of its group."""\nfrom pkg1'),
      ("pkg1/m0.py", '"""Module 1.0 of the test ring."""\n', "")]),
    ("a file that no longer parses whole (partial)",
     [("pkg0/m5.py", "class Thing0_5:", "def broken(:\n    pass\n\n\nclass Thing0_5:")]),
    ("a C function added and its caller changed",
     [("native/util.c", "int helper(int v)", "int helper2(int v)\n{\n\treturn v;\n}\n\n"
                                             "int helper(int v)"),
      ("native/main.c", "return helper(1);", "return helper(1) + helper(2);")]),
]


@pytest.mark.parametrize("kept", [32, 5])
def test_saves_give_a_fresh_builds_graph_rows_and_communities_from_the_saved_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: int) -> None:
    # kept=5: as many best symbols kept as a community shows, so a save that demotes one
    # runs out of them and ranks the whole community again (the same answer)
    monkeypatch.setattr(community_rank, "RANKED_SYMBOLS_KEPT", kept)
    root = tmp_path / "ws"
    make_repo(root)
    GraphBuilder(root, WorkspaceConfig()).build()
    build_mod._warm.clear()
    held = load_graph(state_dir(root))          # as the server holds it
    prepare_incremental(held)

    assembled: list[int] = []
    ranked: list[int] = []
    checked: list[int] = []
    real_from_parts = Graph.from_parts.__func__   # type: ignore[attr-defined]
    real_full = community_rank.full_ranking
    real_rows = store_mod._rows_to_check

    def from_parts(cls: type[Graph], extracts: Any, files: Any, resolved: Any) -> Graph:
        assembled.append(len(extracts))
        return real_from_parts(cls, extracts, files, resolved)

    def full_ranking(graph: Graph, members: list[str], score: Any) -> Any:
        ranked.append(len(members))
        return real_full(graph, members, score)

    def rows_to_check(graph: Graph, only: Any) -> list[str]:
        out = real_rows(graph, only)
        checked.append(len(out))
        return out

    monkeypatch.setattr(Graph, "from_parts", classmethod(from_parts))
    monkeypatch.setattr(community_rank, "full_ranking", full_ranking)
    monkeypatch.setattr(store_mod, "_rows_to_check", rows_to_check)
    total_files = len(held.files)
    for what, edits in SAVES:
        for rel, old, new in edits:
            edit(root, rel, old, new)
        assembled.clear(), ranked.clear(), checked.clear()
        paths = sorted({rel for rel, _, _ in edits})
        prev, prev_tables = held, tables(held)
        report = GraphBuilder(root, WorkspaceConfig()).build(changed=paths, previous=held)
        held = report.graph
        work = (list(assembled), list(ranked), list(checked))
        # the save copied what it patched: the previous generation's tables are as they were
        # (the server answers from it until the save returns; a failed save leaves it serving)
        assert tables(prev) == prev_tables, what
        # ... and it did not make the whole edge list (made when read, by `state` below)
        assert held._edges is None, what
        monkeypatch.setattr(Graph, "from_parts", classmethod(real_from_parts))
        monkeypatch.setattr(store_mod, "_rows_to_check", real_rows)
        expected, expected_rows = fresh(root, tmp_path)
        monkeypatch.setattr(Graph, "from_parts", classmethod(from_parts))
        monkeypatch.setattr(store_mod, "_rows_to_check", rows_to_check)
        assert state(held) == state(expected.graph), what
        assert report_facts(report) == report_facts(expected), what
        assert stored_rows(root) == expected_rows, what
        assert state(load_graph(state_dir(root))) == state(expected.graph), what
        assembled_now, ranked_now, checked_now = work
        assert assembled_now == [], what           # the same files: patched, not assembled
        assert all(checked < total_files for checked in checked_now), (what, checked_now)
        if kept > FUNCTIONS * 3:                   # enough kept: no community ranked whole
            assert ranked_now == [], (what, ranked_now)

    # a new file and a removed one: assembled whole, still a fresh build's
    (root / "pkg0" / "m9.py").write_text("def nine():\n    return f0_0_0(9)\n")
    (root / "pkg2" / "m5.py").unlink()
    report = GraphBuilder(root, WorkspaceConfig()).build(changed=["pkg0/m9.py", "pkg2/m5.py"],
                                                         previous=held)
    monkeypatch.undo()
    expected, expected_rows = fresh(root, tmp_path)
    assert state(report.graph) == state(expected.graph)
    assert report_facts(report) == report_facts(expected)
    assert stored_rows(root) == expected_rows


def test_l1_roles_after_structural_saves_are_a_fresh_builds_from_patched_edge_arrays(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A save that adds, removes or renames symbols or edges patches PageRank's numbered
    edges (graph.rank_edges) instead of numbering every edge again (~5 s on the Linux
    kernel), and L1's roles from them equal the one-pass walk's on the same graph and a
    fresh build's of the same files."""
    root = tmp_path / "ws"
    make_repo(root)
    GraphBuilder(root, WorkspaceConfig()).build()
    build_mod._warm.clear()
    held = load_graph(state_dir(root))
    prepare_incremental(held)
    assert community_roles(held) == summary.roles_by_walk(held)
    numbered: list[int] = []
    real_made = rank_edges_mod._made

    def made(graph: Graph) -> Any:
        numbered.append(len(graph.nodes))
        return real_made(graph)

    monkeypatch.setattr(rank_edges_mod, "_made", made)
    for what, edits in SAVES:
        for rel, old, new in edits:
            edit(root, rel, old, new)
        paths = sorted({rel for rel, _, _ in edits})
        numbered.clear()                                  # the last fresh build's
        held = GraphBuilder(root, WorkspaceConfig()).build(changed=paths, previous=held).graph
        patched = held.rank_edges
        assert patched is not None, what                  # patched by the save
        again = real_made(held)                           # numbered from scratch
        assert patched.n == again.n and patched.missing == again.missing, what
        for mine, theirs in ((patched.own, again.own),
                             ((patched.res_src, patched.res_dst), (again.res_src, again.res_dst)),
                             (patched.endpoints(), again.endpoints())):
            assert all(np.array_equal(a, b) for a, b in zip(mine, theirs, strict=True)), what
        roles = community_roles(held)
        assert numbered == [], what
        kept = held.rank_edges.memo[summary._ARRAYS][1][:4]    # spliced from the last
        again_facts = summary._facts(held, {}, held.rank_edges.offsets)
        assert all(np.array_equal(a, b) for a, b in zip(kept, again_facts, strict=True)), what
        assert roles == summary.roles_by_walk(held), what
        expected, _ = fresh(root, tmp_path)
        assert roles == community_roles(expected.graph), what
        assert summary.render_summary(held, 1000)[0] == summary.render_summary(
            expected.graph, 1000)[0], what


def test_key_symbols_by_partition_are_sorteds_first_ones_ties_included() -> None:
    """L1's key symbols come from a partition of the ranks, with only the nodes tied at
    the cut compared by id: the same as sorting every candidate, on ranks full of ties."""
    rng = np.random.default_rng(7)

    class N:
        def __init__(self, i: int) -> None:
            self.id = f"f.py::s{i:04d}"[::-1]        # id order unrelated to position

    nodes = [N(i) for i in range(400)]
    for trial in range(200):
        size = int(rng.integers(1, 60))
        cands = rng.choice(len(nodes), size=size, replace=False)
        rank = rng.integers(0, 4, size=len(nodes)).astype(np.float64) / 8
        entry = rng.random(len(nodes)) < (0.0, 0.1, 0.5)[trial % 3]
        want = sorted(cands.tolist(), key=lambda s: (not entry[s], -rank[s], nodes[s].id))
        got = summary._first_keys(cands, entry, rank, lambda ss: [nodes[s] for s in ss])
        assert [n.id for n in got] == [nodes[s].id for s in want[:L1_KEY_SYMBOLS]], trial
