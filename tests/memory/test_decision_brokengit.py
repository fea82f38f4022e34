"""Broken or unusual git states degrade to a clear message and never change a status."""

from __future__ import annotations

from pathlib import Path

from decision_helpers import POOL_PY, commit_all, git, write

from neuralmind.memory.decisions.store import DecisionStore


def _remove_loose_object(repo: Path, sha: str) -> None:
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()


def _snapshot(store: DecisionStore) -> list[dict]:
    return [d.to_json() for d in store.decisions()]


def test_no_repository(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    d = store.record("Outside git", "No repository here.", files=["a.py"])
    assert d.commit_sha is None and d.fingerprints == {}
    before = _snapshot(store)
    report = store.scan()
    assert "not inside a git repository" in report.error
    assert "no decision status was changed" in report.notices
    assert _snapshot(store) == before


def test_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    store = DecisionStore(tmp_path)
    store.record("Early", "Before the first commit.", files=["a.py"])
    assert "no commits" in store.scan().error


def test_detached_head_is_scanned_with_a_notice(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Pool connections", "Costly connects.", files=["pool.py"])
    git(repo, "checkout", "-q", "--detach")
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    head = commit_all(repo, "detached change")
    report = store.scan()
    assert report.error == "" and report.branch is None
    assert any("detached" in n for n in report.notices)
    assert report.commit == head and store.get(d.id).status == "STALE"


def test_shallow_clone_boundary(repo: Path, tmp_path: Path) -> None:
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    commit_all(repo, "second")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    store = DecisionStore(clone)
    store.record("Pool connections", "Costly connects.", files=["pool.py"], commit="HEAD")
    store.amend(store.decisions()[0].id, rationale="anchored elsewhere")
    before = _snapshot(store)
    report = store.scan()
    assert "shallow clone" in report.error and "unshallow" in report.error
    assert _snapshot(store) == before


def test_missing_parent_commit_object(repo: Path) -> None:
    parent = git(repo, "rev-parse", "HEAD")
    store = DecisionStore(repo)
    d = store.record("Pool connections", "Costly connects.", files=["pool.py"])
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    commit_all(repo, "second")
    _remove_loose_object(repo, parent)
    report = store.scan()
    assert report.error and parent[:12] in report.error
    assert store.get(d.id).status == "ACTIVE"


def test_missing_blob_aborts_the_whole_scan(repo: Path) -> None:
    store = DecisionStore(repo)
    plain = store.record("Readme", "Any change counts.", files=["README.md"])
    symbolic = store.record("Acquire", "Bounded wait.", symbols=["pool.py::Pool.acquire"])
    old_blob = git(repo, "rev-parse", "HEAD:pool.py")
    write(repo, "README.md", "# changed\n")
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    commit_all(repo, "both")
    _remove_loose_object(repo, old_blob)                      # symbol mapping cannot read the old side
    report = store.scan()
    assert report.error and report.stale == []
    # the README decision would have gone STALE: on partial information nothing changes
    assert store.get(plain.id).status == "ACTIVE" and store.get(symbolic.id).status == "ACTIVE"


def test_restore_to_an_unknown_commit_is_a_clear_error(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Pool connections", "Costly connects.", files=["pool.py"])
    store.invalidate(d.id, "testing")
    try:
        store.restore(d.id, commit="f" * 40)
    except Exception as e:  # noqa: BLE001 - the type and message are what is checked
        assert type(e).__name__ == "GitError" and "not in this repository" in str(e)
    else:
        raise AssertionError("restore to an unknown commit succeeded")
    assert store.get(d.id).status == "INVALIDATED"
