"""What a long-lived process needs of a graph load: stored edge order kept without a
sort, loaded objects out of the GC's way, a dropped generation freed piecewise."""

from __future__ import annotations

import gc
from pathlib import Path

from neuralmind.config import WorkspaceConfig
from neuralmind.graph.build import GraphBuilder, prepare_incremental
from neuralmind.graph.model import edge_key
from neuralmind.graph.store import group_by_source_file, load_graph

FILES = {
    "app/core.py": "from .util import helper\n\n\nclass Engine:\n    def run(self):\n"
                   "        return helper(1)\n",
    "app/util.py": "def helper(x):\n    return x + 1\n",
    # `web/a.js` and `web/a.js.ts`: the second file's ids sort among the first's
    # (`web/a.js.ts::g` < `web/a.js::f`), so joining the stored rows is out of order
    "web/a.js": "import { g } from './a.js.ts'\n\nexport function f() { return g() }\n",
    "web/a.js.ts": "import { f } from './a.js'\n\nexport function g() { return f() }\n",
}


def make_repo(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_load_keeps_edge_order_and_sorts_only_interleaved_files(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    built = GraphBuilder(root, WorkspaceConfig()).build().graph
    loaded = load_graph(root / ".neuralmind")
    keys = [edge_key(e) for e in loaded.resolved]
    assert keys == sorted(keys) and len(keys) >= 6
    assert [e.to_json() for e in loaded.resolved] == [e.to_json() for e in built.resolved]
    files = [e.source.split("::")[0] for e in loaded.resolved]
    assert files != sorted(files)       # the interleaving case really occurs here
    regrouped: dict[str, list[list]] = {}
    for e in loaded.resolved:
        regrouped.setdefault(loaded.nodes[e.source].file, []).append(e.to_json())
    assert {p: [e.to_json() for e in v] for p, v in group_by_source_file(loaded).items()} \
        == regrouped


def test_a_load_leaves_nothing_for_the_gc_to_traverse(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    GraphBuilder(root, WorkspaceConfig()).build()
    graph = load_graph(root / ".neuralmind")
    assert gc.isenabled()
    node = next(iter(graph.nodes.values()))
    assert gc.is_tracked(node) and gc.is_tracked(graph.extracts)

    def collectable() -> set[int]:      # what any generation's pass would traverse
        return {id(o) for o in gc.get_objects()}

    assert id(node) not in collectable() and id(graph.extracts) not in collectable()
    prepare_incremental(graph)
    resolver = graph.resolver
    assert resolver is not None and resolver.edges is graph.resolved
    assert id(resolver.index.quals) not in collectable()


def test_release_empties_a_dropped_generation(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "ws")
    GraphBuilder(root, WorkspaceConfig()).build()
    graph = load_graph(root / ".neuralmind")
    prepare_incremental(graph)
    resolver = graph.resolver
    assert resolver is not None
    graph.release()
    assert not graph.nodes and not graph.extracts and not graph.edges and not graph.resolved
    assert graph.resolver is None and not resolver.out and not resolver.index.quals
    again = load_graph(root / ".neuralmind")              # the stored graph is untouched
    assert len(again.nodes) > 0
