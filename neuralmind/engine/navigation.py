"""Editor navigation over the graph: the symbol under the cursor (hover), workspace
symbols ranked by name then meaning, and the decisions governing a file.

The `Workspace` methods `hover`, `symbols` and `file_decisions` call these with the
components they need; they return JSON-shaped dicts, the shapes the LSP renders.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from neuralmind.config import SYMBOL_SEMANTIC_HITS, SYMBOL_SEMANTIC_MIN_CHARS
from neuralmind.errors import EngineError
from neuralmind.graph.model import Node

if TYPE_CHECKING:
    from neuralmind.context.pack import RankedHit
    from neuralmind.graph.store import Graph
    from neuralmind.memory.decisions.store import DecisionStore
    from neuralmind.synapse.layer import SynapseLayer

Search = Callable[..., "tuple[list[RankedHit], str, str]"]   # Workspace.search

log = logging.getLogger("neuralmind.engine")

STATUS_EVIDENCE = ("Marked STALE", "Invalidated:")


def status_reason(evidence: list[str]) -> str:
    """The newest evidence line that explains a status change ("" when none does)."""
    for line in reversed(evidence or []):
        if line.startswith(STATUS_EVIDENCE):
            return line
    return ""


def file_decisions(decisions: DecisionStore, rel: str,
                   statuses: tuple[str, ...]) -> list[dict[str, Any]]:
    """Decisions of `statuses` governing `rel`, each with its first governed symbol and the
    1-based line of that symbol in the current graph (None when unknown)."""
    out: list[dict[str, Any]] = []
    for entry in decisions.governing(rel):
        d = entry["decision"]
        if d["status"] not in statuses:
            continue
        symbols = entry["symbols"]
        located = [s for s in symbols if s.get("start_line")]
        first = located[0] if located else (symbols[0] if symbols else None)
        out.append({"id": d["id"], "title": d["title"], "status": d["status"],
                    "reason": status_reason(d.get("evidence", [])),
                    "symbol": first["qualname"] if first else None,
                    "line": first.get("start_line") if first else None,
                    "symbols": [s["qualname"] for s in symbols]})
    return out


def node_at(graph: Graph, rel: str, line: int) -> Node | None:
    """The innermost symbol of `rel` spanning 1-based `line`."""
    best = None
    for n in graph.nodes_by_file(rel):
        if n.kind == "file" or not n.start_line <= line <= n.end_line:
            continue
        if best is None or (n.end_line - n.start_line) < (best.end_line - best.start_line):
            best = n
    return best


def hover(graph: Graph, decisions: DecisionStore, synapses: SynapseLayer | None, rel: str,
          line: int, k: int) -> dict[str, Any]:
    """The symbol at `line`, the decisions governing it, its `k` strongest associations
    (none when learning is off: `synapses` is None)."""
    node = node_at(graph, rel, line)
    out: dict[str, Any] = {"file": rel, "symbol": None, "decisions": [], "associations": []}
    if node is None:
        return out
    out["symbol"] = {"id": node.id, "name": node.qualname or node.name, "kind": node.kind,
                     "line": node.start_line, "end_line": node.end_line,
                     "signature": node.signature}
    qual = node.qualname
    for d in file_decisions(decisions, rel, ("ACTIVE", "STALE", "INVALIDATED")):
        governed = d["symbols"]
        if not governed or any(qual == s or qual.startswith(s + ".") for s in governed):
            out["decisions"].append({key: d[key] for key in ("id", "title", "status", "reason")})
    if synapses is not None:
        try:
            neighbours = synapses.neighbors(node.id, k) or synapses.neighbors(rel, k)
        except Exception as e:  # learning fails open
            log.info("no associations for %s: %s", node.id, e)
            neighbours = []
        out["associations"] = [{"id": i, "weight": round(float(w), 4)} for i, w in neighbours]
    return out


def _name_rank(q: str, n: Node) -> int | None:
    """0 exact name, 1 prefix, 2 substring of name or qualname, 3 any (empty query)."""
    name = n.name.lower()
    if not q:
        return 3
    if name == q:
        return 0
    if name.startswith(q):
        return 1
    if q in name or q in n.qualname.lower():
        return 2
    return None


def symbols(graph: Graph, search: Search, query: str, limit: int) -> list[dict[str, Any]]:
    """Workspace symbols: name matches first (exact, prefix, substring), then search hits."""
    q = (query or "").strip().lower()
    ranked: list[tuple[int, str, Node]] = []
    for n in graph.nodes.values():
        if n.kind != "file" and (rank := _name_rank(q, n)) is not None:
            ranked.append((rank, n.id, n))
    ranked.sort(key=lambda t: (t[0], len(t[2].name), t[1]))
    seen: set[str] = set()
    out: list[dict[str, Any]] = []

    def add(n: Node, how: str) -> None:
        if n.id in seen or len(out) >= limit:
            return
        seen.add(n.id)
        out.append({"id": n.id, "name": n.qualname or n.name, "kind": n.kind, "file": n.file,
                    "line": n.start_line, "end_line": n.end_line, "match": how})

    for _, _, n in ranked[:limit]:
        add(n, "name")
    if q and len(out) < limit and len(q) >= SYMBOL_SEMANTIC_MIN_CHARS:
        try:
            hits, _, _ = search(query, k=min(SYMBOL_SEMANTIC_HITS, limit))
        except EngineError:
            hits = []
        for h in hits:
            if h.node.kind != "file":
                add(h.node, "semantic")
    return out
