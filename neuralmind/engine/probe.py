"""A label-free self-test of retrieval: can a symbol be found from what it does?

For a sample of documented symbols, the symbol's docstring, with the symbol's own name
taken out, is asked as a question; where the symbol ranks among the hits says how well
the index finds code described in other words. No labelled questions are needed, so it
runs on any repository (the seed's `neuralmind probe`). Reported: MRR and Recall@5 over
the sample, by kind and by language, and the blind spots: directories and communities
whose symbols are rarely found. The sample is deterministic (a hash of each node id),
so two runs over the same index agree.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neuralmind.config import (
    PROBE_HEALTHY_MRR,
    PROBE_K,
    PROBE_MIN_DOC_WORDS,
    PROBE_MIN_GROUP,
    PROBE_QUESTION_CHARS,
)
from neuralmind.index.tokens import code_tokens

if TYPE_CHECKING:
    from neuralmind.engine.workspace import Workspace
    from neuralmind.graph.model import Node

PROBED_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum",
                          "trait", "type", "module"})
BLIND_SPOTS = 5


@dataclass
class Probe:
    node: str
    kind: str
    language: str
    directory: str
    community: str
    question: str
    rank: int | None          # 1-based rank among the hits, None past PROBE_K

    @property
    def reciprocal(self) -> float:
        return 1.0 / self.rank if self.rank else 0.0

    @property
    def found(self) -> bool:
        return self.rank is not None and self.rank <= 5


def _order(node_id: str) -> str:
    return hashlib.sha1(node_id.encode("utf-8")).hexdigest()


def question_for(node: Node) -> str:
    """The docstring's first paragraph without the symbol's name (every word that contains
    it, `Class.method` or `method()` included); "" when fewer than PROBE_MIN_DOC_WORDS search
    terms are left."""
    text = " ".join(node.docstring.strip().split("\n\n")[0].split())
    names = {n for n in (node.name, node.qualname) if n}
    kept = [w for w in text.split(" ") if w and not any(n in w for n in names)]
    question = " ".join(kept)[:PROBE_QUESTION_CHARS]
    return question if len(code_tokens(question)) >= PROBE_MIN_DOC_WORDS else ""


def sample(ws: Workspace, size: int) -> list[tuple[Node, str]]:
    """Up to `size` documented symbols with their questions, in a fixed pseudo-random order."""
    candidates = sorted((n for n in ws.graph.nodes.values()
                         if n.kind in PROBED_KINDS and n.docstring), key=lambda n: _order(n.id))
    out = []
    for n in candidates:
        q = question_for(n)
        if q:
            out.append((n, q))
            if len(out) == size:
                break
    return out


def _directory(path: str) -> str:
    parts = path.split("/")[:-1]
    return "/".join(parts[:2]) or "."


def run_probe(ws: Workspace, size: int) -> list[Probe]:
    """Ask each sampled symbol's question; where it ranks."""
    names = {c.id: c.name for c in ws.graph.communities}
    out = []
    for node, question in sample(ws, size):
        hits, _, _ = ws.search(question, k=PROBE_K)
        ids = [h.node.id for h in hits]
        rank = ids.index(node.id) + 1 if node.id in ids else None
        out.append(Probe(node.id, node.kind, node.language, _directory(node.file),
                         names.get(node.community, f"community {node.community}"), question,
                         rank))
    return out


def _score(probes: Iterable[Probe]) -> dict[str, Any]:
    rows = list(probes)
    n = len(rows)
    return {"n": n,
            "mrr": round(sum(p.reciprocal for p in rows) / n, 3) if n else 0.0,
            "recall_at_5": round(sum(p.found for p in rows) / n, 3) if n else 0.0}


def _grouped(probes: list[Probe], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Probe]] = defaultdict(list)
    for p in probes:
        groups[getattr(p, key)].append(p)
    return {name: _score(rows) for name, rows in sorted(groups.items())}


def _blind_spots(probes: list[Probe], key: str) -> list[dict[str, Any]]:
    groups = _grouped(probes, key)
    weak = [{key: name, **score} for name, score in groups.items()
            if score["n"] >= PROBE_MIN_GROUP]
    weak.sort(key=lambda g: (g["recall_at_5"], g["mrr"], -g["n"]))
    return weak[:BLIND_SPOTS]


def report(probes: list[Probe], size: int) -> dict[str, Any]:
    """The probe's figures: overall, by kind and language, blind spots, the worst misses."""
    overall = _score(probes)
    return {
        "sample": size, **overall,
        "healthy": bool(probes) and overall["mrr"] >= PROBE_HEALTHY_MRR,
        "healthy_mrr": PROBE_HEALTHY_MRR,
        "by_kind": _grouped(probes, "kind"),
        "by_language": _grouped(probes, "language"),
        "blind_spots": {"directories": _blind_spots(probes, "directory"),
                        "communities": _blind_spots(probes, "community")},
        "missed": [{"node": p.node, "question": p.question} for p in probes if p.rank is None][:10],
    }


def health(ws: Workspace, size: int) -> dict[str, Any]:
    """A small probe for `doctor`: the figures, and whether retrieval looks healthy."""
    probes = run_probe(ws, size)
    out = report(probes, size)
    worst = out["blind_spots"]["directories"][:1]
    out["summary"] = (f"MRR {out['mrr']:.2f}, Recall@5 {out['recall_at_5']:.2f} over "
                      f"{out['n']} documented symbols"
                      + (f"; weakest: {worst[0]['directory']} (R@5 {worst[0]['recall_at_5']:.2f})"
                         if worst else ""))
    return out
