"""Reciprocal rank fusion: score(d) = sum over lists of weight / (k + rank(d)).

Each candidate keeps the contribution of every list it came from so `--explain`
can say why it ranks where it does. Ranks are 1-based.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass
class Fused:
    id: str
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)            # list name -> 1-based rank
    contributions: dict[str, float] = field(default_factory=dict)  # list name -> weight/(k+rank)


def rrf(lists: Mapping[str, Sequence[str]], weights: Mapping[str, float] | None = None,
        k: float = 60.0) -> list[Fused]:
    """Fuse ranked id lists; ties break by id so the order is deterministic."""
    fused: dict[str, Fused] = {}
    for name, ids in lists.items():
        weight = 1.0 if weights is None else float(weights.get(name, 1.0))
        if weight == 0.0:
            continue
        seen: set[str] = set()
        rank = 0
        for doc_id in ids:
            if doc_id in seen:
                continue
            seen.add(doc_id)
            rank += 1
            part = weight / (k + rank)
            entry = fused.setdefault(doc_id, Fused(doc_id))
            entry.ranks[name] = rank
            entry.contributions[name] = part
            entry.score += part
    return sorted(fused.values(), key=lambda f: (-f.score, f.id))
