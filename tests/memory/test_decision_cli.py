"""`neuralmind decisions ...` and `neuralmind init-hook`, in-process and through a real git hook."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from decision_helpers import POOL_PY, commit_all, git, write

from neuralmind.cli.main import main
from neuralmind.memory.decisions.store import DecisionStore


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _record(capsys: pytest.CaptureFixture[str], repo: Path, title: str, rationale: str, *extra: str) -> str:
    code, out, _ = run(capsys, "decisions", "record", str(repo), "--title", title, "--rationale",
                       rationale, "--json", *extra)
    assert code == 0
    return json.loads(out)["id"]


def test_record_and_query_name_the_mode(repo: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEURALMIND_DECISION_SEARCH", "keyword")
    _record(capsys, repo, "Pool database connections", "Connects cost 40 ms.", "--files", "pool.py",
            "--symbols", "pool.py::Pool.acquire", "--rejected", "connect per request", "--tags", "perf")
    code, out, _ = run(capsys, "decisions", "query", "how do we pool connections?", str(repo))
    assert code == 0
    assert out.startswith('# NeuralMind Decisions Query: "how do we pool connections?" (keyword)')
    assert "Pool database connections" in out and "pool.py::Pool.acquire" in out
    code, out, _ = run(capsys, "decisions", "query", "kubernetes", str(repo))
    assert out.strip() == "No decisions found for: kubernetes (keyword search)"
    code, out, err = run(capsys, "decisions", "query", "pool", str(repo), "--json", "--status", "all")
    assert "[neuralmind] search mode: keyword" in err
    records = json.loads(out)
    assert records[0]["title"] == "Pool database connections" and "score" in records[0]


def test_query_semantic_without_model_exits_1_and_hybrid_falls_back(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _record(capsys, repo, "Pool database connections", "Connects cost 40 ms.")
    empty = tmp_path / "no-model"
    empty.mkdir()
    monkeypatch.setenv("NEURALMIND_MODEL_DIR", str(empty))
    monkeypatch.delenv("NEURALMIND_DECISION_SEARCH", raising=False)
    code, out, err = run(capsys, "decisions", "query", "pool", str(repo), "--mode", "semantic")
    assert code == 1 and out == "" and "model" in err and "Traceback" not in err
    code, out, err = run(capsys, "decisions", "query", "pool", str(repo))
    assert code == 0 and "(keyword)" in out
    assert "semantic ranking unavailable" in err and "keyword results only" in err


def test_bad_arguments_are_usage_errors(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "decisions", "query", "pool", str(repo), "--status", "gone", "--mode", "keyword")
    assert code == 2 and "unknown status" in err
    code, _, err = run(capsys, "decisions", "query", "pool", str(repo), "--mode", "fuzzy")
    assert code == 2 and "unknown search mode" in err
    code, _, err = run(capsys, "decisions", "record", str(repo), "--title", "t", "--rationale", "r",
                       "--confidence", "7")
    assert code == 2 and "confidence" in err
    code, _, err = run(capsys, "decisions", "invalidate", "nosuchid", str(repo), "--reason", "x")
    assert code == 1 and "no decision" in err


def test_lifecycle_audit_amend_invalidate_restore(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _record(capsys, repo, "Pool database connections", "Connects cost 40 ms.", "--files", "pool.py")
    b = _record(capsys, repo, "Short readme", "Docs elsewhere.", "--files", "README.md")
    DecisionStore(repo).import_text(json.dumps([{"id": "orphan01", "title": "Orphaned", "rationale": "r",
                                                 "commit_sha": "ab" * 20}]))
    assert run(capsys, "decisions", "amend", a, str(repo), "--evidence", "bench run")[0] == 0
    assert run(capsys, "decisions", "invalidate", b, str(repo), "--reason", "docs moved")[0] == 0
    code, out, _ = run(capsys, "decisions", "audit", str(repo), "--format", "json")
    records = json.loads(out)
    assert code == 0 and {r["id"] for r in records} == {a, b, "orphan01"}
    assert all({"id", "title", "status", "rationale", "evidence"} <= set(r) for r in records)
    by_id = {r["id"]: r for r in records}
    assert by_id[b]["status"] == "INVALIDATED" and by_id[b]["evidence"][-1] == "Invalidated: docs moved"
    assert by_id[a]["evidence"] == ["bench run"]
    code, out, _ = run(capsys, "decisions", "audit", str(repo), "--orphaned", "--format", "json")
    assert [r["id"] for r in json.loads(out)] == ["orphan01"]
    code, out, _ = run(capsys, "decisions", "restore", b, str(repo), "--json")
    assert json.loads(out)["status"] == "ACTIVE" and json.loads(out)["commit_sha"] == git(repo, "rev-parse", "HEAD")
    code, out, _ = run(capsys, "decisions", "audit", str(repo))
    assert code == 0 and "Orphaned (orphaned)" in out


def test_scan_json_and_quiet(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _record(capsys, repo, "Pool database connections", "Connects cost 40 ms.", "--files", "pool.py")
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    head = commit_all(repo, "change")
    code, out, _ = run(capsys, "decisions", "scan", str(repo), "--json")
    report = json.loads(out)
    assert code == 0 and report["commit"] == head and [o["id"] for o in report["stale"]] == [a]
    code, out, err = run(capsys, "decisions", "scan", str(repo), "--quiet")
    assert code == 0 and out == ""                               # nothing new went stale
    code, _, err = run(capsys, "decisions", "scan", str(repo.parent))
    assert code == 1 and "not inside a git repository" in err and "Traceback" not in err


def test_export_import_through_the_cli(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _record(capsys, repo, "Pool database connections", "Connects cost 40 ms.", "--rejected", "per request")
    for fmt in ("json", "md"):
        out_file = tmp_path / f"export.{fmt}"
        assert run(capsys, "decisions", "export", str(repo), "--format", fmt, "--output", str(out_file))[0] == 0
        dest = tmp_path / f"dest-{fmt}"
        dest.mkdir()
        code, out, _ = run(capsys, "decisions", "import", str(out_file), str(dest), "--json")
        assert code == 0 and json.loads(out)["imported"] == 1
        code, out, _ = run(capsys, "decisions", "import", str(out_file), str(dest), "--json")
        assert json.loads(out)["imported"] == 0 and json.loads(out)["skipped"] == 1
    code, _, err = run(capsys, "decisions", "import", str(tmp_path / "missing.json"), str(repo))
    assert code == 2 and "cannot read" in err


def test_init_hook_is_idempotent_and_preserves_existing_content(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.write_text("#!/bin/sh\necho existing-hook-ran >> hook.log\n", encoding="utf-8")
    code, out, _ = run(capsys, "init-hook", str(repo), "--json")
    assert code == 0 and json.loads(out)["action"] == "added"
    first = hook.read_text(encoding="utf-8")
    assert first.startswith("#!/bin/sh\necho existing-hook-ran >> hook.log\n")
    assert first.count("--quiet") == 2 and first.count(">>> neuralmind decisions scan (.) >>>") == 1
    assert os.access(hook, os.X_OK)
    code, out, _ = run(capsys, "init-hook", str(repo), "--json")
    assert json.loads(out)["action"] == "unchanged" and hook.read_text(encoding="utf-8") == first
    code, _, err = run(capsys, "init-hook", str(repo.parent))
    assert code == 1 and "not inside a git repository" in err
    write(repo, "README.md", "# changed\n")
    commit_all(repo, "runs the old hook too")
    assert (repo / "hook.log").read_text(encoding="utf-8") == "existing-hook-ran\n"


def test_commit_runs_the_hook_and_marks_stale(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(repo, "svc/app.py", "def main():\n    return 0\n")
    commit_all(repo, "add svc")
    project = repo / "svc"                                       # a project below the toplevel too
    assert run(capsys, "init-hook", str(repo))[0] == 0
    assert run(capsys, "init-hook", str(project))[0] == 0
    top = _record(capsys, repo, "Pool database connections", "Connects cost 40 ms.", "--files", "pool.py")
    sub = _record(capsys, project, "App entry point", "main returns 0.", "--files", "app.py")
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    write(repo, "svc/app.py", "def main():\n    return 1\n")
    commit_all(repo, "change both")                             # the post-commit hook runs the scans
    assert DecisionStore(repo).get(top).status == "STALE"
    assert DecisionStore(project).get(sub).status == "STALE"


def test_store_from_a_newer_version_is_one_line_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    (tmp_path / ".neuralmind").mkdir()
    conn = sqlite3.connect(tmp_path / ".neuralmind" / "memory.db")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '99')")
    conn.commit()
    conn.close()
    code, _, err = run(capsys, "decisions", "query", "x", str(tmp_path), "--mode", "keyword")
    assert code == 1 and "schema version 99" in err and "Traceback" not in err


def test_path_may_follow_the_options(repo: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`decisions invalidate ID --reason R PATH`: the PATH after the options is the workspace,
    not an unrecognized argument; a second stray word is still refused."""
    monkeypatch.chdir(repo.parent)
    a = _record(capsys, repo, "Pool database connections", "Connects cost 40 ms.", "--files", "pool.py")
    with pytest.raises(SystemExit) as exited:
        run(capsys, "decisions", "invalidate", a, "--reason", "moved", str(repo), "extra")
    assert exited.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err
    assert run(capsys, "decisions", "invalidate", a, "--reason", "moved", str(repo))[0] == 0
    code, out, _ = run(capsys, "decisions", "audit", "--format", "json", str(repo))
    assert code == 0 and {r["id"]: r["status"] for r in json.loads(out)}[a] == "INVALIDATED"
