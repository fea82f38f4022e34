"""A scan while a rebase is stopped on a conflict names the rebase, not just "detached HEAD",
for both rebase backends (`.git/rebase-merge` and `.git/rebase-apply`), and changes no status."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from decision_helpers import GIT_ENV, POOL_PY, commit_all, git, write

from neuralmind.memory.decisions.store import DecisionStore


@pytest.mark.parametrize(("backend", "state_dir"), [("--merge", "rebase-merge"),
                                                   ("--apply", "rebase-apply")])
def test_scan_mid_rebase_says_a_rebase_is_in_progress(repo: Path, backend: str,
                                                      state_dir: str) -> None:
    store = DecisionStore(repo)
    d = store.record("Acquire waits with a timeout", "Callers must never hang.",
                     files=["pool.py"])
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, "pool.py", POOL_PY.replace("# wait at most", "# feature: wait at most"))
    commit_all(repo, "feature comment")
    git(repo, "checkout", "-q", "main")
    write(repo, "pool.py", POOL_PY.replace("# wait at most", "# main: wait at most"))
    commit_all(repo, "main comment")
    git(repo, "checkout", "-q", "feature")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    stopped = subprocess.run(["git", "-C", str(repo), "rebase", backend, "main"], env=env,
                             capture_output=True, text=True)
    assert stopped.returncode != 0 and (repo / ".git" / state_dir).is_dir(), stopped.stderr
    assert "<<<<<<<" in (repo / "pool.py").read_text(encoding="utf-8")

    report = store.scan()
    assert report.error == "" and report.branch is None
    assert any(n.startswith("a rebase of feature is in progress") for n in report.notices), \
        report.notices
    assert not any(n.startswith("HEAD is detached") for n in report.notices)
    assert report.stale == [] and store.get(d.id).status == "ACTIVE"   # a comment-only change
    assert [o.id for o in report.touched] == [d.id]


def test_plain_detached_head_is_not_called_a_rebase(repo: Path) -> None:
    store = DecisionStore(repo)
    store.record("Pool connections", "Costly connects.", files=["pool.py"])
    git(repo, "checkout", "-q", "--detach")
    report = store.scan()
    assert any(n.startswith("HEAD is detached") for n in report.notices), report.notices
    assert not any("rebase" in n for n in report.notices)
