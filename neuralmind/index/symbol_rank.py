"""Symbols ranked for a question: the node-level half of `SearchIndex.search`.

Two node lists, BM25 over node texts and the nearest node vectors, are fused by weighted
reciprocal rank (RRF_K, RRF_WEIGHTS). Then, in order: each file's summed evidence is
fused back into its symbols (FILE_GROUP_WEIGHT: a file several candidates point at rises
as a whole); an exact identifier the question names goes first (EXACT_BOOST); test and
generated code is scaled down unless the question is about tests (SYMBOL_TEST_FACTOR:
L3 shows implementation). The file ranking (`file_rank.py`) reads this list as one of
its three lists; every constant is in config.py with the reason for its value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from neuralmind.config import EXACT_BOOST, FILE_GROUP_WEIGHT, SYMBOL_TEST_FACTOR
from neuralmind.index.fusion import group_rrf, rrf
from neuralmind.index.pairing import is_test_path


@dataclass
class Hit:
    id: str
    score: float
    vector_rank: int | None = None
    bm25_rank: int | None = None
    vector_score: float | None = None
    bm25_score: float | None = None
    contributions: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)   # "exact name", "test code down-weighted"


def node_path(node_id: str) -> str:
    return node_id.split("::", 1)[0]


def is_file_id(node_id: str) -> bool:
    return "::" not in node_id


def rank_symbols(bm25_hits: list[tuple[str, float]], vector_hits: list[tuple[str, float]],
                 exact: set[str], names: Mapping[str, str], *, about_tests: bool,
                 weights: Mapping[str, float], k: float) -> list[Hit]:
    """Node ids best first, each with the evidence that placed it (for `--explain`)."""
    lists = {"bm25": [i for i, _ in bm25_hits], "vector": [i for i, _ in vector_hits]}
    fused = {f.id: f for f in rrf(lists, weights, k)}
    bm25_score, vec_score = dict(bm25_hits), dict(vector_hits)
    node_scores = {i: fused[i].score if i in fused else 0.0 for i in set(fused) | exact}
    file_of = {i: node_path(i) for i in node_scores}   # split once, read three times
    by_file = (group_rrf(node_scores, file_of.__getitem__, FILE_GROUP_WEIGHT, k)
               if FILE_GROUP_WEIGHT else {})
    hits: list[Hit] = []
    for node_id, score in node_scores.items():
        f = fused.get(node_id)
        hit = Hit(node_id, score,
                  vector_rank=f.ranks.get("vector") if f else None,
                  bm25_rank=f.ranks.get("bm25") if f else None,
                  vector_score=vec_score.get(node_id), bm25_score=bm25_score.get(node_id),
                  contributions=dict(f.contributions) if f else {})
        if by_file:
            hit.score += by_file[node_id]
            hit.contributions["file"] = by_file[node_id]
        if node_id in exact:
            hit.score += EXACT_BOOST
            hit.reasons.append(f"exact name match: {names.get(node_id, '')}")
        if not about_tests and is_test_path(file_of[node_id]):
            hit.score *= SYMBOL_TEST_FACTOR
            hit.reasons.append("test/generated code down-weighted")
        hits.append(hit)
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits


def name_ids(held: str | list[str]) -> tuple[str, ...] | list[str]:
    """The ids of one entry of the exact-name map: one id is held bare, several in a list."""
    return (held,) if type(held) is str else held


def add_name(by_name: dict[str, str | list[str]], name: str, node_id: str) -> None:
    """Add `node_id` under `name` in the exact-name map. Most names are one node's (the
    Linux kernel: ~600k of its names), held as the bare id: a list each was ~45 MB."""
    held = by_name.get(name)
    if held is None:
        by_name[name] = node_id
    elif type(held) is str:
        by_name[name] = [held, node_id]
    else:
        held.append(node_id)


def rename(by_name: dict[str, str | list[str]] | None, node_id: str, old: str | None,
           new: str | None) -> None:
    """Move `node_id` from name `old` to name `new` in the exact-name map (None: absent)."""
    if by_name is None:
        return
    if old is not None:
        held = by_name.get(old)
        if held == node_id:
            del by_name[old]
        elif type(held) is list and node_id in held:
            held.remove(node_id)
            if len(held) == 1:
                by_name[old] = held[0]
    if new is not None:
        add_name(by_name, new, node_id)
