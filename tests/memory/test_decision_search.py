"""Keyword (FTS5 and the forced LIKE fallback), semantic and hybrid search, with the real model."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuralmind.memory.decisions.store import DecisionStore
from neuralmind.memory.search import SIMILARITY_FLOOR, SemanticUnavailable

DECISIONS = [
    ("Use SQLite WAL mode for the decision store",
     "WAL lets readers proceed while one writer commits, so the editor never waits on the CLI."),
    ("Connection pooling for the Postgres driver",
     "Opening a connection costs forty milliseconds; a pool of ten keeps them warm."),
    ("Bind the debug server to loopback only",
     "The debug endpoint exposes internals, so it listens on 127.0.0.1 and nowhere else."),
    ("Store prices as integer cents",
     "Floating point rounding produced one-cent mismatches in invoice totals."),
    ("Retry webhooks with exponential backoff",
     "Merchant endpoints go down during their deploys; we retry at growing intervals for two days."),
]


def _seed(store: DecisionStore) -> list[str]:
    return [store.record(t, r).id for t, r in DECISIONS]


@pytest.fixture(params=[True, False], ids=["fts5", "like-fallback"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> DecisionStore:
    s = DecisionStore(tmp_path, fts=request.param)
    _seed(s)
    return s


def _titles(result) -> list[str]:  # noqa: ANN001
    return [d.title for d in result.records]


def test_keyword_drops_stop_words_and_matches_any_word(store: DecisionStore) -> None:
    r = store.search("how do we handle sqlite wal?", mode="keyword")
    assert r.mode == "keyword" and r.terms == ["handle", "sqlite", "wal"]
    assert _titles(r)[0] == DECISIONS[0][0]
    assert _titles(store.search("what about the cents in invoices", mode="keyword")) == [DECISIONS[3][0]]


def test_keyword_prefix_matching(store: DecisionStore) -> None:
    assert _titles(store.search("pool", mode="keyword")) == [DECISIONS[1][0]]      # pool -> pooling
    assert _titles(store.search("expon", mode="keyword")) == [DECISIONS[4][0]]


def test_keyword_ranks_more_matched_words_first(store: DecisionStore) -> None:
    # "store" matches two decisions, "prices" and "cents" only one: it matches more words, so it leads
    r = store.search("store prices cents", mode="keyword")
    assert _titles(r)[0] == DECISIONS[3][0]
    assert DECISIONS[0][0] in _titles(r)                                        # partial match kept


def test_keyword_nothing_and_only_stop_words(store: DecisionStore) -> None:
    assert store.search("kubernetes helm", mode="keyword").records == []
    assert store.search("why did we do that?", mode="keyword").records == []


def test_fallback_forced_through_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEURALMIND_DECISION_FTS", "0")
    s = DecisionStore(tmp_path)
    assert s.use_fts is False
    _seed(s)
    assert _titles(s.search("loopback", mode="keyword")) == [DECISIONS[2][0]]


def test_fts_index_catches_up_with_writes_made_without_fts(tmp_path: Path) -> None:
    DecisionStore(tmp_path, fts=True).record("First", "alpha")
    DecisionStore(tmp_path, fts=False).record("Second", "bravo written without fts")
    fresh = DecisionStore(tmp_path, fts=True)
    assert _titles(fresh.search("bravo", mode="keyword")) == ["Second"]


def test_semantic_finds_a_paraphrase_with_no_shared_word(tmp_path: Path, model: object) -> None:
    s = DecisionStore(tmp_path)
    _seed(s)
    q = "who can reach the debugging host remotely?"
    assert s.search(q, mode="keyword").records == []             # no word in common
    r = s.search(q, mode="semantic")
    assert r.mode == "semantic" and _titles(r)[0] == DECISIONS[2][0]
    assert all(score >= SIMILARITY_FLOOR for score in r.scores)


def test_semantic_similarity_floor_returns_nothing_for_unrelated(tmp_path: Path, model: object) -> None:
    s = DecisionStore(tmp_path)
    _seed(s)
    assert s.search("recipe for banana bread with walnuts", mode="semantic").records == []


def test_vectors_are_cached_and_refreshed_only_for_new_or_amended(tmp_path: Path, model: object) -> None:
    s = DecisionStore(tmp_path)
    ids = _seed(s)
    assert s.search("database", mode="semantic").embedded == len(DECISIONS)
    assert s.search("database again", mode="semantic").embedded == 0
    s.amend(ids[1], rationale="A pool of ten connections avoids the connect cost.")
    s.record("New decision", "Something new entirely.")
    s.amend(ids[2], tags=["security"])                      # text unchanged: no re-embedding
    assert s.search("database", mode="semantic").embedded == 2
    assert DecisionStore(tmp_path).search("database", mode="hybrid").embedded == 0   # persisted


def test_hybrid_is_default_and_fuses_both(tmp_path: Path, model: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEURALMIND_DECISION_SEARCH", raising=False)
    s = DecisionStore(tmp_path)
    _seed(s)
    r = s.search("loopback")
    assert (r.mode, r.requested, r.notice) == ("hybrid", "hybrid", "")
    assert _titles(r)[0] == DECISIONS[2][0]
    para = s.search("who can reach the debugging host remotely?")
    assert DECISIONS[2][0] in _titles(para)[:2]


def test_environment_overrides_the_default_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = DecisionStore(tmp_path)
    _seed(s)
    monkeypatch.setenv("NEURALMIND_DECISION_SEARCH", "keyword")
    assert s.search("loopback").mode == "keyword"
    assert s.search("loopback", mode="hybrid").requested == "hybrid"     # explicit mode wins
    monkeypatch.setenv("NEURALMIND_DECISION_SEARCH", "fuzzy")
    with pytest.raises(ValueError, match="unknown search mode"):
        s.search("loopback")


def test_without_model_hybrid_falls_back_and_semantic_refuses(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "no-model"
    empty.mkdir()
    monkeypatch.setenv("NEURALMIND_MODEL_DIR", str(empty))
    s = DecisionStore(tmp_path / "p")
    _seed(s)
    r = s.search("loopback")
    assert r.mode == "keyword" and r.requested == "hybrid"
    assert "semantic ranking unavailable" in r.notice and "keyword results only" in r.notice
    assert _titles(r) == [DECISIONS[2][0]]
    with pytest.raises(SemanticUnavailable, match="model"):
        s.search("loopback", mode="semantic")
