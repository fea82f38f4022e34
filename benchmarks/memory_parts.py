"""Exclusive bytes of each structure a language server holds (KMEM10, issue #21 part 4).

    python benchmarks/memory_parts.py ROOT        # an indexed workspace (the kernel's copy)

Loads the workspace as `neuralmind-lsp` does (open, warm-up), asks scale_bench's
LSP_QUESTIONS twice (search, then context), then drops the server's structures one at a
time and prints what pymalloc (objects up to 512 B, in its own arenas) and malloc
release for each: its exclusive bytes, in drop order (a string two tables share counts
where the last holder is dropped). Also the resolver's reversed dependency tables by how
many files hold a key. Nothing is written to ROOT beyond what opening a workspace writes.
"""

from __future__ import annotations

import ctypes
import gc
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_bench import (  # noqa: E402
    LSP_QUESTIONS,
    _MallInfo2,
    heap_mb,
    load_average,
    pymalloc_stats,
)

from neuralmind.config import WorkspaceConfig  # noqa: E402
from neuralmind.engine.workspace import Workspace  # noqa: E402

_libc = ctypes.CDLL("libc.so.6")
_libc.mallinfo2.restype = _MallInfo2


def live_mb() -> float:
    """MB in live pymalloc blocks plus malloc's bytes in use (mmapped chunks included)."""
    m = re.search(r"# bytes in allocated blocks\s*=\s*([\d,]+)", pymalloc_stats())
    blocks = int(m.group(1).replace(",", "")) if m else 0
    info = _libc.mallinfo2()
    return (blocks + info.uordblks + info.hblkhd) / 2**20


def users_table(name: str, users: dict[Any, Any]) -> None:
    """A reversed dependency table's keys by how many files hold each, and its containers."""
    keys: Counter[str] = Counter()
    members: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    for held in users.values():
        n = 1 if type(held) is str else len(held)
        bucket = "1" if n == 1 else "2-32" if n <= 32 else "33-1000" if n <= 1000 else ">1000"
        keys[bucket] += 1
        members[bucket] += n
        sizes[bucket] += 0 if type(held) is str else sys.getsizeof(held)
    print(name, "keys", dict(keys), "members", dict(members),
          "container MB", {k: v >> 20 for k, v in sizes.items()}, flush=True)


def main() -> None:
    root = Path(sys.argv[1])
    ws = Workspace.open_for_serving(root, WorkspaceConfig())
    ws.warm_up()
    for q in LSP_QUESTIONS * 2:
        ws.search(q, k=10)
    for q in LSP_QUESTIONS * 2:
        ws.query(q, budget=1000)
    gc.collect()
    start = heap_mb()
    print("after questions", start, load_average(), flush=True)
    g, ix = ws.graph, ws.index
    r = g.resolver
    assert r is not None
    users_table("call_users", r.call_users)
    kinds = Counter(type(k).__name__ + (str(len(k)) if type(k) is tuple else "") for k in r._keys)
    prefixes = [k for k in r._keys if type(k) is str and k.endswith(".")]
    print("key types", dict(kinds), "scope prefixes", len(prefixes),
          sum(sys.getsizeof(k) for k in prefixes) >> 20, "MB", flush=True)
    steps: list[tuple[str, float]] = []

    def drop(name: str, fn: Callable[[], Any]) -> None:
        before = live_mb()
        fn()
        gc.collect()
        freed = before - live_mb()
        steps.append((name, round(freed, 1)))
        print(f"{freed:8.1f} MB  {name}", flush=True)

    bm, vec, idx = ix._bm25, ix._vectors, r.index
    drop("search: exact-name map", lambda: setattr(ix, "_by_name", None))
    drop("search: names (id -> lowercased name)", lambda: setattr(ix, "_names", {}))
    drop("search: keyword-text hashes", lambda: setattr(ix, "_kw_hash", {}))
    drop("search: pending set", lambda: setattr(ix, "_pending", set()))
    drop("keyword: base document numbers", lambda: setattr(bm, "_base_num", None))
    drop("keyword: subset masks", lambda: (bm._base_masks.clear(), bm._subset_stats.clear()))
    drop("vectors: row map", lambda: setattr(vec, "_row", {}))
    drop("vectors: ids, hashes, keys", lambda: (setattr(vec, "_ids", []),
                                                setattr(vec, "_hashes", []),
                                                setattr(vec, "_keys", [])))
    drop("vectors: HNSW", lambda: setattr(vec, "_hnsw", None))
    drop("vectors: matrix", lambda: setattr(vec, "_vecs", None))
    drop("graph: L1 roles", lambda: g.roles_cache.clear())
    drop("graph: rank_edges", lambda: setattr(g, "rank_edges", None))
    drop("graph: community rankings", lambda: g.rankings.clear())
    drop("graph: community texts", lambda: g.community_texts.clear())
    drop("graph: per-file node lists, layout", lambda: (g._file_nodes.clear(),
                                                        setattr(g, "_layout", None)))
    drop("graph: centrality, file graph", lambda: (setattr(g, "centrality", None),
                                                   setattr(g, "file_adjacency", None)))
    drop("resolver: call_users", lambda: setattr(r, "call_users", {}))
    drop("resolver: base_users", lambda: setattr(r, "base_users", ({}, {})))
    drop("resolver: call_deps", lambda: setattr(r, "call_deps", {}))
    drop("resolver: base_deps", lambda: setattr(r, "base_deps", ({}, {})))
    drop("resolver: shared keys", lambda: setattr(r, "_keys", {}))
    drop("resolver: index.by_name", lambda: setattr(idx, "by_name", {}))
    drop("resolver: index.quals", lambda: setattr(idx, "quals", {}))
    drop("resolver: merged include tables", lambda: (
        setattr(idx, "_vis_ids", {}), setattr(idx, "_vis_bindings", {}),
        setattr(idx, "_vis_tables", {}), setattr(idx, "_vis_readers", {})))
    drop("resolver: bindings, wildcards, implicit, families", lambda: (
        setattr(idx, "bindings", {}), setattr(idx, "wildcards", {}),
        setattr(idx, "implicit", {}), setattr(idx, "families", {})))
    drop("resolver: import rules", lambda: setattr(r, "rules", None))
    drop("resolver: per-file edges, out, class bases, vids", lambda: (
        setattr(r, "import_edges", {}), setattr(r, "base_edges", {}),
        setattr(r, "call_edges", {}), setattr(r, "out", {}),
        setattr(r, "class_bases", ({}, {})), setattr(r, "vids", {})))
    drop("resolver: the rest", lambda: setattr(g, "resolver", None))
    drop("graph: out_by_file", lambda: setattr(g, "out_by_file", None))
    drop("graph: references", lambda: [setattr(ex, "references", [])
                                       for ex in g.extracts.values()])
    drop("graph: edges list", lambda: setattr(g, "edges", []))
    drop("graph: resolved edges", lambda: setattr(g, "resolved", []))
    drop("graph: intra-file edges", lambda: [setattr(ex, "edges", [])
                                             for ex in g.extracts.values()])
    drop("graph: nodes dict", lambda: setattr(g, "nodes", {}))
    drop("graph: extracts (nodes)", lambda: setattr(g, "extracts", {}))
    drop("graph: files", lambda: setattr(g, "files", {}))
    end = heap_mb()
    print("left", end)
    print(json.dumps({"after_questions": start, "steps": steps, "left": end,
                      "load": load_average()}))


if __name__ == "__main__":
    main()
