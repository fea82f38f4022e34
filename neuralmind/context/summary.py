"""L1: each community named by its role — what the rest of the code uses it for.

A community's key symbols are its entry points: the public, non-test symbols that code
in *other* communities calls, imports or inherits from, most central first by PageRank
over the symbol graph. Ranked by plain degree, the internals a package calls most (a
tokenizer's merge loop) named the package; the symbols other packages reach for name
its role. The description is the docstring of the community's most central file, else
of its first key symbol. PageRank runs once per graph generation (numpy, ~20 passes);
a save that changes no outline and no edge keeps the generation's roles (Graph.roles_cache).
One that does (a function added) gets them again from arrays: PageRank's numbered edges,
which the save patched (graph.rank_edges), and per-file facts kept while a file's extract
is the same; numbering the Linux kernel's 2.6M edges in Python again was 7-8 s of the
first answer after such a save. `roles_by_walk` is the one-pass definition they equal.
"""

from __future__ import annotations

import heapq
import re
import threading
from typing import Any

import numpy as np

from neuralmind.config import (
    L1_KEY_SYMBOLS,
    L1_MAX_COMMUNITIES,
    PAGERANK_DAMPING,
    PAGERANK_ITERATIONS,
)
from neuralmind.context.layers import Piece, fill, first_line
from neuralmind.graph.rank_edges import rank_edges
from neuralmind.index.file_rank import is_doc_path
from neuralmind.index.pairing import is_test_path

_SYMBOL_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "function",
                           "method", "module"})

_lock = threading.Lock()


def pagerank(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """PageRank of nodes 0..n-1 over directed edges src[k] -> dst[k] (src refers to dst);
    dangling mass spreads evenly. The sums follow the edges' order: the same arrays give
    the same ranks bit for bit."""
    if n == 0:
        return np.zeros(0)
    rank = np.full(n, 1.0 / n)
    if not len(src):
        return rank
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


Roles = dict[int, tuple[str, list[str], str]]


def community_roles(graph: Any) -> Roles:
    """community id -> (central file, key symbol names, description), for this graph
    generation; test-only communities have no central file. Kept in the graph's
    `roles_cache`, which a save hands on only when nothing read here changed (exact)."""
    holder = graph.roles_cache
    with _lock:
        if "roles" in holder:
            return holder["roles"]
    roles = _roles_by_blocks(graph)
    if roles is None:
        roles = roles_by_walk(graph)
    with _lock:
        holder["roles"] = roles
    return roles


def _role(graph: Any, key_nodes: list[Any], files: list[str]) -> tuple[str, list[str], str]:
    """One community's role from its key symbols and its central file (first of `files`)."""
    desc = ""
    for f in files[:1]:
        head = next(iter(graph.nodes_by_file(f)), None)
        if head is not None and head.docstring:
            desc = head.docstring
    if not desc:
        desc = next((n.docstring for n in key_nodes if n.docstring), "")
    return (files[0] if files else "", [n.qualname or n.name for n in key_nodes],
            _first_sentence(desc))


def roles_by_walk(graph: Any) -> Roles:
    """The roles from one Python pass over every edge and node: the definition the
    block pass (`_roles_by_blocks`) must equal, and what ranks a graph whose nodes are not
    in per-file blocks. Seconds on the Linux kernel."""
    nodes = graph.nodes
    # a fresh build's order, also after a save added ids (Graph.patched)
    ids = graph.node_ids()
    index = {i: k for k, i in enumerate(ids)}
    src: list[int] = []
    dst: list[int] = []
    entry: set[str] = set()
    test_file: dict[str, bool] = {}
    for e in graph.edges:
        if e.kind == "contains" or e.source not in index or e.target not in index:
            continue
        src.append(index[e.source])
        dst.append(index[e.target])
        a, b = nodes[e.source], nodes[e.target]
        if a.community != b.community and not _is_test(a.file, test_file):
            entry.add(e.target)
    ranks = pagerank(len(ids), np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64))
    rank = dict(zip(ids, ranks, strict=True))
    roles: Roles = {}
    for c in graph.communities:
        members = [n for f in c.files for n in graph.nodes_by_file(f)]
        public = [n for n in members if n.kind in _SYMBOL_KINDS and _public(n, test_file)]
        key_nodes = sorted(public, key=lambda n: (n.id not in entry, -rank[n.id], n.id))
        files = sorted((f for f in c.files if not _is_test(f, test_file)
                        and not is_doc_path(f)),
                       key=lambda f: (-sum(rank[n.id] for n in graph.nodes_by_file(f)), f))
        roles[c.id] = _role(graph, key_nodes[:L1_KEY_SYMBOLS], files)
    return roles


def _roles_by_blocks(graph: Any) -> Roles | None:
    """`roles_by_walk`'s roles from arrays: the numbered edges a save patches
    (`graph.rank_edges`), the files' facts kept while their extracts are the same
    (`_facts`) and every node at its position in `Graph.node_ids` order, which is
    per-file blocks. The same ranks bit for bit (the same edge arrays in the same order)
    and the same choices (ties broken by id exactly as the sort there). None when the
    nodes are not in blocks or a community names a file without an extract."""
    edges = rank_edges(graph)
    offsets = edges.offsets
    if offsets is None:
        return None
    member_files = _community_files(graph, edges.memo)
    if member_files is None:
        return None
    paths = list(graph.extracts)
    counts = np.diff(offsets)
    test_file, doc_file, public, test = _facts(graph, edges.memo, offsets)
    comm_file = np.full(len(paths), -1, dtype=np.int64)
    for c, fps in zip(graph.communities, member_files, strict=True):
        comm_file[fps] = c.id
    comm = np.repeat(comm_file, counts)
    src, dst = edges.endpoints()
    rank = pagerank(edges.n, src, dst)
    entry = np.zeros(edges.n, dtype=bool)
    entry[dst[(comm[src] != comm[dst]) & ~test[src]]] = True
    file_sums = np.zeros(len(paths))
    filled = counts > 0
    if filled.any():          # each non-empty block runs to the next one's start
        file_sums[filled] = np.add.reduceat(rank, offsets[:-1][filled])

    def nodes_at(slots: np.ndarray) -> list[Any]:
        fps = np.searchsorted(offsets, slots, side="right") - 1
        return [graph.nodes_by_file(paths[f])[s - offsets[f]]
                for f, s in zip(fps.tolist(), slots.tolist(), strict=True)]

    roles: Roles = {}
    for c, fps in zip(graph.communities, member_files, strict=True):
        starts, sizes = offsets[fps], counts[fps]
        members = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
        key = _first_keys(members[public[members]], entry, rank, nodes_at)
        central = fps[~(test_file[fps] | doc_file[fps])]
        files: list[str] = []
        if len(central):
            best = file_sums[central].max()
            near = central[file_sums[central] >= best - best * _SUM_SLACK]
            files = [paths[min(near.tolist(), key=lambda f: (
                -sum(rank[offsets[f]:offsets[f + 1]]), paths[f]))]]
        roles[c.id] = _role(graph, key, files)
    return roles


# numpy's sums of a file's ranks (pairwise) and Python's (in order) differ by ~1e-16 of
# the sum per node: files within this share of the best are summed again as Python does
_SUM_SLACK = 1e-9


def _first_keys(cands: np.ndarray, entry: np.ndarray, rank: np.ndarray,
                nodes_at: Any) -> list[Any]:
    """The L1_KEY_SYMBOLS first of `cands` (positions) by (not an entry point, -rank, id),
    as `sorted` would give them, without sorting a community of 10^5 symbols: the best
    ranks by partition, and only nodes tied at the cut compared by id."""
    out: list[Any] = []
    for flag in (True, False):
        need = L1_KEY_SYMBOLS - len(out)
        group = cands[entry[cands] == flag]
        if need <= 0 or not len(group):
            continue
        r = rank[group]
        if len(group) > need:
            cut = np.partition(r, len(r) - need)[len(r) - need]     # need-th largest
            top, tied = group[r > cut], group[r == cut]
        else:
            top, tied = group, group[:0]
        chosen = sorted(zip(nodes_at(top), rank[top].tolist(), strict=True),
                        key=lambda nr: (-nr[1], nr[0].id))
        out += [n for n, _ in chosen]
        if len(chosen) < need:
            out += heapq.nsmallest(need - len(chosen), nodes_at(tied), key=lambda n: n.id)
    return out


_COMMUNITIES = "\0communities"      # memo keys that no path can be
_ARRAYS = "\0arrays"


def _community_files(graph: Any, memo: dict[str, tuple[Any, Any]]) -> list[np.ndarray] | None:
    """Each community's files as positions in `graph.extracts`, None when a file has no
    extract. Kept per community object while the positions are the same (a save keeps
    most communities, and the file positions whenever it is patched)."""
    at = graph.layout()[0]
    kept = memo.get(_COMMUNITIES)
    known = kept[1] if kept is not None and kept[0] is at else {}
    mine: dict[int, tuple[Any, list[str], np.ndarray]] = {}
    out = []
    for c in graph.communities:
        hit = known.get(id(c))
        if hit is not None and hit[0] is c and hit[1] is c.files and len(hit[2]) == len(c.files):
            fps = hit[2]
        else:
            fps = np.fromiter((at.get(f, -1) for f in c.files), dtype=np.int64,
                              count=len(c.files))
            if len(fps) and fps.min() < 0:
                return None
        mine[id(c)] = (c, c.files, fps)
        out.append(fps)
    memo[_COMMUNITIES] = (at, mine)
    return out


def _facts(graph: Any, memo: dict[str, tuple[Any, Any]], offsets: np.ndarray,
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per file (in `graph.extracts` order): a test file?, a documentation file?; per
    node (by position): a public symbol?, in a test file? Kept with the extracts they
    came from, so a later generation redoes only the files whose extract is another
    object (a save's) and splices their blocks in: per file, ~0.15 s on the kernel."""
    exs = list(graph.extracts.values())
    paths = list(graph.extracts)
    counts = np.diff(offsets)
    kept = memo.get(_ARRAYS)
    redo = None
    if kept is not None and len(kept[0]) == len(exs):
        redo = [k for k, (a, b) in enumerate(zip(kept[0], exs, strict=True)) if a is not b]
    if redo is None or len(redo) > len(exs) // 4:
        per_file = [_file_facts(graph, memo, p) for p in paths]
        test_file = np.fromiter((f[0] for f in per_file), dtype=bool, count=len(per_file))
        doc_file = np.fromiter((f[1] for f in per_file), dtype=bool, count=len(per_file))
        public = (np.concatenate([f[2] for f in per_file]) if per_file
                  else np.zeros(0, dtype=bool))
        test = np.repeat(test_file, counts)
        for k, f in enumerate(per_file):
            if f[3] is not None:                 # nodes naming another file (never seen)
                test[offsets[k]:offsets[k + 1]] = f[3]
    else:
        test_file, doc_file, public, test, before = kept[1]
        test_file, doc_file = test_file.copy(), doc_file.copy()
        pub_parts, test_parts, last = [], [], 0
        for k in redo:
            f = _file_facts(graph, memo, paths[k])
            test_file[k], doc_file[k] = f[0], f[1]
            pub_parts += [public[before[last]:before[k]], f[2]]
            test_parts += [test[before[last]:before[k]],
                           np.full(counts[k], f[0]) if f[3] is None else f[3]]
            last = k + 1
        public = np.concatenate([*pub_parts, public[before[last]:]])
        test = np.concatenate([*test_parts, test[before[last]:]])
    memo[_ARRAYS] = (exs, (test_file, doc_file, public, test, offsets))
    return test_file, doc_file, public, test


def _file_facts(graph: Any, memo: dict[str, tuple[Any, Any]], path: str) -> tuple[Any, ...]:
    """(a test file?, a documentation file?, which of its nodes are public symbols, each
    node's test flag when some node names another file), kept in `memo` while the file's
    extract is the same object (a save re-extracts only the files it saved)."""
    ex = graph.extracts[path]
    kept = memo.get(path)
    if kept is not None and kept[0] is ex:
        return kept[1]
    nodes = graph.nodes_by_file(path)
    test_file: dict[str, bool] = {}
    public = np.fromiter((n.kind in _SYMBOL_KINDS and _public(n, test_file) for n in nodes),
                         dtype=bool, count=len(nodes))
    node_test = None if all(n.file == path for n in nodes) else np.fromiter(
        (_is_test(n.file, test_file) for n in nodes), dtype=bool, count=len(nodes))
    facts = (_is_test(path, test_file), is_doc_path(path), public, node_test)
    memo[path] = (ex, facts)
    return facts


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
