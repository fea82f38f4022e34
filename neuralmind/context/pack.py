"""Assemble the four layers into one context under a token budget.

The answer is the code, so L3 gets most of the budget: L0 and L1 are rendered within
their shares of `config.LAYER_BUDGETS` first (they do not depend on the question), L3
then takes everything except L2's share, and L2 (the members of the top hits'
communities that bear on the question, minus what L3 shows) what L3 left. The order of
the text is L0, L1, L2, L3; nothing is ever repeated across layers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuralmind.config import (
    DEFAULT_BUDGET,
    L2_MAX_COMMUNITIES,
    L2_SYMBOLS_PER_COMMUNITY,
    L3_LINES_PER_HIT,
    L3_MAX_HITS,
    LAYER_BUDGETS,
)
from neuralmind.context.identity import render_identity
from neuralmind.context.layers import (
    Piece,
    bears_on,
    fill,
    first_line,
    node_label,
    query_token_set,
    relevant_lines,
    render_snippet,
    source_lines,
)
from neuralmind.context.summary import render_summary
from neuralmind.context.tokens import count_tokens, truncate_to_tokens
from neuralmind.graph.model import Node
from neuralmind.index.file_rank import RankedFile

SEPARATOR = "\n\n"


@dataclass
class RankedHit:
    """A retrieved node with its final score and the reasons behind it (for --explain)."""

    node: Node
    score: float
    why: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"file": self.node.file, "line": self.node.start_line, "end_line": self.node.end_line,
                "symbol": self.node.qualname or self.node.name, "kind": self.node.kind,
                "score": round(self.score, 6)}


@dataclass
class ContextResult:
    context: str
    tokens: int
    layers: dict[str, int]
    mode: str
    hits: list[RankedHit]
    partial: bool = False
    notice: str = ""
    explain: list[str] = field(default_factory=list)
    files: list[RankedFile] = field(default_factory=list)   # the file ranking, best first

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"context": self.context, "tokens": self.tokens, "layers": self.layers,
                               "mode": self.mode, "files": [f.to_json() for f in self.files],
                               "hits": [h.to_json() for h in self.hits], "partial": self.partial}
        if self.notice:
            out["notice"] = self.notice
        if self.explain:
            out["explain"] = self.explain
        return out


def layer_budgets(budget: int, layers: Sequence[str]) -> dict[str, int]:
    """Split `budget` over `layers` in the configured proportions, reserving separators."""
    usable = max(0, budget - 2 * (len(layers) - 1))
    total = sum(LAYER_BUDGETS[name] for name in layers)
    return {name: usable * LAYER_BUDGETS[name] // total for name in layers}


def render_communities(graph: Any, hits: Sequence[RankedHit], shown: set[str], budget: int,
                       question: str = "") -> tuple[str, list[Piece]]:
    """L2: for the communities of the top hits, their other members that bear on the
    question (a hit, or sharing a word with it), as signatures."""
    by_id = {c.id: c for c in graph.communities}
    order: list[int] = []
    for h in hits:
        cid = h.node.community
        if cid in by_id and cid not in order:
            order.append(cid)
        if len(order) == L2_MAX_COMMUNITIES:
            break
    hit_rank = {h.node.id: i for i, h in enumerate(hits)}
    words = query_token_set(question)
    pieces: list[Piece] = []
    for cid in order:
        c = by_id[cid]
        members = [graph.nodes[h.node.id] for h in hits if h.node.community == cid]
        members += [graph.nodes[s] for s in c.top_symbols if s in graph.nodes]
        seen: set[str] = set()
        picked = []
        for n in sorted(members, key=lambda n: hit_rank.get(n.id, len(hit_rank))):
            if n.id in shown or n.id in seen or n.kind == "file":
                continue
            seen.add(n.id)
            if n.id not in hit_rank and not bears_on(n, words):
                continue
            picked.append(n)
            if len(picked) == L2_SYMBOLS_PER_COMMUNITY:
                break
        if not picked:
            continue
        pieces.append(Piece(f"### {c.name}" + (f" (`{c.path}`)" if getattr(c, "path", "") else ""),
                            why=f"community {cid} of a top hit"))
        for n in picked:
            sig = first_line(n.signature or node_label(n), 140)
            doc = f" — {first_line(n.docstring, 100)}" if n.docstring else ""
            pieces.append(Piece(f"- `{sig}`{doc} ({n.file}:{n.start_line})", node_id=n.id,
                                why=f"in community {cid}"))
    return fill("## Related modules", pieces, budget)


def render_search(root: Path, hits: Sequence[RankedHit], question: str,
                  budget: int, graph: Any = None) -> tuple[str, list[Piece]]:
    """L3: the best hits (which span the best files) with location and their most
    relevant code lines (an unsaved buffer's, when the graph extracted one); a whole file
    stands for itself by its best-matching lines."""
    qtokens = query_token_set(question)
    pieces = []
    for h in hits[:L3_MAX_HITS]:
        n = h.node
        head = f"**{node_label(n)}** ({n.kind}) `{n.file}:{n.start_line}-{n.end_line}`"
        buffered = graph.buffer_lines(n.file) if graph is not None else None
        lines = buffered if buffered is not None else source_lines(root, n.file)
        snippet = render_snippet(lines, relevant_lines(lines, n, qtokens, L3_LINES_PER_HIT))
        text = head + (f"\n```\n{snippet}\n```" if snippet else "")
        pieces.append(Piece(text, node_id=n.id, why=_why(h)))
    return fill("## Search results", pieces, budget)


def _why(h: RankedHit) -> str:
    return ", ".join(f"{k}={v}" for k, v in h.why.items()) or f"score={h.score:.4f}"


def assemble(root: Path, graph: Any, question: str | None, hits: Sequence[RankedHit], mode: str,
             budget: int = DEFAULT_BUDGET, include_wakeup: bool = True,
             explain: bool = False, files: Sequence[RankedFile] = ()) -> ContextResult:
    """Build the context for `question` (None: the wake-up pack, L0 + L1)."""
    names = (["L0", "L1"] if include_wakeup else []) + (["L2", "L3"] if question is not None else [])
    budgets = layer_budgets(budget, names)
    texts: dict[str, str] = {}
    kept: dict[str, list[Piece]] = {}
    if include_wakeup:
        l0 = render_identity(root, graph.language_counts(), len(graph.files), len(graph.nodes))
        texts["L0"] = truncate_to_tokens(l0, budgets["L0"])
        kept["L0"] = [Piece(texts["L0"], why="identity")] if texts["L0"] else []
        texts["L1"], kept["L1"] = render_summary(graph, budgets["L1"])
    # each layer's text counted once (o200k: the split and piece lookups cost ~0.1 ms per
    # KB even when every piece is cached, and L0 + L1 + L3 were counted twice)
    layers = {n: count_tokens(texts[n]) for n in texts}
    if question is not None:
        # L3 takes all but L2's share of what L0 and L1 left; L2 then what L3 left
        left = budget - 2 * (len(names) - 1) - sum(layers.values())
        texts["L3"], kept["L3"] = render_search(root, hits, question, left - budgets["L2"],
                                                graph)
        layers["L3"] = count_tokens(texts["L3"])
        shown = {p.node_id for p in kept["L3"]}
        texts["L2"], kept["L2"] = render_communities(
            graph, hits, shown, left - layers["L3"], question)
        layers["L2"] = count_tokens(texts["L2"])
        budgets["L3"] = left - budgets["L2"]
    order = [n for n in ("L0", "L1", "L2", "L3") if n in names and texts.get(n)]
    context = SEPARATOR.join(texts[n] for n in order)
    layers = {n: layers.get(n, 0) for n in names}
    lines: list[str] = []
    if explain:
        for n in names:
            lines.append(f"{n}: {layers[n]}/{budgets[n]} tokens, {len(kept.get(n, []))} pieces")
            lines += [f"  {n} {p.node_id or p.text.splitlines()[0][:60]}: {p.why}"
                      for p in kept.get(n, []) if p.why]
    return ContextResult(context=context, tokens=count_tokens(context), layers=layers, mode=mode,
                         hits=list(hits), explain=lines, files=list(files))
