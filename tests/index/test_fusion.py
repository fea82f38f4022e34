"""Reciprocal rank fusion with weights and per-list contributions."""

from __future__ import annotations

import pytest

from neuralmind.index.fusion import rrf


def test_scores_are_weighted_reciprocal_ranks() -> None:
    fused = rrf({"bm25": ["a", "b", "c"], "vector": ["b", "d"]},
                weights={"bm25": 1.0, "vector": 2.0}, k=10)
    by_id = {f.id: f for f in fused}
    assert by_id["b"].score == pytest.approx(1 / 12 + 2 / 11)
    assert by_id["b"].ranks == {"bm25": 2, "vector": 1}
    assert by_id["b"].contributions["vector"] == pytest.approx(2 / 11)
    assert by_id["d"].ranks == {"vector": 2} and by_id["d"].score == pytest.approx(2 / 12)
    assert [f.id for f in fused] == ["b", "d", "a", "c"]


def test_duplicates_zero_weight_and_ties() -> None:
    fused = rrf({"x": ["a", "a", "b"], "y": ["q"]}, weights={"x": 1.0, "y": 0.0}, k=60)
    assert [f.id for f in fused] == ["a", "b"]          # y ignored, a counted once
    assert fused[1].ranks == {"x": 2}
    tie = rrf({"x": ["m"], "y": ["c"]}, k=60)
    assert [f.id for f in tie] == ["c", "m"]            # equal scores: ordered by id
    assert rrf({}) == []
