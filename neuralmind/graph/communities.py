"""Communities: groups of files that belong together, named for people and prompts.

Algorithm: Louvain modularity optimisation with a fixed seed, implemented here rather
than taken from networkx: identical graphs give identical communities on every machine
(node order and tie-breaks are ours), and it is faster. Measured on Django 5.1's file
graph (2,834 files; benchmarks/graph_bench.py --communities): ours 0.07 s CPU,
modularity 0.576; networkx 3.6 `louvain_communities(seed=42)` 0.41 s, modularity 0.577
(the same 747 raw groups). networkx would also be a new dependency for one function.

Granularity: files. The graph is the undirected weighted graph of imports/calls/inherits
between files. The symbol-level graph (adding `contains` edges) took 2.8 s CPU on Django
(40x the file level; networkx 7.2 s) and split 1,376 of 2,834 files across communities,
which is hard to present and to use for "files of this community". Every symbol takes
its file's community. Files with no cross-file edge join the community that dominates
their directory, or one community per directory, so a repository of unrelated scripts
still gets a handful of named groups rather than one per file.
"""

from __future__ import annotations

import logging
import os
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable

from neuralmind.graph.model import Edge, Node
from neuralmind.graph.store import Community, Graph

log = logging.getLogger("neuralmind.graph")

SEED = 42
RESOLUTION = 1.0
KIND_WEIGHTS = {"imports": 1.0, "calls": 1.0, "inherits": 2.0, "implements": 2.0}
HEURISTIC_FACTOR = 0.5       # a name-matched edge is weaker evidence than a resolved one
TOP_SYMBOLS = 5
NAME_SYMBOLS = 3
DESCRIPTION_CHARS = 160
SYMBOL_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "function",
                          "method", "module"})

Adjacency = list[dict[int, float]]


# --- Louvain ---------------------------------------------------------------------------------

def _one_level(adj: Adjacency, loops: list[float], rng: random.Random,
               resolution: float) -> tuple[list[int], bool]:
    """Local moving phase: returns each node's community and whether anything moved."""
    n = len(adj)
    degree = [sum(adj[i].values()) + 2 * loops[i] for i in range(n)]
    m2 = sum(degree)
    comm = list(range(n))
    if m2 == 0:
        return comm, False
    tot = degree[:]
    order = list(range(n))
    rng.shuffle(order)
    improved = False
    moved = True
    while moved:
        moved = False
        for i in order:
            ci = comm[i]
            ki = degree[i]
            links: dict[int, float] = defaultdict(float)
            for j, w in adj[i].items():
                links[comm[j]] += w
            tot[ci] -= ki
            best, best_gain = ci, links.get(ci, 0.0) - resolution * tot[ci] * ki / m2
            for c in sorted(links):
                gain = links[c] - resolution * tot[c] * ki / m2
                if gain > best_gain + 1e-12:
                    best, best_gain = c, gain
            tot[best] += ki
            if best != ci:
                comm[i] = best
                moved = improved = True
    return comm, improved


def _aggregate(adj: Adjacency, loops: list[float], comm: list[int]) -> tuple[Adjacency, list[float], list[int]]:
    """Collapse communities into nodes; returns new graph and old-node -> new-node map."""
    relabel: dict[int, int] = {}
    for c in comm:
        if c not in relabel:
            relabel[c] = len(relabel)
    k = len(relabel)
    new_adj: Adjacency = [defaultdict(float) for _ in range(k)]  # type: ignore[misc]
    new_loops = [0.0] * k
    for i, nbrs in enumerate(adj):
        ci = relabel[comm[i]]
        new_loops[ci] += loops[i]
        for j, w in nbrs.items():
            cj = relabel[comm[j]]
            if ci == cj:
                new_loops[ci] += w / 2     # each internal edge is seen from both ends
            else:
                new_adj[ci][cj] += w
    return [dict(a) for a in new_adj], new_loops, [relabel[c] for c in comm]


def louvain(adj: Adjacency, seed: int = SEED, resolution: float = RESOLUTION) -> list[int]:
    """Community index per node of an undirected weighted graph (adj[i][j] == adj[j][i])."""
    rng = random.Random(seed)
    membership = list(range(len(adj)))
    loops = [0.0] * len(adj)
    while True:
        comm, improved = _one_level(adj, loops, rng, resolution)
        if not improved:
            break
        adj, loops, mapping = _aggregate(adj, loops, comm)
        membership = [mapping[c] for c in membership]
    return membership


def modularity(adj: Adjacency, membership: list[int], resolution: float = RESOLUTION) -> float:
    """Newman modularity of a partition (for measurements and tests)."""
    degree = [sum(a.values()) for a in adj]
    m2 = sum(degree)
    if m2 == 0:
        return 0.0
    inside: dict[int, float] = defaultdict(float)
    tot: dict[int, float] = defaultdict(float)
    for i, nbrs in enumerate(adj):
        tot[membership[i]] += degree[i]
        for j, w in nbrs.items():
            if membership[i] == membership[j]:
                inside[membership[i]] += w
    return sum(inside[c] / m2 - resolution * (tot[c] / m2) ** 2 for c in tot)


# --- the file graph --------------------------------------------------------------------------

def file_adjacency(files: list[str], nodes: dict[str, Node], edges: Iterable[Edge]) -> Adjacency:
    """Undirected weighted file graph from cross-file imports/calls/inherits edges."""
    index = {f: i for i, f in enumerate(files)}
    adj: Adjacency = [{} for _ in files]
    for e in edges:
        w = KIND_WEIGHTS.get(e.kind)
        if w is None:
            continue
        s, t = nodes.get(e.source), nodes.get(e.target)
        if s is None or t is None or s.file == t.file:
            continue
        i, j = index.get(s.file), index.get(t.file)
        if i is None or j is None:
            continue
        w *= max(1, e.count) if e.resolved else HEURISTIC_FACTOR * max(1, e.count)
        adj[i][j] = adj[i].get(j, 0.0) + w
        adj[j][i] = adj[j].get(i, 0.0) + w
    return adj


def _attach_isolated(files: list[str], adj: Adjacency, membership: list[int]) -> list[int]:
    """Files without cross-file edges join their directory's dominant community."""
    by_dir: dict[str, Counter[int]] = defaultdict(Counter)
    for i, f in enumerate(files):
        if adj[i]:
            by_dir[os.path.dirname(f)][membership[i]] += 1
    next_id = max(membership, default=-1) + 1
    dir_comm: dict[str, int] = {}
    out = membership[:]
    for i, f in enumerate(files):
        if adj[i]:
            continue
        d = os.path.dirname(f)
        counts = by_dir.get(d)
        if counts:
            out[i] = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        else:
            if d not in dir_comm:
                dir_comm[d] = next_id
                next_id += 1
            out[i] = dir_comm[d]
    return out


# --- naming ----------------------------------------------------------------------------------

_UNDERLINE = re.compile(r"^\s*([=~\-^*#+_`'\"])\1{2,}\s*$")
_TEST_PART = re.compile(r"(^|/)(tests?|testing|spec|__tests__)(/|$)|(^|/)test_[^/]*$|_test\.\w+$")


def _first_sentence(text: str) -> str:
    """First sentence of a docstring, without a reST title (`mod.name` over `~~~~`)."""
    lines = text.splitlines()
    kept: list[str] = []
    for line in lines:
        if _UNDERLINE.match(line):
            if kept:
                kept.pop()          # the title line above the underline
            continue
        kept.append(line)
    text = " ".join(" ".join(kept).split())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    s = m.group(1) if m else text
    return s if len(s) <= DESCRIPTION_CHARS else s[:DESCRIPTION_CHARS - 1].rstrip() + "…"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_test(path: str) -> bool:
    return bool(_TEST_PART.search(path))


def _dominant_module(files: list[str]) -> str:
    """The directory holding most of the files, or the file itself for one-file groups."""
    if len(files) == 1:
        return files[0]
    dirs = Counter(os.path.dirname(f) or "." for f in files)
    best = min(dirs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    if dirs[best] == len(files):
        return best + "/"
    common = os.path.commonpath(files) if all("/" in f for f in files) else ""
    return (common + "/") if common and dirs[best] * 2 < len(files) else best + "/"


def _centrality(graph: Graph) -> dict[str, float]:
    """Weighted degree over cross-symbol relations (callers weigh double)."""
    score: dict[str, float] = defaultdict(float)
    for e in graph.edges:
        w = KIND_WEIGHTS.get(e.kind)
        if w is None or e.source == e.target:
            continue
        w *= 1.0 if e.resolved else HEURISTIC_FACTOR
        score[e.target] += 2 * w
        score[e.source] += w
    return score


def _describe(graph: Graph, files: list[str], top: list[Node]) -> str:
    """One line from docstrings: the central file's module docstring, else its symbols'."""
    for f in files:
        for n in graph.nodes_by_file(f):
            if n.kind in ("file", "module") and n.docstring:
                return _first_sentence(n.docstring)
            break
    for n in top:
        if n.docstring:
            return _first_sentence(n.docstring)
    return ""


def _previous_partition(files: list[str], previous: Graph | None) -> list[int] | None:
    if previous is None or sorted(previous.files) != files or not previous.communities:
        return None
    group = {f: c.id for c in previous.communities for f in c.files}
    if len(group) != len(files):
        return None
    return [group[f] for f in files]


def _partition(graph: Graph, files: list[str], previous: Graph | None, seed: int) -> list[int]:
    """Louvain over the file graph, or prev's grouping when the file graph is the same
    (same files and the very same resolved edges, or an equal adjacency): Louvain is
    deterministic, so it would return that grouping again."""
    reuse = _previous_partition(files, previous)
    if reuse is not None and previous is not None and previous.resolved is graph.resolved:
        graph.file_adjacency = previous.file_adjacency
        return reuse
    adj = file_adjacency(files, graph.nodes, graph.edges)
    graph.file_adjacency = adj
    if reuse is not None and previous is not None and previous.file_adjacency == adj:
        return reuse
    return _attach_isolated(files, adj, louvain(adj, seed=seed))


def detect_communities(graph: Graph, seed: int = SEED,
                       previous: Graph | None = None) -> list[Community]:
    """Partition the graph's files, set every Node.community and return the communities.

    `previous`: the graph this one was built from; its partition is reused when the file
    graph is provably unchanged (names and descriptions are always recomputed).
    """
    files = sorted(graph.files)
    if not files:
        graph.communities = []
        return []
    membership = _partition(graph, files, previous, seed)
    score = _centrality(graph)

    groups: dict[int, list[str]] = defaultdict(list)
    for i, f in enumerate(files):
        groups[membership[i]].append(f)
    sized = []
    for members in groups.values():
        size = sum(len(graph.nodes_by_file(f)) for f in members)
        sized.append((members, size))
    sized.sort(key=lambda ms: (-ms[1], ms[0][0]))

    communities: list[Community] = []
    for cid, (members, size) in enumerate(sized):
        symbols = [n for f in members for n in graph.nodes_by_file(f) if n.kind in SYMBOL_KINDS]
        # Tests call everything, so they look central; they describe a group poorly.
        # Private helpers (`_run`) are central too, but a reader meets the public names.
        symbols.sort(key=lambda n: (_is_test(n.file), _is_private(n.name),
                                    -score.get(n.id, 0.0), n.id))
        top = symbols[:TOP_SYMBOLS]
        file_rank = sorted(members, key=lambda f: (_is_test(f), -sum(score.get(n.id, 0.0)
                                                        for n in graph.nodes_by_file(f)), f))
        label = _dominant_module([f for f in members if not _is_test(f)] or members)
        names = ", ".join(n.name for n in top[:NAME_SYMBOLS])
        communities.append(Community(
            id=cid,
            name=f"{label} ({names})" if names else label,
            files=members,
            top_symbols=[n.id for n in top],
            description=_describe(graph, file_rank, top),
            size=size,
        ))
        for f in members:
            for n in graph.nodes_by_file(f):
                n.community = cid
    graph.communities = communities
    return communities
