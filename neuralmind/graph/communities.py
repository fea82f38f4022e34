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

import bisect
import heapq
import logging
import os
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from neuralmind.config import RANKED_SYMBOLS_KEPT
from neuralmind.graph.model import Edge, Node, file_of
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
# Edges taken out of and put into a graph since the previous one: (removed, added).
EdgeDelta = tuple[list[Edge], list[Edge]]


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

def _file_link(e: Edge, nodes: dict[str, Node], index: dict[str, int]
               ) -> tuple[int, int, float] | None:
    """(file index, file index, weight) an edge adds to the file graph, if any.

    Weights are multiples of 0.5 (small integers times 1, 2 or 0.5), so sums of them are
    exact in any order: a graph patched edge by edge equals one summed from scratch."""
    w = KIND_WEIGHTS.get(e.kind)
    if w is None:
        return None
    s, t = nodes.get(e.source), nodes.get(e.target)
    if s is None or t is None or s.file == t.file:
        return None
    i, j = index.get(s.file), index.get(t.file)
    if i is None or j is None:
        return None
    return i, j, w * max(1, e.count) if e.resolved else w * HEURISTIC_FACTOR * max(1, e.count)


def file_adjacency(files: list[str], nodes: dict[str, Node], edges: Iterable[Edge]) -> Adjacency:
    """Undirected weighted file graph from cross-file imports/calls/inherits edges."""
    index = {f: i for i, f in enumerate(files)}
    adj: Adjacency = [{} for _ in files]
    for e in edges:
        link = _file_link(e, nodes, index)
        if link is not None:
            i, j, w = link
            adj[i][j] = adj[i].get(j, 0.0) + w
            adj[j][i] = adj[j].get(i, 0.0) + w
    return adj


def _patched_adjacency(files: list[str], previous: Graph, graph: Graph, delta: EdgeDelta
                       ) -> tuple[Adjacency, set[int]]:
    """previous's file graph with `delta` applied (same files), and the rows it changed;
    the other rows are previous's own dicts."""
    assert previous.file_adjacency is not None
    index = {f: i for i, f in enumerate(files)}
    adj = list(previous.file_adjacency)
    rows: set[int] = set()
    before = sorted(previous.files)
    if before != files:     # files came or went: renumber (links to gone files go too)
        moved = [index.get(f) for f in before]
        adj = [{} for _ in files]
        for old, row in enumerate(previous.file_adjacency):
            new = moved[old]
            if new is not None:
                adj[new] = {moved[j]: w for j, w in row.items() if moved[j] is not None}
        rows = set(range(len(files)))
    for sign, edges, nodes in ((-1.0, delta[0], previous.nodes), (1.0, delta[1], graph.nodes)):
        for e in edges:
            link = _file_link(e, nodes, index)
            if link is None:
                continue
            i, j, w = link
            for a, b in ((i, j), (j, i)):
                if a not in rows:
                    adj[a] = dict(adj[a])
                    rows.add(a)
                v = adj[a].get(b, 0.0) + sign * w
                if v == 0.0:
                    del adj[a][b]
                else:
                    adj[a][b] = v
    return adj, rows


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


def _add_centrality(score: dict[str, float], edges: Iterable[Edge], sign: float) -> None:
    for e in edges:
        w = KIND_WEIGHTS.get(e.kind)
        if w is None or e.source == e.target:
            continue
        w *= sign if e.resolved else sign * HEURISTIC_FACTOR
        score[e.target] = score.get(e.target, 0.0) + 2 * w
        score[e.source] = score.get(e.source, 0.0) + w


def _centrality(graph: Graph, previous: Graph | None, delta: EdgeDelta | None
                ) -> dict[str, float]:
    """Weighted degree over cross-symbol relations (callers weigh double); previous's
    scores patched by `delta` when given (exact: weights are multiples of 0.5)."""
    if previous is not None and previous.centrality is not None:
        if previous.resolved is graph.resolved:
            return previous.centrality
        if delta is not None:
            score = dict(previous.centrality)
            _add_centrality(score, delta[0], -1.0)
            _add_centrality(score, delta[1], 1.0)
            return score
    score = {}
    _add_centrality(score, graph.edges, 1.0)
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


def _partition(graph: Graph, files: list[str], previous: Graph | None, seed: int,
               delta: EdgeDelta | None) -> list[int]:
    """Louvain over the file graph, or prev's grouping when the file graph is the same
    (same files and the very same resolved edges, or an equal adjacency): Louvain is
    deterministic, so it would return that grouping again."""
    reuse = _previous_partition(files, previous)
    if reuse is not None and previous is not None and previous.resolved is graph.resolved:
        graph.file_adjacency = previous.file_adjacency
        return reuse
    if (previous is not None and delta is not None and previous.file_adjacency is not None
            and len(previous.file_adjacency) == len(previous.files)):
        adj, rows = _patched_adjacency(files, previous, graph, delta)
        graph.file_adjacency = adj
        if reuse is not None and all(adj[i] == previous.file_adjacency[i] for i in rows):
            return reuse
    else:
        adj = file_adjacency(files, graph.nodes, graph.edges)
        graph.file_adjacency = adj
        if reuse is not None and previous is not None and previous.file_adjacency == adj:
            return reuse
    return _attach_isolated(files, adj, louvain(adj, seed=seed))


def _dirty_files(graph: Graph, previous: Graph | None, changed_files: Iterable[str] | None,
                 delta: EdgeDelta | None) -> set[str] | None:
    """Files whose symbols, docstrings or scores may differ from previous's (None: any).
    A community none of whose files is dirty keeps its name, symbols and description."""
    if previous is None or changed_files is None or not previous.communities:
        return None
    dirty = set(changed_files)
    if previous.resolved is graph.resolved:
        return dirty
    if delta is None:
        return None
    for edges, nodes in ((delta[0], previous.nodes), (delta[1], graph.nodes)):
        for e in edges:
            if KIND_WEIGHTS.get(e.kind) is None:
                continue
            for end in (e.source, e.target):
                n = nodes.get(end)
                dirty.add(n.file if n is not None else file_of(end))
    return dirty


@dataclass(slots=True)
class Ranking:
    """A community's ranking as a save patches it (in memory only, `Graph.rankings`).

    `best`: its best symbols with their rank keys, in order, as many as
    RANKED_SYMBOLS_KEPT; `bound`: the last one's key when the community has more symbols
    (None: `best` holds them all). `documented`: the files whose first node is a
    documented file or module, with their file rank key (the description is the best
    one's). A save re-ranks only its files' symbols against `best`: the others' keys
    cannot have changed (their scores move only at the ends of changed edges)."""
    files: list[str]
    label: str
    best: list[tuple[Any, Node]]
    bound: Any
    documented: dict[str, tuple[bool, float, str]]


def _symbol_key(n: Node, test: bool, score: dict[str, float]) -> tuple[bool, bool, float, str]:
    # Tests call everything, so they look central; they describe a group poorly.
    # Private helpers (`_run`) are central too, but a reader meets the public names.
    return (test, _is_private(n.name), -score.get(n.id, 0.0), n.id)


def _file_facts(graph: Graph, f: str, test: bool, score: dict[str, float]
                ) -> tuple[list[tuple[Any, Node]], tuple[bool, float, str] | None]:
    """`f`'s symbols with their rank keys, and its file rank key when its first node is a
    documented file or module (else None)."""
    nodes = graph.nodes_by_file(f)
    keyed = [(_symbol_key(n, test, score), n) for n in nodes if n.kind in SYMBOL_KINDS]
    first = nodes[0] if nodes else None
    doc = (first is not None and first.kind in ("file", "module") and bool(first.docstring))
    return keyed, ((test, -sum(score.get(n.id, 0.0) for n in nodes), f) if doc else None)


def _full_ranking(graph: Graph, members: list[str], score: dict[str, float]) -> Ranking:
    """Every member's symbols ranked (the test check once per file, not per symbol)."""
    test = {f: _is_test(f) for f in members}
    keyed: list[tuple[Any, Node]] = []
    documented: dict[str, tuple[bool, float, str]] = {}
    for f in members:
        rows, doc = _file_facts(graph, f, test[f], score)
        keyed.extend(rows)
        if doc is not None:
            documented[f] = doc
    # nsmallest == sorted(...)[:n], without one long C-level sort of a big community
    best = heapq.nsmallest(max(RANKED_SYMBOLS_KEPT, TOP_SYMBOLS), keyed, key=lambda kn: kn[0])
    bound = best[-1][0] if len(keyed) > len(best) else None
    label = _dominant_module([f for f in members if not test[f]] or members)
    return Ranking(members, label, best, bound, documented)


def _reranked(graph: Graph, rank: Ranking, members: list[str], changed: list[str],
              score: dict[str, float]) -> Ranking | None:
    """`rank` (same files) with the `changed` files' symbols and documentation ranked
    again; None when too few of the kept best symbols are left to be sure of the top."""
    gone = set(changed)
    kept = [kn for kn in rank.best if kn[1].file not in gone]
    documented = {f: k for f, k in rank.documented.items() if f not in gone}
    fresh: list[tuple[Any, Node]] = []
    for f in changed:
        rows, doc = _file_facts(graph, f, _is_test(f), score)
        fresh.extend(rows)
        if doc is not None:
            documented[f] = doc
    merged = heapq.merge(kept, sorted(fresh, key=lambda kn: kn[0]), key=lambda kn: kn[0])
    bound = rank.bound
    # past `bound`, symbols of other files not kept could come first: stop there
    best = [kn for kn in merged if bound is None or kn[0] <= bound]
    more = bound is not None or len(best) > max(RANKED_SYMBOLS_KEPT, TOP_SYMBOLS)
    best = best[:max(RANKED_SYMBOLS_KEPT, TOP_SYMBOLS)]
    if more and len(best) < TOP_SYMBOLS:
        return None
    return Ranking(members, rank.label, best, best[-1][0] if more and best else None,
                   documented)


def _ranked_community(graph: Graph, cid: int, rank: Ranking, size: int) -> Community:
    top = [n for _, n in rank.best[:TOP_SYMBOLS]]
    names = ", ".join(n.name for n in top[:NAME_SYMBOLS])
    described = min(rank.documented, key=rank.documented.__getitem__) \
        if rank.documented else None
    return Community(
        id=cid,
        name=f"{rank.label} ({names})" if names else rank.label,
        files=rank.files,
        top_symbols=[n.id for n in top],
        description=_describe(graph, [described] if described else [], top),
        size=size,
    )


def prepare_communities(graph: Graph) -> None:
    """Compute what a save patches (file graph, scores, rankings) for a graph loaded from
    disk."""
    if graph.file_adjacency is None:
        graph.file_adjacency = file_adjacency(sorted(graph.files), graph.nodes, graph.edges)
    if graph.centrality is None:
        graph.centrality = _centrality(graph, None, None)
    for c in graph.communities:
        if c.id not in graph.rankings:
            graph.rankings[c.id] = _full_ranking(graph, c.files, graph.centrality)


def detect_communities(graph: Graph, seed: int = SEED, previous: Graph | None = None,
                       changed_files: Iterable[str] | None = None,
                       delta: EdgeDelta | None = None) -> list[Community]:
    """Partition the graph's files, set every Node.community and return the communities.

    `previous`: the graph this one was built from; its partition is reused when the file
    graph is provably unchanged. With `changed_files` (files whose extracts differ from
    previous's) and `delta` (the edges removed and added since previous, when not the very
    same edges), the file graph and scores are patched rather than recomputed, and a
    community whose files are all untouched keeps its name, symbols and description:
    the result is the same as without them, at a fraction of the cost.
    """
    files = sorted(graph.files)
    if not files:
        graph.communities = []
        return []
    membership = _partition(graph, files, previous, seed, delta)
    score = graph.centrality = _centrality(graph, previous, delta)
    dirty = _dirty_files(graph, previous, changed_files, delta)
    kept = {tuple(c.files): c for c in previous.communities} if previous and dirty is not None \
        else {}

    groups: dict[int, list[str]] = defaultdict(list)
    for i, f in enumerate(files):
        groups[membership[i]].append(f)
    # a dirty file's group, found by position (a save dirties a few files of 10^4-10^5)
    dirty_in: dict[int, list[str]] = defaultdict(list)
    for f in sorted(dirty or ()):
        i = bisect.bisect_left(files, f)
        if i < len(files) and files[i] == f:
            dirty_in[membership[i]].append(f)
    prev_ranks = previous.rankings if previous is not None else {}
    # (members, size, the kept community, its ranking, the files whose nodes need their
    # community id set if it did not move, the id it had)
    sized: list[tuple[list[str], int, Community | None, Ranking | None, list[str], int]] = []
    for gid, members in groups.items():
        old = kept.get(tuple(members))
        changed = dirty_in.get(gid, [])
        if old is not None and dirty is not None and not changed:
            sized.append((members, old.size, old, prev_ranks.get(old.id), changed, old.id))
            continue
        rank = prev_ranks.get(old.id) if old is not None and dirty is not None else None
        if rank is not None and rank.files is old.files:   # re-rank the changed files only
            assert previous is not None and old is not None
            rank = _reranked(graph, rank, members, changed, score)
            if rank is not None:
                size = old.size + sum(len(graph.nodes_by_file(f)) - len(
                    previous.nodes_by_file(f)) for f in changed)
                sized.append((members, size, None, rank, changed, old.id))
                continue
        sized.append((members, sum(len(graph.nodes_by_file(f)) for f in members), None, None,
                      members, -1))
    sized.sort(key=lambda ms: (-ms[1], ms[0][0]))

    communities: list[Community] = []
    rankings: dict[int, Ranking] = {}
    for cid, (members, size, old, rank, changed, was) in enumerate(sized):
        if old is not None:
            communities.append(old if old.id == cid else Community(
                cid, old.name, members, old.top_symbols, old.description, size))
            if rank is not None and rank.files is old.files:
                rankings[cid] = rank if old.id == cid else Ranking(
                    communities[-1].files, rank.label, rank.best, rank.bound, rank.documented)
            if old.id != cid:
                for f in members:
                    for n in graph.nodes_by_file(f):
                        n.community = cid
            continue
        if rank is None:
            rank = _full_ranking(graph, members, score)
        communities.append(_ranked_community(graph, cid, rank, size))
        rankings[cid] = rank
        # the other files' nodes already carry this id when it did not move
        for f in changed if was == cid else members:
            for n in graph.nodes_by_file(f):
                n.community = cid
    graph.communities = communities
    graph.rankings = rankings
    return communities
