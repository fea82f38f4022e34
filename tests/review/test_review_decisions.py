"""Decisions at risk on the pending diff, and what the editor's code actions do: re-affirm
(the next scan keeps the decision ACTIVE), supersede, invalidate. Real git, real parser."""

from __future__ import annotations

from pathlib import Path

import pytest
from review_support import append, make_history
from sample_workspace import git

from neuralmind.engine import Workspace
from neuralmind.errors import InvalidArgument


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_history(tmp_path / "repo")


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)


def at_risk(ws: Workspace, **kwargs: object) -> list[dict]:
    return ws.review(**kwargs).to_json()["decisions_at_risk"]  # type: ignore[arg-type]


def pool_decision(ws: Workspace) -> str:
    return ws.decisions.record("Pool of four", "the database allows five connections",
                               symbols=["app/pool.py::Pool.size"]).id


def edit(root: Path, old: str, new: str, rel: str = "app/pool.py") -> None:
    p = root / rel
    assert old in p.read_text()
    p.write_text(p.read_text().replace(old, new))


def test_only_a_change_to_the_governed_symbol_puts_it_at_risk(ws: Workspace, root: Path) -> None:
    did = pool_decision(ws)
    edit(root, "return 'pool'", "return 'the pool'")              # another method
    edit(root, "# four: the database allows five", "# four (see the decision)")   # a comment
    assert at_risk(ws) == []
    edit(root, "return 4", "return 8")
    [risk] = at_risk(ws)
    assert risk == {"id": did, "title": "Pool of four", "file": "app/pool.py",
                    "symbol": "Pool.size", "line": 7, "end_line": 9,
                    "reason": "symbol Pool.size changed"}


def test_an_unsaved_buffer_is_checked_before_it_is_saved(ws: Workspace, root: Path) -> None:
    pool_decision(ws)
    buffer = (root / "app/pool.py").read_text().replace("return 4", "return 6")
    assert at_risk(ws) == []
    [risk] = at_risk(ws, buffers={"app/pool.py": buffer})
    assert risk["symbol"] == "Pool.size"


def test_a_file_level_decision_ignores_comment_only_changes(ws: Workspace, root: Path) -> None:
    did = ws.decisions.record("Sessions are dicts", "cheap to serialise",
                              files=["app/sessions.py"]).id
    append(root, "app/sessions.py", "# a note")
    assert at_risk(ws) == []
    edit(root, 'return {"user": user}', 'return {"user": user, "ttl": 60}', "app/sessions.py")
    [risk] = at_risk(ws)
    assert (risk["id"], risk["symbol"], risk["line"], risk["reason"]) == (
        did, None, 5, "code changed")


def test_reaffirmed_decisions_stay_active_through_the_commit(ws: Workspace, root: Path) -> None:
    did = pool_decision(ws)
    other = ws.decisions.record("Sizes are constants", "no config lookups in the hot path",
                                symbols=["app/pool.py::Pool.size"]).id
    previous = git(root, "rev-parse", "HEAD").strip()
    edit(root, "return 4", "return 4  # still four")
    edit(root, "# four: the database allows five", "n = 4\n        # the database allows five")
    assert [r["id"] for r in at_risk(ws)] == [did, other]
    record = ws.decisions.reaffirm(did, note="the limit is unchanged")
    assert record.status == "ACTIVE" and record.evidence[-1] == "Re-affirmed: the limit is unchanged"
    assert [r["id"] for r in at_risk(ws)] == [other]
    git(root, "commit", "-q", "-am", "pool: name the limit")
    ws.scan_commits(previous)
    assert ws.decisions.get(did).status == "ACTIVE"
    assert ws.decisions.get(other).status == "STALE"            # not re-affirmed
    edit(root, "return 4", "return 3")                            # a later change: at risk again
    assert [r["id"] for r in at_risk(ws)] == [did]


def test_a_stale_decision_is_restored_not_reaffirmed(ws: Workspace, root: Path) -> None:
    did = pool_decision(ws)
    ws.decisions.invalidate(did, "gone")
    with pytest.raises(InvalidArgument):
        ws.decisions.reaffirm(did)


def test_supersede_links_both_and_leaves_the_new_one_governing(ws: Workspace, root: Path) -> None:
    old = pool_decision(ws)
    edit(root, "return 4", "return 8")
    new, before = ws.decisions.supersede(old, "Pool of eight", "the database now allows ten")
    assert before.status == "INVALIDATED"
    assert before.evidence[-1] == f"Invalidated: superseded by {new.id}: Pool of eight"
    assert new.status == "ACTIVE" and new.evidence == [f"Supersedes {old}: Pool of four"]
    assert new.symbols_affected == ["app/pool.py::Pool.size"]
    assert at_risk(ws) == []       # the new decision was recorded on this very content
