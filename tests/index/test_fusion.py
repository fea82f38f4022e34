"""Reciprocal rank fusion with weights and per-list contributions."""

from __future__ import annotations

import pytest

from neuralmind.index.fusion import group_rrf, rrf


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


def test_group_list_lifts_a_file_several_nodes_point_at() -> None:
    scores = {"a.py::f": 0.10, "a.py::g": 0.05, "b.py::h": 0.12}
    bonus = group_rrf(scores, lambda i: i.split("::")[0], weight=0.5, k=10)
    assert bonus["a.py::f"] == bonus["a.py::g"] == pytest.approx(0.5 / 11)  # a.py sums 0.15
    assert bonus["b.py::h"] == pytest.approx(0.5 / 12)
    assert group_rrf({}, str, 1.0, 10) == {}
