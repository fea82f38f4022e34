"""The eval query set keeps its promises: paraphrases share no search word with their answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuralmind.memory.decisions.eval import load_queries
from neuralmind.memory.terms import matches, search_terms

FIXTURE = Path(__file__).parent / "fixtures" / "decision_queries.json"


@pytest.fixture(scope="module")
def data() -> dict:
    return load_queries(FIXTURE)


def _answer_text(data: dict, key: str) -> str:
    d = next(d for d in data["decisions"] if d["key"] == key)
    assert d.get("status", "ACTIVE") == "ACTIVE", f"{key} answers a question but is not ACTIVE"
    return f"{d['title']} {d['rationale']}"


def test_sizes(data: dict) -> None:
    assert len(data["decisions"]) >= 35
    assert sum(d.get("status", "ACTIVE") == "ACTIVE" for d in data["decisions"]) >= 30
    assert len(data["questions"]) >= 20
    assert len(data["paraphrases"]) >= 20
    assert len(data["unanswerable"]) >= 4
    assert len({d["key"] for d in data["decisions"]}) == len(data["decisions"])


def test_questions_share_a_search_word_with_their_answer(data: dict) -> None:
    for item in data["questions"]:
        terms = search_terms(item["q"])
        for key in item["answers"]:
            text = _answer_text(data, key)
            assert any(matches(t, text) for t in terms), f"{item['q']!r} shares no word with {key}"


def test_paraphrases_share_no_search_word_with_their_answer(data: dict) -> None:
    for item in data["paraphrases"]:
        terms = search_terms(item["q"])
        assert terms, f"{item['q']!r} has no search words at all"
        for key in item["answers"]:
            text = _answer_text(data, key)
            shared = [t for t in terms if matches(t, text)]
            assert not shared, f"{item['q']!r} shares {shared} with {key}"


def test_preregistration_is_present(data: dict) -> None:
    pre = data["_paraphrase_preregistration"]
    assert pre["similarity_floor"] == 0.30
    assert "keep_rule" in pre and "expectations" in pre


def test_matches_is_prefix_on_words() -> None:
    # the check above is only as strong as `matches`: it must see what FTS5 prefix search sees
    assert matches("pool", "connection pooling")
    assert not matches("pooling", "connection pool")
    assert matches("cafe", "Café au lait")
    assert search_terms("How do we handle SQLite WAL?") == ["handle", "sqlite", "wal"]
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert raw["decisions"][0]["key"] == "d01"
