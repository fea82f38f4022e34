"""A build leaves nothing for the garbage collector's young passes to walk.

A one-file save of whole Django builds ~78k objects (the new graph's containers). Left in
the young generation, the next collection traversed them: 54-107 ms holding the GIL on
the engine thread, a stall of the editor's event loop. The build freezes what it built.
"""

from __future__ import annotations

import gc
from pathlib import Path

from neuralmind.config import WorkspaceConfig
from neuralmind.graph.build import GraphBuilder, prepare_incremental
from neuralmind.graph.store import load_graph
from neuralmind.statedir import state_dir


def tracked() -> int:
    return sum(len(gc.get_objects(generation)) for generation in range(3))


def test_a_save_build_leaves_no_young_objects(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for i in range(60):
        path = root / "pkg" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        nxt = (i + 1) % 60
        path.write_text(f"from pkg.mod{nxt} import f{nxt}_0\n\n" +
                        "".join(f"def f{i}_{j}(x):\n    return f{nxt}_0(x)\n\n\n"
                                for j in range(8)))
    GraphBuilder(root, WorkspaceConfig()).build()
    graph = load_graph(state_dir(root))
    prepare_incremental(graph)
    (root / "pkg" / "new.py").write_text("from pkg.mod1 import f1_0\n\n\ndef g(x):\n"
                                         "    return f1_0(x)\n")
    gc.collect()
    gc.freeze()
    try:
        before = tracked()
        report = GraphBuilder(root, WorkspaceConfig()).build(changed=["pkg/new.py"],
                                                             previous=graph)
        after = tracked()
        assert len(report.graph.nodes) > 500 and "pkg/new.py::g" in report.graph.nodes
        # without the freeze the ~800 objects the save built are all still tracked here
        assert after - before < 100, (before, after)
    finally:
        gc.unfreeze()
