"""The review's missed files on a real git history: counts, the threshold, the change set
(untracked, deleted, unsaved, a base branch), learned editing sessions, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from review_support import append, make_history
from sample_workspace import git

from neuralmind.engine import Workspace
from neuralmind.errors import EngineError, InvalidArgument


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_history(tmp_path / "repo")


def missing(ws: Workspace, **kwargs: object) -> dict[str, dict]:
    return {m["file"]: m for m in ws.review(**kwargs).to_json()["missing"]}  # type: ignore[arg-type]


def test_a_partner_left_out_is_named_with_its_counts(root: Path) -> None:
    append(root, "app/sessions.py", "# pending")
    out = Workspace(root).review().to_json()
    assert out["changed_files"] == ["app/sessions.py"] and out["base_ref"] == "HEAD"
    assert out["base"] == git(root, "rev-parse", "HEAD").strip()
    [m] = out["missing"]
    assert m["file"] == "tests/test_sessions.py"
    assert m["because"] == [{"changed_file": "app/sessions.py", "together": 5, "of": 7,
                             "source": "commits"}]
    assert m["confidence"] == 0.625            # 5 / (7 + 1)


def test_the_threshold_keeps_weak_partners_quiet(root: Path) -> None:
    append(root, "app/sessions.py", "# pending")
    ws = Workspace(root)
    assert "app/models.py" not in missing(ws)                     # 2 of 7: 0.25
    weak = missing(ws, min_confidence=0.2)["app/models.py"]
    assert weak["confidence"] == 0.25 and weak["because"][0]["together"] == 2
    with pytest.raises(InvalidArgument):
        ws.review(min_confidence=1.5)


def test_touching_the_partner_too_silences_the_warning(root: Path) -> None:
    append(root, "app/sessions.py", "# pending")
    append(root, "tests/test_sessions.py", "# pending")
    assert missing(Workspace(root)) == {}


def test_an_unsaved_buffer_counts_as_changed(root: Path) -> None:
    out = Workspace(root).review(buffers={str(root / "app/sessions.py"): None}).to_json()
    assert out["changed_files"] == [] and out["unsaved_files"] == ["app/sessions.py"]
    assert [m["file"] for m in out["missing"]] == ["tests/test_sessions.py"]


def test_untracked_and_deleted_files_are_part_of_the_change(root: Path) -> None:
    (root / "app" / "new_feature.py").write_text("x = 1\n")
    (root / "app" / "models.py").unlink()
    ws = Workspace(root)
    ws.synapses.stats()                        # creates .neuralmind/: never part of a change
    out = ws.review().to_json()
    assert out["changed_files"] == ["app/models.py", "app/new_feature.py"]


def test_a_base_branch_is_reviewed_as_its_pull_request(root: Path) -> None:
    git(root, "checkout", "-q", "-b", "feature")
    append(root, "app/sessions.py", "# committed on the branch")
    git(root, "commit", "-q", "-am", "branch work")
    ws = Workspace(root)
    assert ws.review().to_json()["changed_files"] == []          # clean against HEAD
    out = ws.review(base="main").to_json()
    assert out["changed_files"] == ["app/sessions.py"] and out["base_ref"] == "main"
    assert out["base"] == git(root, "rev-parse", "main").strip()
    assert [m["file"] for m in out["missing"]] == ["tests/test_sessions.py"]


def test_bad_bases_and_no_git_are_clear_errors(root: Path, tmp_path: Path) -> None:
    ws = Workspace(root)
    for bad in ("no-such-branch", "--output=/tmp/x"):
        with pytest.raises(InvalidArgument):
            ws.review(base=bad)
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(EngineError) as e:
        Workspace(plain).review()
    assert e.value.code == "git_error"


def test_learned_editing_sessions_warn_without_commit_history(root: Path) -> None:
    ws = Workspace(root)
    layer = ws.synapses
    for i in range(3):                         # pool and models edited together three times
        for kind, rel in (("open", "app/pool.py"), ("edit", "app/pool.py"),
                          ("edit", "app/models.py"), ("save", "app/models.py")):
            layer.editing_event(f"s{i}", kind, rel)
        layer.editing_event(f"s{i}", "session_end")
    append(root, "app/pool.py", "# pending")
    m = missing(ws)["app/models.py"]
    assert m["because"][0] == {"changed_file": "app/pool.py", "together": 3, "of": 3,
                               "source": "sessions"}
    assert m["confidence"] == 0.75
