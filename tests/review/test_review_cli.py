"""`neuralmind review` and `neuralmind decisions reaffirm | supersede` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from review_support import append, make_history
from sample_workspace import GIT_ENV

CLI = [sys.executable, "-m", "neuralmind.cli.main"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, timeout=120)


def test_review_prints_what_is_missed_and_what_is_at_risk(tmp_path: Path) -> None:
    root = make_history(tmp_path / "repo")
    record = json.loads(run("decisions", "record", ".", "--title", "Pool of four", "--rationale",
                            "five allowed", "--symbols", "app/pool.py::Pool.size", "--json",
                            cwd=root).stdout)
    append(root, "app/sessions.py", "# pending")
    (root / "app/pool.py").write_text((root / "app/pool.py").read_text().replace("return 4", "return 8"))
    text = run("review", cwd=root)
    assert text.returncode == 0, text.stderr
    assert "- tests/test_sessions.py (0.62): usually changes with app/sessions.py (5 of 7 commits)" \
        in text.stdout
    assert f"governed by 'Pool of four' (id {record['id']}): symbol Pool.size changed" in text.stdout
    out = json.loads(run("review", "--json", "--min-confidence", "0.2", cwd=root).stdout)
    assert {m["file"] for m in out["missing"]} >= {"tests/test_sessions.py", "app/models.py"}

    assert run("decisions", "reaffirm", record["id"], ".", cwd=root).returncode == 0
    assert json.loads(run("review", "--json", cwd=root).stdout)["decisions_at_risk"] == []
    new = json.loads(run("decisions", "supersede", record["id"], ".", "--title", "Pool of eight",
                         "--rationale", "ten allowed", "--json", cwd=root).stdout)
    assert new["evidence"] == [f"Supersedes {record['id']}: Pool of four"]
    bad = run("review", "--base", "no-such-ref", cwd=root)
    assert bad.returncode == 2 and "no-such-ref" in bad.stderr
    outside = run("review", str(tmp_path), cwd=root)
    assert outside.returncode == 1 and "not inside a git repository" in outside.stderr
