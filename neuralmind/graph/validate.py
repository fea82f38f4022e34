"""Check a graph against the IR contract (graph/model.py); needs no index or model.

Spans are checked against the line count the extractor saw (stored in FileInfo) and,
with `root`, against the file on disk as well; a file missing on disk only makes the
graph stale, not invalid, so it is not reported.
"""

from __future__ import annotations

from pathlib import Path

from neuralmind.graph.extract import line_count
from neuralmind.graph.model import EDGE_KINDS, NODE_KINDS, node_id
from neuralmind.graph.store import KNOWN_SCHEMAS, Graph

MAX_REPORTED = 200   # a broken graph can have millions of violations; the first ones suffice


def _disk_lines(root: Path, path: str) -> int | None:
    try:
        data = (root / path).read_bytes()
    except OSError:
        return None
    return line_count(data)


def validate_graph(graph: Graph, root: Path | None = None) -> list[str]:
    """Every violation found, one line each (empty list: the graph is valid)."""
    problems: list[str] = []

    def bad(msg: str) -> None:
        if len(problems) < MAX_REPORTED:
            problems.append(msg)

    if graph.schema not in KNOWN_SCHEMAS:
        bad(f"schema version {graph.schema} is not one this build knows ({sorted(KNOWN_SCHEMAS)})")

    seen: set[str] = set()
    for path, ex in graph.extracts.items():
        if path not in graph.files:
            bad(f"{path}: extract without file record")
        for n in ex.nodes:
            if n.id in seen:
                bad(f"duplicate node id {n.id}")
            seen.add(n.id)
    for nid in graph.node_ids():
        n = graph.nodes[nid]
        if nid != n.id:
            bad(f"node stored under {nid} has id {n.id}")
        if n.kind not in NODE_KINDS:
            bad(f"{n.id}: unknown node kind {n.kind!r}")
        expected = node_id(n.file, n.qualname or None)
        if not n.id.startswith(expected):
            bad(f"{n.id}: id does not start with {expected!r}")
        if n.file not in graph.files:
            bad(f"{n.id}: file {n.file} not in the graph")

    for path, info in graph.files.items():
        limits = [max(1, info.lines)]
        if root is not None:
            on_disk = _disk_lines(root, path)
            if on_disk is not None and on_disk != limits[0]:
                limits.append(on_disk)
        for n in graph.nodes_by_file(path):
            for limit in limits:
                if not 1 <= n.start_line <= n.end_line <= limit:
                    where = "the stored file" if limit is limits[0] else "the file on disk"
                    bad(f"{n.id}: span {n.start_line}-{n.end_line} outside 1-{limit} of {where}")

    for e in graph.edges:
        if e.kind not in EDGE_KINDS:
            bad(f"edge {e.source} -> {e.target}: unknown kind {e.kind!r}")
        if e.source not in graph.nodes:
            bad(f"{e.kind} edge from missing node {e.source}")
        if e.target not in graph.nodes:
            bad(f"{e.kind} edge {e.source} -> missing node {e.target}")
        if e.count < 1:
            bad(f"{e.kind} edge {e.source} -> {e.target}: count {e.count}")

    ncomm = len(graph.communities)
    for i, c in enumerate(graph.communities):
        if c.id != i:
            bad(f"community {c.id} at position {i}")
        for f in c.files:
            if f not in graph.files:
                bad(f"community {c.id}: unknown file {f}")
    if ncomm:
        for n in graph.nodes.values():
            if not 0 <= n.community < ncomm:
                bad(f"{n.id}: community {n.community} does not exist")
    return problems
