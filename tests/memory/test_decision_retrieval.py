"""Progressive retrieval for agents: memory_search -> memory_timeline -> memory_get."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuralmind.context.tokens import count_tokens
from neuralmind.memory.decisions.eval import load_queries, seed
from neuralmind.memory.decisions.store import DecisionStore

FIXTURE = Path(__file__).parent / "fixtures" / "decision_queries.json"


@pytest.fixture
def store(tmp_path: Path) -> DecisionStore:
    s = DecisionStore(tmp_path)
    seed(s, load_queries(FIXTURE))
    s.record("Use PostgreSQL rather than MongoDB for orders",
             "Orders need multi-document transactions and joins with invoices; the document store "
             "would push consistency into application code.",
             files=["parcelnet/db/engine.py"], rejected=["MongoDB", "MySQL 5.7"],
             evidence=["incident 2025-11: duplicated orders"],
             decision_id="5b1e0c7a93d24c1e")   # fixed: token counts stay stable
    return s


def _tokens(obj: object) -> int:
    return count_tokens(json.dumps(obj, ensure_ascii=False))


def test_search_rows_are_compact(store: DecisionStore) -> None:
    out = store.memory_search("carrier quotes cache", limit=5, mode="keyword")
    assert out["mode"] == "keyword" and out["status"] == "ACTIVE" and out["results"]
    for row in out["results"]:
        assert set(row) >= {"id", "title", "status", "date", "files", "snippet"}
        assert "rationale" not in row and "evidence" not in row
        assert 30 <= _tokens(row) <= 100, row


def test_search_status_filter(store: DecisionStore) -> None:
    active = store.memory_search("carrier quotes", mode="keyword")["results"]
    stale = store.memory_search("carrier quotes", status="stale", mode="keyword")["results"]
    everything = store.memory_search("carrier quotes", status="ALL", mode="keyword")["results"]
    assert {r["status"] for r in active} == {"ACTIVE"} and {r["status"] for r in stale} == {"STALE"}
    assert {r["id"] for r in everything} == {r["id"] for r in active} | {r["id"] for r in stale}
    with pytest.raises(ValueError, match="unknown status"):
        store.memory_search("carrier", status="gone")


def test_timeline_around_an_anchor(store: DecisionStore) -> None:
    ids = [d.id for d in store.decisions()]
    out = store.memory_timeline(ids[10], before=2, after=3)
    assert out["anchor"]["id"] == ids[10]
    assert [r["id"] for r in out["before"]] == ids[8:10]
    assert [r["id"] for r in out["after"]] == ids[11:14]
    edge = store.memory_timeline(ids[0], before=5, after=1)
    assert edge["before"] == [] and [r["id"] for r in edge["after"]] == [ids[1]]
    by_query = store.memory_timeline(query="opaque cursor pagination", before=1, after=1, mode="keyword")
    assert by_query["anchor"]["title"] == "Paginate by opaque cursor" and by_query["mode"] == "keyword"


def test_get_is_batch_capped(store: DecisionStore) -> None:
    ids = [d.id for d in store.decisions()]
    got = store.memory_get(ids[:20])["records"]
    assert [r["id"] for r in got] == ids[:20] and "rejected_alternatives" in got[0]
    with pytest.raises(ValueError, match="at most 20"):
        store.memory_get(ids[:21])
    with pytest.raises(ValueError):
        store.memory_get([])


def test_why_x_over_y_in_three_calls_under_2000_tokens(store: DecisionStore, model: object) -> None:
    question = "why did we choose PostgreSQL over MongoDB?"
    spent = 0
    hits = store.memory_search(question, limit=5)                       # call 1 (default: hybrid)
    spent += _tokens(hits)
    assert hits["mode"] == "hybrid" and all(_tokens(r) <= 100 for r in hits["results"])
    top = hits["results"][0]
    assert "MongoDB" in top["title"]
    timeline = store.memory_timeline(top["id"], before=2, after=2)      # call 2 (optional context)
    spent += _tokens(timeline)
    full = store.memory_get([top["id"]])["records"][0]                  # call 3
    spent += _tokens({"records": [full]})
    assert "MongoDB" in full["rejected_alternatives"] and full["rationale"].startswith("Orders need")
    assert spent < 2000, spent
