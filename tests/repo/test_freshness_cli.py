"""`neuralmind query|search --json` carry the freshness stamp, asked of git and the disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sample_workspace import git, make_repo

from neuralmind.cli.main import main


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_answers_are_stamped_and_name_what_is_not_indexed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "shop")
    assert main(["build", str(repo), "--json"]) == 0
    capsys.readouterr()
    out = _json(capsys, "query", "invoice total with tax", str(repo), "--json")
    fresh = out["freshness"]
    assert fresh["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert fresh["index_generation"] >= 1
    assert fresh["dirty_files"] == fresh["pending_files"] == fresh["unsaved_files"] == []
    assert not any(h["stale"] for h in out["hits"])

    billing = repo / "app" / "billing.py"
    billing.write_text(billing.read_text() + "\n\ndef apply_discount(total):\n    return total\n")
    (repo / "notes.txt").write_text("not code\n")
    out = _json(capsys, "search", "invoice total", str(repo), "--json")
    assert out["freshness"]["dirty_files"] == ["app/billing.py", "notes.txt"]
    assert out["freshness"]["pending_files"] == ["app/billing.py"]   # notes.txt is never indexed
    assert {h["file"] for h in out["hits"] if h["stale"]} == {"app/billing.py"}
    assert main(["search", "invoice total", str(repo)]) == 0
    err = capsys.readouterr().err
    assert "stale hits (changed since indexed): app/billing.py" in err
    assert "1 changed files not indexed" in err

    assert main(["build", str(repo)]) == 0
    capsys.readouterr()
    out = _json(capsys, "search", "invoice total", str(repo), "--json")
    assert out["freshness"]["pending_files"] == [] and not any(h["stale"] for h in out["hits"])
    assert out["freshness"]["dirty_files"] == ["app/billing.py", "notes.txt"]


def test_outside_git_the_stamp_has_no_head(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "mod.py").write_text("def lonely_function():\n    return 1\n")
    out = _json(capsys, "search", "lonely function", str(tmp_path / "plain"), "--json")
    assert out["freshness"]["head"] is None and out["freshness"]["dirty_files"] == []
    assert out["hits"][0]["stale"] is False


def test_cli_answers_are_recorded_and_savings_report_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "shop")
    assert main(["build", str(repo), "--json"]) == 0
    capsys.readouterr()
    served = _json(capsys, "query", "invoice total with tax", str(repo), "--json")["tokens"]
    _json(capsys, "search", "password reset", str(repo), "--json")
    report = _json(capsys, "savings", str(repo), "--json")
    overall = report["overall"]
    assert overall["answers"] == 2 and overall["by_kind"] == {"context": 1, "search": 1}
    assert overall["tokens_served"] > served > 0
    assert overall["codebase_tokens"] == 2 * report["codebase_tokens_now"] > 0
    assert overall["settled"] == 0 and overall["precision_at_5"] is None   # use not known yet
    assert main(["savings", str(repo)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("| day | answers | tokens_served")
    assert "| overall | 2 |" in out
