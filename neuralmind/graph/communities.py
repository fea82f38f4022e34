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
import logging
import os
import random
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from neuralmind.graph import community_rank
from neuralmind.graph.model import Edge, Node, file_of
from neuralmind.graph.store import Community, Graph

log = logging.getLogger("neuralmind.graph")

SEED = 42
RESOLUTION = 1.0
KIND_WEIGHTS = {"imports": 1.0, "calls": 1.0, "inherits": 2.0, "implements": 2.0}
HEURISTIC_FACTOR = 0.5       # a name-matched edge is weaker evidence than a resolved one

Adjacency = list[dict[int, float]]
# Edges taken out of and put into a graph since the previous one: (removed, added).
EdgeDelta = tuple[list[Edge], list[Edge]]


@dataclass(slots=True)
class FilePartition:
    """A graph's files in sorted order with each one's community id, kept per generation
    for the next save. A save of existing files keeps the same files and usually the same
    grouping: sorting the Linux kernel's 55k paths, grouping them by community and
    indexing them again took ~70 ms of every save. Shared by generations (never changed
    in place); valid only for the `communities` list it was made with."""
    communities: list[Community]
    files: list[str]                     # sorted paths
    membership: list[int]                # community id per file, aligned with `files`
    index: dict[str, int] | None = None  # path -> position in `files`, made on first use

    def positions(self) -> dict[str, int]:
        if self.index is None:
            self.index = {f: i for i, f in enumerate(self.files)}
        return self.index


def kept_partition(owner: Graph | None, files: dict[str, Any]) -> FilePartition | None:
    """`owner`'s kept partition when it describes owner's communities and exactly the
    paths of `files` (a dict comparison, ~1 ms on the kernel, instead of a sort)."""
    part = owner.partition if owner is not None else None
    if (not isinstance(part, FilePartition) or part.communities is not owner.communities
            or len(part.files) != len(files) or files.keys() != part.positions().keys()):
        return None
    return part


def _new_partition(communities: list[Community], files: list[str], membership: list[int],
                   ids: dict[int, int], part: FilePartition | None) -> FilePartition:
    """The partition of `communities`: `membership` (group per file) renamed by `ids`
    (group -> community id); previous's lists and index again when nothing moved."""
    if part is not None and membership is part.membership and all(
            g == c for g, c in ids.items()):
        membership = part.membership
    else:
        membership = [ids[g] for g in membership]
    index = part.index if part is not None and part.files is files else None
    return FilePartition(communities, files, membership, index)


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
    floats: dict[float, float] = {}
    for row in adj:
        _share_floats(row, floats)
    return adj


def _share_floats(table: dict[Any, float], floats: dict[float, float]) -> None:
    """Make equal values of `table` one float object (`floats`: the ones seen so far). The
    weights are sums of a few kinds' weights times counts, so a graph holds few distinct
    values; a float each was 24 bytes per entry: the Linux kernel's file graph and scores
    (835k nodes) held ~10^6 of them for a server's life."""
    for k, v in table.items():
        if v:                   # a zero keeps its sign (0.0 == -0.0 would share one)
            table[k] = floats.setdefault(v, v)


def _patched_adjacency(files: list[str], previous: Graph, graph: Graph, delta: EdgeDelta,
                       part: FilePartition | None) -> tuple[Adjacency, set[int]]:
    """previous's file graph with `delta` applied (same files), and the rows it changed;
    the other rows are previous's own dicts. `part`: previous's partition, if valid."""
    assert previous.file_adjacency is not None
    same = part is not None and part.files is files
    index = part.positions() if same and part is not None else {
        f: i for i, f in enumerate(files)}
    adj = list(previous.file_adjacency)
    rows: set[int] = set()
    before = files if same else sorted(previous.files)
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
            score = previous.centrality.copy()
            _add_centrality(score, delta[0], -1.0)
            _add_centrality(score, delta[1], 1.0)
            return score
    score = {}
    _add_centrality(score, graph.edges, 1.0)
    _share_floats(score, {})
    return score


def _previous_partition(files: list[str], previous: Graph | None,
                        part: FilePartition | None) -> list[int] | None:
    if part is not None and part.files is files and previous is not None \
            and previous.communities:
        return part.membership
    if previous is None or sorted(previous.files) != files or not previous.communities:
        return None
    group = {f: c.id for c in previous.communities for f in c.files}
    if len(group) != len(files):
        return None
    return [group[f] for f in files]


def _partition(graph: Graph, files: list[str], previous: Graph | None, seed: int,
               delta: EdgeDelta | None, part: FilePartition | None) -> list[int]:
    """Louvain over the file graph, or prev's grouping when the file graph is the same
    (same files and the very same resolved edges, or an equal adjacency): Louvain is
    deterministic, so it would return that grouping again (`part.membership` itself when
    `part` is previous's partition of the same files)."""
    reuse = _previous_partition(files, previous, part)
    if reuse is not None and previous is not None and previous.resolved is graph.resolved:
        graph.file_adjacency = previous.file_adjacency
        return reuse
    if (previous is not None and delta is not None and previous.file_adjacency is not None
            and len(previous.file_adjacency) == len(previous.files)):
        adj, rows = _patched_adjacency(files, previous, graph, delta, part)
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



def carry_communities(graph: Graph, prev: Graph, reextracted: list[str]) -> None:
    """Give `graph` prev's communities and what the next save patches of them, for a
    generation with prev's nodes, docstrings and edges (a body-only edit, the usual
    save): the communities, names and descriptions cannot differ."""
    graph.communities = prev.communities
    graph.file_adjacency = prev.file_adjacency
    graph.centrality = prev.centrality
    graph.rankings = prev.rankings               # same keys: same names and scores
    graph.partition = prev.partition             # checked against the files when used
    for path in reextracted:                     # the re-extracted nodes: their file's id
        old = prev.extracts[path].nodes
        cid = old[0].community if old else -1
        for n in graph.extracts[path].nodes:
            n.community = cid


def prepare_communities(graph: Graph) -> None:
    """Compute what a save patches (file graph, scores, rankings) for a graph loaded from
    disk."""
    if graph.file_adjacency is None:
        graph.file_adjacency = file_adjacency(sorted(graph.files), graph.nodes, graph.edges)
    if graph.centrality is None:
        graph.centrality = _centrality(graph, None, None)
    if kept_partition(graph, graph.files) is None and graph.communities:
        files = sorted(graph.files)
        group = {f: c.id for c in graph.communities for f in c.files}
        if len(group) == len(files) and all(f in group for f in files):
            graph.partition = FilePartition(graph.communities, files,
                                            [group[f] for f in files])
    for c in graph.communities:
        if c.id not in graph.rankings:
            graph.rankings[c.id] = community_rank.full_ranking(graph, c.files, graph.centrality)


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
    part = kept_partition(previous, graph.files)
    files = part.files if part is not None else sorted(graph.files)
    if not files:
        graph.communities = []
        graph.partition = None
        return []
    membership = _partition(graph, files, previous, seed, delta, part)
    score = graph.centrality = _centrality(graph, previous, delta)
    dirty = _dirty_files(graph, previous, changed_files, delta)
    groups: dict[int, list[str]]
    kept: dict[int, Community] = {}       # group -> previous's community of the same files
    if part is not None and membership is part.membership:
        # previous's grouping itself: its communities are the groups, by id
        assert previous is not None
        groups = {c.id: c.files for c in previous.communities}
        if dirty is not None:
            kept = {c.id: c for c in previous.communities}
    else:
        groups = defaultdict(list)
        for i, f in enumerate(files):
            groups[membership[i]].append(f)
        if previous and dirty is not None:
            by_files = {tuple(c.files): c for c in previous.communities}
            kept = {g: c for g, m in groups.items() if (c := by_files.get(tuple(m)))}
    # a dirty file's group, found by position (a save dirties a few files of 10^4-10^5)
    dirty_in: dict[int, list[str]] = defaultdict(list)
    for f in sorted(dirty or ()):
        i = bisect.bisect_left(files, f)
        if i < len(files) and files[i] == f:
            dirty_in[membership[i]].append(f)
    prev_ranks = previous.rankings if previous is not None else {}
    # (members, size, the kept community, its ranking, the files whose nodes need their
    # community id set if it did not move, the id it had, the group)
    sized: list[tuple[list[str], int, Community | None, community_rank.Ranking | None,
                      list[str], int, int]] = []
    for gid, members in groups.items():
        old = kept.get(gid)
        changed = dirty_in.get(gid, [])
        if old is not None and dirty is not None and not changed:
            sized.append((members, old.size, old, prev_ranks.get(old.id), changed, old.id,
                          gid))
            continue
        rank = prev_ranks.get(old.id) if old is not None and dirty is not None else None
        if rank is not None and rank.files is old.files:   # re-rank the changed files only
            assert previous is not None and old is not None
            rank = community_rank.reranked(graph, rank, members, changed, score)
            if rank is not None:
                size = old.size + sum(len(graph.nodes_by_file(f)) - len(
                    previous.nodes_by_file(f)) for f in changed)
                sized.append((members, size, None, rank, changed, old.id, gid))
                continue
        sized.append((members, sum(len(graph.nodes_by_file(f)) for f in members), None, None,
                      members, -1, gid))
    sized.sort(key=lambda ms: (-ms[1], ms[0][0]))

    communities: list[Community] = []
    rankings: dict[int, community_rank.Ranking] = {}
    ids: dict[int, int] = {}
    for cid, (members, size, old, rank, changed, was, gid) in enumerate(sized):
        ids[gid] = cid
        if old is not None:
            communities.append(old if old.id == cid else Community(
                cid, old.name, members, old.top_symbols, old.description, size))
            if rank is not None and rank.files is old.files:
                rankings[cid] = rank if old.id == cid else community_rank.Ranking(
                    communities[-1].files, rank.label, rank.best, rank.bound, rank.documented)
            if old.id != cid:
                for f in members:
                    for n in graph.nodes_by_file(f):
                        n.community = cid
            continue
        if rank is None:
            rank = community_rank.full_ranking(graph, members, score)
        communities.append(community_rank.ranked_community(graph, cid, rank, size))
        rankings[cid] = rank
        # the other files' nodes already carry this id when it did not move
        for f in changed if was == cid else members:
            for n in graph.nodes_by_file(f):
                n.community = cid
    graph.communities = communities
    graph.rankings = rankings
    graph.partition = _new_partition(communities, files, membership, ids, part)
    return communities
