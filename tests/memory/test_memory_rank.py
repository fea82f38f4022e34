"""Rank, forgetting and the feedback windows: deterministic, on the settable clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_helpers import DAY, store_at

from neuralmind import config
from neuralmind.memory import rank
from neuralmind.memory.atoms import Atom


def atom(**kw: object) -> Atom:
    base = {"id": "a", "type": "note", "label": "l", "text": "t",
            "created_at": "2026-01-01T00:00:00+00:00"}
    return Atom(**(base | kw))   # type: ignore[arg-type]


NOW = 1_767_225_600.0           # 2026-01-01T00:00:00Z


def test_feedback_is_the_only_factor_that_reaches_zero() -> None:
    assert rank.feedback_factor(0, 0, 0) == config.FEEDBACK_PRIOR
    assert rank.feedback_factor(0, 0, 2) == 0.0                 # two noise verdicts
    assert rank.feedback_factor(0, 0, 50) == 0.0                # clamped, never negative
    assert rank.feedback_factor(0, 100, 0) == 1.0               # clamped at one
    assert rank.decay_factor(10_000) == config.DECAY_FLOOR > 0  # age alone never zeroes
    assert rank.decay_factor(config.DECAY_HALF_LIFE_DAYS) == pytest.approx(
        max(config.DECAY_FLOOR, 0.5))
    assert rank.connectedness(0, 0) == config.CONNECTEDNESS_BASE > 0
    assert rank.connectedness(100, 100) == 1.0


def test_rank_edges_and_sway_bounds() -> None:
    fresh = atom()
    assert rank.rank(fresh, 0, NOW) == pytest.approx(config.FEEDBACK_PRIOR * config.CONNECTEDNESS_BASE)
    assert rank.rank(atom(noise=2), 10, NOW) == 0.0
    best = atom(useful=20, useful_at="2026-01-01T00:00:00+00:00")
    assert rank.rank(best, 10, NOW) == 1.0
    old = atom(useful=20, useful_at="2025-01-01T00:00:00+00:00")    # a year since useful
    assert rank.rank(old, 10, NOW) == config.DECAY_FLOOR
    assert rank.sway(0.0) == pytest.approx(1 - config.RANK_SWAY)
    assert rank.sway(1.0) == pytest.approx(1 + config.RANK_SWAY)
    assert rank.sway(-3) == rank.sway(0.0) and rank.sway(7) == rank.sway(1.0)


OLD = "2025-06-01T00:00:00+00:00"     # seven months before NOW: decay at its floor


@pytest.mark.parametrize("kw, expected", [
    ({"noise": 1}, "active"),                        # 0.25 * 1 * 0.5 = 0.125: above LOW_RANK
    ({"noise": 1, "created_at": OLD}, "ignored"),    # 0.25 * 0.5 * 0.5 = 0.0625, exposure 3
    ({"noise": 1, "created_at": OLD, "served": 3}, "archived"),   # exposure 6
    ({"noise": 2}, "archived"),                      # rank 0, exposure 6
    ({"noise": 2, "pinned": True}, "active"),        # a standing directive is exempt
    ({"noise": 1, "created_at": OLD, "state": "proposed"}, "ignored"),   # a noisy guess too
    ({"noise": 2, "state": "rejected"}, "rejected"),  # promotion's states are its own
    ({"noise": 2, "useful": 2}, "active"),           # 0.5 + 0.3 - 0.5 = 0.3
])
def test_state_transitions(kw: dict, expected: str) -> None:
    a = atom(**kw)
    assert rank.state_for(a, rank.rank(a, 0, NOW)) == expected


def test_archived_then_restored_never_deleted(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.remember("Quiet note nobody reads", "note")
    loud = store.remember("Loud note everyone sees", "note")
    for _ in range(3):
        store.recall("loud note everyone sees", session="s")
        store.rate(loud.id, "used", "s")                        # feedback 0.65
    assert store.rate(loud.id, "noise")["state"] == "active"    # 0.40
    assert store.rate(loud.id, "noise")["state"] == "archived"  # 0.15 * 0.5 = 0.075, exposed
    assert store.recall("loud note everyone sees").hits[0].atom.id != loud.id
    assert loud.id not in [h.atom.id for h in store.recall("loud note everyone sees").hits]
    assert store.stats()["atoms"] == 2                          # kept
    assert store.restore_atom(loud.id).state == "active"
    assert store.recall("loud note everyone sees").hits[0].atom.id == loud.id


def test_recall_settles_the_state_of_a_candidate_that_aged_below_low_rank(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    a = store.remember("Never surfaced again", "note")
    store.rate(a.id, "noise")                                    # 0.125: still active
    assert store.atom(a.id).state == "active"
    store.clock.advance(120 * DAY)                               # decay to its floor: 0.0625
    assert store.recall("never surfaced again").hits == []
    assert store.atom(a.id).state == "ignored"                   # exposure 3: ignored, kept


def test_pending_feedback_windows_on_the_settable_clock(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    a = store.remember("Tokens expire after one hour", "lesson")
    b = store.remember("Refresh tokens are rotated", "lesson")
    first = store.recall("token expiry", session="mcp:agent")
    assert {h.atom.id for h in first.hits} == {a.id, b.id}
    assert [p["id"] for p in store.pending("mcp:agent")] == [h.atom.id for h in first.hits]
    store.clock.advance(config.FEEDBACK_GRACE_SECONDS - 1)
    assert store.recall("token expiry", session="mcp:agent").hits       # within grace
    assert store.recall("token expiry", session="other").hits           # other sessions unaffected
    store.clock.advance(2)                                               # past grace (first batch)
    withheld = store.recall("token expiry", session="mcp:agent")
    assert withheld.hits == [] and withheld.mode == "withheld"
    assert {u["id"] for u in withheld.unrated} == {a.id, b.id} and a.id in withheld.notice
    assert store.recall("token expiry").hits                             # a person is never gated
    store.rate(a.id, "useful", "mcp:agent")
    assert [u["id"] for u in store.recall("token expiry", session="mcp:agent").unrated] == [b.id]
    store.clock.advance(config.FEEDBACK_TIMEOUT_SECONDS)                 # past the timeout
    again = store.recall("token expiry", session="mcp:agent")
    assert again.hits and not again.unrated                              # cleared, no verdict
    b_now = store.atom(b.id)
    assert (b_now.used, b_now.useful, b_now.noise) == (0, 0, 0) and b_now.served >= 3


def test_decay_counts_from_the_last_useful_verdict(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    a = store.remember("Useful once", "note")
    r0 = store.rate(a.id, "useful")["rank"]
    store.clock.advance(60 * DAY)
    r60 = store.rate(a.id, "used")["rank"]
    assert r60 < r0
    assert store.rate(a.id, "useful")["rank"] > r60                      # useful again: fresh
