"""Reciprocal rank fusion: score(d) = sum over lists of weight / (k + rank(d)).

Each candidate keeps the contribution of every list it came from so `--explain`
can say why it ranks where it does. Ranks are 1-based.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
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


def group_rrf(scores: Mapping[str, float], group: Callable[[str], str], weight: float,
              k: float) -> dict[str, float]:
    """A group-level list fused back into its members: weight / (k + rank of the group).

    Groups (files) are ranked by the sum of their members' scores, so a file
    several candidates point at rises as a whole; each member gets its group's
    share. Ties break by group name.
    """
    totals: dict[str, float] = defaultdict(float)
    for doc_id, score in scores.items():
        totals[group(doc_id)] += score
    order = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
    share = {g: weight / (k + rank) for rank, (g, _) in enumerate(order, 1)}
    return {doc_id: share[group(doc_id)] for doc_id in scores}
