"""L1: each community named by its role — what the rest of the code uses it for.

A community's key symbols are its entry points: the public, non-test symbols that code
in *other* communities calls, imports or inherits from, most central first by PageRank
over the symbol graph. Ranked by plain degree, the internals a package calls most (a
tokenizer's merge loop) named the package; the symbols other packages reach for name
its role. The description is the docstring of the community's most central file, else
of its first key symbol. PageRank runs once per graph generation (numpy, ~20 passes);
a save that changes no outline and no edge keeps the generation's roles (Graph.roles_cache).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from neuralmind.config import (
    L1_KEY_SYMBOLS,
    L1_MAX_COMMUNITIES,
    PAGERANK_DAMPING,
    PAGERANK_ITERATIONS,
)
from neuralmind.context.layers import Piece, fill, first_line
from neuralmind.index.file_rank import is_doc_path
from neuralmind.index.pairing import is_test_path

_SYMBOL_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "function",
                           "method", "module"})

_lock = threading.Lock()


def pagerank(ids: Sequence[str], edges: Sequence[tuple[int, int]]) -> np.ndarray:
    """PageRank of `ids` over directed edges (i -> j: i refers to j); dangling mass spreads
    evenly."""
    n = len(ids)
    if n == 0:
        return np.zeros(0)
    rank = np.full(n, 1.0 / n)
    if not edges:
        return rank
    src = np.fromiter((a for a, _ in edges), dtype=np.int64, count=len(edges))
    dst = np.fromiter((b for _, b in edges), dtype=np.int64, count=len(edges))
    out_deg = np.bincount(src, minlength=n).astype(np.float64)
    dangling = out_deg == 0
    weight = 1.0 / out_deg[src]
    for _ in range(PAGERANK_ITERATIONS):
        spread = np.bincount(dst, weights=rank[src] * weight, minlength=n)
        rank = (1 - PAGERANK_DAMPING) / n + PAGERANK_DAMPING * (spread + rank[dangling].sum() / n)
    return rank


def _public(node: Any, test_file: dict[str, bool]) -> bool:
    """Not a test, not private, not an inline test module (Rust's `mod tests`)."""
    q = node.qualname or node.name
    return not (_is_test(node.file, test_file) or (node.name.startswith("_")
                and not node.name.endswith("__")) or node.name.startswith("test_")
                or q.startswith("tests.") or ".tests." in q)


def _is_test(path: str, test_file: dict[str, bool]) -> bool:
    """is_test_path once per file of a pass (two regex searches; per edge, they were
    a third of L1's time at 20k files)."""
    hit = test_file.get(path)
    if hit is None:
        hit = test_file[path] = is_test_path(path)
    return hit


def community_roles(graph: Any) -> dict[int, tuple[str, list[str], str]]:
    """community id -> (central file, key symbol names, description), for this graph
    generation; test-only communities have no central file. Kept in the graph's
    `roles_cache`, which a save hands on only when nothing read here changed (exact)."""
    holder = graph.roles_cache
    with _lock:
        if "roles" in holder:
            return holder["roles"]
    nodes = graph.nodes
    # a fresh build's order, also after a save added ids (Graph.patched)
    ids = graph.node_ids() if hasattr(graph, "node_ids") else list(nodes)
    index = {i: k for k, i in enumerate(ids)}
    edges: list[tuple[int, int]] = []
    entry: set[str] = set()
    test_file: dict[str, bool] = {}
    for e in graph.edges:
        if e.kind == "contains" or e.source not in index or e.target not in index:
            continue
        edges.append((index[e.source], index[e.target]))
        a, b = nodes[e.source], nodes[e.target]
        if a.community != b.community and not _is_test(a.file, test_file):
            entry.add(e.target)
    rank = dict(zip(ids, pagerank(ids, edges), strict=True))
    roles: dict[int, tuple[str, list[str], str]] = {}
    for c in graph.communities:
        members = [n for f in c.files for n in graph.nodes_by_file(f)]
        public = [n for n in members if n.kind in _SYMBOL_KINDS and _public(n, test_file)]
        key_nodes = sorted(public, key=lambda n: (n.id not in entry, -rank[n.id], n.id))
        key_nodes = key_nodes[:L1_KEY_SYMBOLS]
        files = sorted((f for f in c.files if not _is_test(f, test_file)
                        and not is_doc_path(f)),
                       key=lambda f: (-sum(rank[n.id] for n in graph.nodes_by_file(f)), f))
        desc = ""
        for f in files[:1]:
            head = next(iter(graph.nodes_by_file(f)), None)
            if head is not None and head.docstring:
                desc = head.docstring
        if not desc:
            desc = next((n.docstring for n in key_nodes if n.docstring), "")
        roles[c.id] = (files[0] if files else "", [n.qualname or n.name for n in key_nodes],
                       _first_sentence(desc))
    with _lock:
        holder["roles"] = roles
    return roles


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return m.group(1) if m else text


def render_summary(graph: Any, budget: int) -> tuple[str, list[Piece]]:
    """L1: the largest communities with code, one line each: the central file (and the
    community's folder), what it is for, its key symbols."""
    roles = community_roles(graph)
    pieces = []
    for c in graph.communities:
        central, names, desc = roles.get(c.id, ("", [], ""))
        if not central:
            continue                          # tests only: no role in the architecture
        where = c.name.split(" (", 1)[0]      # the community's dominant module
        label = central if where in (central, "./") else f"{where} ({central})"
        text = f"- **{label}**" + (f": {first_line(desc, 110)}" if desc else "")
        if names:
            text += f" Key: {', '.join(names)}."
        pieces.append(Piece(text, why=f"community {c.id}, {c.size} nodes"))
        if len(pieces) == L1_MAX_COMMUNITIES:
            break
    return fill("## Architecture", pieces, budget)
