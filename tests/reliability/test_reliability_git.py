"""Git oddities under `decisions scan`: a repository mid-rebase (detached, conflicted) and a
huge merge commit. Scans say what they saw; a status changes only on complete information.
(Detached HEAD, shallow clones and missing objects: tests/memory/test_decision_brokengit.py.)"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from reliability_support import ENV, cli, git

from neuralmind.memory.decisions.store import DecisionStore


def _record(root: Path) -> str:
    return DecisionStore(root).record("mod001 helper stays pure", "Audits replay it.",
                                      files=["pkg/mod001.py"]).id


def _scan(root: Path) -> dict:
    done = cli("decisions", "scan", str(root), "--json")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


def _status(root: Path, rid: str) -> str:
    return DecisionStore(root).get(rid).status


def test_scan_mid_rebase_names_the_state_and_judges_only_real_commits(small_repo: Path) -> None:
    rid = _record(small_repo)
    git(small_repo, "checkout", "-qb", "feature")
    mod = small_repo / "pkg/mod001.py"
    mod.write_text(mod.read_text(encoding="utf-8") + "\n# feature note\n", encoding="utf-8")
    git(small_repo, "commit", "-qam", "feature")
    git(small_repo, "checkout", "-q", "main")
    mod.write_text(mod.read_text(encoding="utf-8") + "\n# main note\n", encoding="utf-8")
    git(small_repo, "commit", "-qam", "main")
    git(small_repo, "checkout", "-q", "feature")
    conflict = subprocess.run(["git", "rebase", "main"], cwd=small_repo, env=ENV,
                              capture_output=True, text=True)
    assert conflict.returncode != 0 and (small_repo / ".git/rebase-merge").exists()
    assert b"<<<<<<<" in mod.read_bytes()                # the work tree is conflicted

    out = _scan(small_repo)
    assert out["error"] == "" and any("detached" in n for n in out["notices"]), out
    assert out["stale"] == [] and _status(small_repo, rid) == "ACTIVE"   # comments only
    assert rid in [t["id"] for t in out["touched"]]


def test_scan_of_a_huge_merge_commit(small_repo: Path) -> None:
    rid = _record(small_repo)
    git(small_repo, "checkout", "-qb", "big")
    gen = small_repo / "generated"
    gen.mkdir()
    for i in range(3000):
        (gen / f"g{i:04d}.py").write_text(f"VALUE_{i} = {i}\n", encoding="utf-8")
    mod = small_repo / "pkg/mod001.py"
    mod.write_text(mod.read_text(encoding="utf-8").replace(
        "return helper_", "return 2 * helper_"), encoding="utf-8")
    git(small_repo, "add", "-A")
    git(small_repo, "commit", "-qm", "big change")
    git(small_repo, "checkout", "-q", "main")
    git(small_repo, "merge", "-q", "--no-ff", "-m", "merge big", "big")

    started = time.monotonic()
    out = _scan(small_repo)
    took = time.monotonic() - started
    assert out["error"] == "", out
    assert len(out["changed"]) == 3001 or "pkg/mod001.py" in out["changed"]
    assert rid in [s["id"] for s in out["stale"]], out["stale"]
    assert _status(small_repo, rid) == "STALE"
    assert took < 60, took
