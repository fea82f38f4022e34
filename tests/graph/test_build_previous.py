"""GraphBuilder reusing the graph its caller holds (the per-save path of a server)."""

from __future__ import annotations

from pathlib import Path

import pytest

import neuralmind.graph.build as build_mod
from neuralmind.config import WorkspaceConfig
from neuralmind.context import summary
from neuralmind.engine import coverage
from neuralmind.graph.build import GraphBuilder
from neuralmind.graph.store import Graph, load_graph
from neuralmind.statedir import state_dir

FILES = {
    "app/core.py": "from .util import helper\n\n\nclass Engine:\n    def run(self):\n"
                   "        return helper(1)\n",
    "app/util.py": "def helper(x):\n    return x + 1\n",
    "app/other.py": "def other():\n    return 2\n",
}


def make_repo(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def builder(root: Path) -> GraphBuilder:
    return GraphBuilder(root, WorkspaceConfig())


def edges(g: Graph) -> list[tuple[str, str, str]]:
    return sorted((e.source, e.target, e.kind) for e in g.edges)


def test_a_held_graph_is_used_instead_of_the_store(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(tmp_path / "ws")
    builder(root).build()
    build_mod._warm.clear()                     # as in a process that only loaded the graph
    held = load_graph(state_dir(root))

    def no_load(state: Path) -> Graph:
        raise AssertionError("the held graph should have been used")

    monkeypatch.setattr(build_mod, "load_graph", no_load)
    (root / "app/util.py").write_text("def helper(x):\n    return x + 2\n\n\ndef extra():\n"
                                      "    return 3\n")
    report = builder(root).build(changed=["app/util.py"], previous=held)
    monkeypatch.undo()
    assert report.reextracted == ["app/util.py"]
    assert report.graph.extracts["app/other.py"] is held.extracts["app/other.py"]
    assert state_dir(root) not in build_mod._warm     # the caller keeps it: no second copy
    stored = load_graph(state_dir(root))
    assert "app/util.py::extra" in stored.nodes and stored.token == report.graph.token
    assert edges(stored) == edges(report.graph)


def test_a_stale_held_graph_gives_way_to_the_store(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    builder(root).build()
    held = load_graph(state_dir(root))
    (root / "app/new.py").write_text("def brand_new():\n    return 1\n")
    builder(root).build()                       # another writer: a newer generation
    (root / "app/util.py").write_text("def helper(x):\n    return x + 5\n")
    report = builder(root).build(changed=["app/util.py"], previous=held)
    assert "app/new.py::brand_new" in report.graph.nodes
    assert report.graph.extracts["app/other.py"] is not held.extracts["app/other.py"]


def communities(g: Graph) -> list[tuple]:
    return [(c.name, c.files, c.top_symbols, c.description, c.size) for c in g.communities]


def test_a_body_only_save_keeps_the_communities_a_full_build_computes(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    held = builder(root).build().graph
    (root / "app/util.py").write_text("def helper(x):\n    y = x * 2\n    return y + 1\n")
    report = builder(root).build(changed=["app/util.py"], previous=held)
    assert report.reextracted == ["app/util.py"]
    assert report.graph.communities is held.communities          # not recomputed
    assert {n.id: n.community for n in report.graph.nodes.values()} == \
        {n.id: n.community for n in held.nodes.values()}
    fresh = make_repo(tmp_path / "fresh")
    (fresh / "app/util.py").write_text((root / "app/util.py").read_text())
    assert communities(builder(fresh).build().graph) == communities(report.graph)
    # a new symbol is a new outline: the communities are computed again
    (root / "app/util.py").write_text("def helper(x):\n    return x\n\n\ndef twice(x):\n"
                                      "    return 2 * x\n")
    again = builder(root).build(changed=["app/util.py"], previous=report.graph)
    assert again.graph.communities is not report.graph.communities


def test_per_file_reads_need_no_index_of_the_whole_graph(tmp_path: Path) -> None:
    """A file's nodes and the edges leaving them come from its own rows, equal to a scan of
    the whole graph, and no generation builds an index of every node or edge for them (a
    save on the Linux kernel re-indexed 835k nodes and 2.6M edges)."""
    root = make_repo(tmp_path / "ws")
    builder(root).build()
    build_mod._warm.clear()
    held = load_graph(state_dir(root))
    (root / "app/util.py").write_text("def helper(x):\n    return x + 2\n\n\ndef extra():\n"
                                      "    return helper(3)\n")
    saved = builder(root).build(changed=["app/util.py"], previous=held).graph
    for g in (held, saved):
        assert g.out_by_file is not None
        for path in g.files:
            assert g.nodes_by_file(path) == [n for n in g.nodes.values() if n.file == path]
            for n in g.nodes_by_file(path):
                assert g.out_edges(n.id) == [e for e in g.edges if e.source == n.id]
        assert g.out_edges("app/core.py::Engine.run")       # calls helper in another file
        assert g._by_file is None and g._out is None


class _NoWalk(dict):
    """A node table that fails when walked whole (what a save must not do)."""

    def values(self):  # type: ignore[override]
        raise AssertionError("walked every node")


def test_a_saves_keyword_texts_read_only_the_saved_files(tmp_path: Path) -> None:
    """The file node's text lists its top-level symbols: for a save they come from the
    saved files' own nodes (the Linux kernel's 835k nodes were walked per save), equal to
    what a walk of every node gives."""
    from neuralmind.index.node_text import file_children

    root = make_repo(tmp_path / "ws")
    graph = builder(root).build().graph
    whole = file_children(graph)
    graph.nodes = _NoWalk(graph.nodes)
    assert file_children(graph, ["app/core.py::Engine.run", "app/util.py"]) == {
        f: whole[f] for f in ("app/core.py", "app/util.py")}
    assert whole["app/core.py"] == ["Engine"]


def test_saves_carry_the_heuristic_edge_count_over(tmp_path: Path) -> None:
    """A save's report counts the guessed (unique-name) edges from the generation before
    and the resolver's delta, equal to a count of every edge."""
    from neuralmind.graph.build import prepare_incremental

    root = make_repo(tmp_path / "ws")
    builder(root).build()
    build_mod._warm.clear()
    graph = load_graph(state_dir(root))
    prepare_incremental(graph)
    texts = ["def other():\n    return helper(2)\n",             # a guess: helper is unique
             "def other():\n    return helper(2) + helper(3)\n",
             "def other():\n    return 2\n"]
    for text in texts * 2:
        (root / "app/other.py").write_text(text)
        report = builder(root).build(changed=["app/other.py"], previous=graph)
        graph = report.graph
        assert graph.heuristic is not None                   # carried, not counted again
        assert report.edges_heuristic == sum(1 for e in graph.edges if not e.resolved)
        assert report.edges_heuristic == (0 if text.endswith("2\n") else 1)


def test_a_body_only_save_keeps_l1_roles_and_a_changed_outline_matches_a_fresh_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """L1's roles (PageRank over the whole graph: ~0.25 s at 20k files, seconds on the
    kernel) are not computed again after a save that changes nothing they read, and after
    one that does, they equal a fresh build's of the same files."""
    root = make_repo(tmp_path / "ws")
    held = builder(root).build().graph
    before = summary.community_roles(held)
    (root / "app/util.py").write_text("def helper(x):\n    y = x * 2\n    return y + 1\n")
    body = builder(root).build(changed=["app/util.py"], previous=held).graph
    assert body is not held

    def no_pagerank(*args: object) -> None:
        raise AssertionError("PageRank ran again after a body-only save")

    monkeypatch.setattr(summary, "pagerank", no_pagerank)
    assert summary.community_roles(body) == before
    text = summary.render_summary(body, 1000)[0]
    monkeypatch.undo()
    fresh = make_repo(tmp_path / "fresh")
    (fresh / "app/util.py").write_text((root / "app/util.py").read_text())
    assert summary.render_summary(builder(fresh).build().graph, 1000)[0] == text
    # a new cross-file reference: the roles are computed again, as a fresh build's
    (root / "app/other.py").write_text('"""Other things."""\nfrom .util import helper\n\n\n'
                                       "def other():\n    return helper(2)\n")
    moved = builder(root).build(changed=["app/other.py"], previous=body).graph
    (fresh / "app/other.py").write_text((root / "app/other.py").read_text())
    rebuilt = builder(fresh).build().graph
    assert summary.community_roles(moved) == summary.community_roles(rebuilt)
    assert summary.render_summary(moved, 1000)[0] == summary.render_summary(rebuilt, 1000)[0]


def test_files_near_an_edit_need_no_index_of_every_edge(tmp_path: Path) -> None:
    """The files near a first edit (attention) read the importers from the resolved edges,
    equal to the whole in-edge index, which a new generation no longer builds for them."""
    root = make_repo(tmp_path / "ws")
    held = builder(root).build().graph
    (root / "app/other.py").write_text("from .util import helper\n\n\ndef other():\n"
                                       "    return helper(2)\n")
    saved = builder(root).build(changed=["app/other.py"], previous=held).graph
    for g in (held, saved):
        near = {rel: coverage.nearby_files(g, rel) for rel in g.files}
        assert g._in is None
        assert "app/core.py" in near["app/util.py"]
        for rel in g.files:
            assert g.importers(rel) == [e.source for e in g.in_edges(rel)
                                        if e.kind == "imports"]
        assert {rel: coverage.nearby_files(g, rel) for rel in g.files} == near
