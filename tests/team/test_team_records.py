"""Shared records keep every version; concurrent edits are both kept and the later one in
event order wins the view, and the conflict is reported."""

from __future__ import annotations

from pathlib import Path

from conftest import mirror

from neuralmind.team.identity import RepoIdentity
from neuralmind.team.sync import TeamSync

REPO = RepoIdentity("b" * 40, "example.com/team/shop")


def sync(local, dsn: str) -> None:  # noqa: ANN001
    s = TeamSync(local, dsn, REPO)
    try:
        s.sync_once()
    finally:
        s.close()


def test_concurrent_edits_are_both_kept_and_the_later_wins(team_db: str, tmp_path: Path) -> None:
    alice, bob = mirror(tmp_path / "a"), mirror(tmp_path / "b")
    v1 = alice.put_record("decision", "d1", {"title": "Use cents", "rationale": "floats round"})
    sync(alice, team_db)
    sync(bob, team_db)
    assert bob.record_current("decision", "d1")["record"]["title"] == "Use cents"
    # both edit v1 without seeing each other's edit
    alice.put_record("decision", "d1", {"title": "Use integer cents", "rationale": "a"})
    bob.put_record("decision", "d1", {"title": "Use Decimal", "rationale": "b"})
    # before syncing, each sees its own edit
    assert alice.record_current("decision", "d1")["record"]["title"] == "Use integer cents"
    assert bob.record_current("decision", "d1")["record"]["title"] == "Use Decimal"
    sync(bob, team_db)      # bob's edit reaches the store first...
    sync(alice, team_db)    # ...alice's second: hers is later in event order
    sync(bob, team_db)
    for who in (alice, bob):
        assert who.record_current("decision", "d1")["record"]["title"] == "Use integer cents"
        history = who.record_history("decision", "d1")
        assert [h["record"]["title"] for h in history] == [
            "Use cents", "Use Decimal", "Use integer cents"]
        assert [h["pos"] for h in history] == [1, 2, 3]
        (conflict,) = who.conflicts("decision")
        assert conflict["id"] == "d1" and conflict["base"] == list(v1)
        assert [(v["record"]["title"], v["current"]) for v in conflict["versions"]] == [
            ("Use Decimal", False), ("Use integer cents", True)]
    assert alice.state_hash() == bob.state_hash()


def test_sequential_edits_are_no_conflict(team_db: str, tmp_path: Path) -> None:
    alice, bob = mirror(tmp_path / "a"), mirror(tmp_path / "b")
    alice.put_record("memory", "m1", {"text": "run migrations with --plan first"})
    sync(alice, team_db)
    sync(bob, team_db)
    bob.put_record("memory", "m1", {"text": "run migrations with --plan first, always"})
    sync(bob, team_db)
    sync(alice, team_db)
    assert alice.conflicts() == []
    assert alice.record_current("memory", "m1")["record"]["text"].endswith("always")
    assert len(alice.records("memory")) == 1
