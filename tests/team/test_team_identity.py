"""Repository identity, DSN secrets and the `team_dsn` line of .neuralmind.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from conftest import clone
from sample_workspace import git

from neuralmind.config import load_workspace_config
from neuralmind.errors import EngineError
from neuralmind.team import dsn as dsn_mod
from neuralmind.team import settings
from neuralmind.team.identity import normalise_remote, repo_identity


@pytest.mark.parametrize("url", [
    "git@github.com:Team/App.git", "ssh://git@github.com/Team/App", "ssh://git@github.com:22/Team/App.git",
    "https://github.com/Team/App", "https://alice:s3cret@GitHub.com/Team/App.git/",
])
def test_remote_spellings_of_one_repository_are_one_identity(url: str) -> None:
    assert normalise_remote(url) == "github.com/Team/App"


def test_local_path_remotes_are_kept() -> None:
    assert normalise_remote("/srv/git/app.git") == "/srv/git/app.git"
    assert normalise_remote("") == ""


def test_two_clones_share_the_identity_and_a_fork_does_not(origin: Path, tmp_path: Path) -> None:
    a, b = clone(origin, tmp_path / "a"), clone(origin, tmp_path / "b")
    git(b, "checkout", "-q", "-b", "feature")
    (b / "new.py").write_text("x = 1\n")
    git(b, "add", "-A")
    git(b, "commit", "-qm", "feature")
    for c in (a, b):
        git(c, "remote", "set-url", "origin", "https://example.com/team/shop.git")
    ia, ib = repo_identity(a), repo_identity(b)
    assert ia == ib
    assert ia.first_commit == git(origin, "rev-list", "--max-parents=0", "HEAD").strip()
    assert ia.remote == "example.com/team/shop"
    git(b, "remote", "set-url", "origin", "https://example.com/someone/fork.git")
    assert repo_identity(b) != ia


def test_no_repository_no_commit_and_shallow_clones_are_refused(origin: Path,
                                                                 tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(EngineError, match="not a git repository"):
        repo_identity(plain)
    git(plain, "init", "-q")
    with pytest.raises(EngineError, match="no commit"):
        repo_identity(plain)
    (origin / "more.txt").write_text("more\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "second")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(shallow))
    with pytest.raises(EngineError, match="shallow"):
        repo_identity(shallow)


def test_a_dsn_with_a_password_is_never_stored() -> None:
    with pytest.raises(EngineError, match="pgpass"):
        dsn_mod.storable("postgresql://alice:hunter2@db.example/team")
    with pytest.raises(EngineError, match="pgpass"):
        dsn_mod.storable("host=db.example user=alice password=hunter2 dbname=team")
    assert dsn_mod.storable(" postgresql://alice@db.example/team?sslmode=require ") == \
        "postgresql://alice@db.example/team?sslmode=require"
    assert "hunter2" not in dsn_mod.redact("postgresql://alice:hunter2@db.example/team")
    with pytest.raises(EngineError, match="not a PostgreSQL DSN"):
        dsn_mod.parse("host=db port")


def test_the_environment_dsn_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEURALMIND_TEAM_DSN", raising=False)
    assert dsn_mod.resolve("") is None
    assert dsn_mod.resolve("host=a").source == ".neuralmind.toml"
    monkeypatch.setenv("NEURALMIND_TEAM_DSN", "host=b")
    found = dsn_mod.resolve("host=a")
    assert (found.dsn, found.source) == ("host=b", "environment")


def test_team_dsn_line_is_set_and_removed_keeping_the_rest(tmp_path: Path) -> None:
    toml = tmp_path / ".neuralmind.toml"
    toml.write_text('# my settings\nbudget = 900\nexclude = ["a/**"]  # keep\n\n[project]\nname = "x"\n')
    settings.write_dsn(tmp_path, "postgresql://alice@db/team?sslmode=require")
    text = toml.read_text()
    assert "# my settings" in text and "# keep" in text
    data = tomllib.loads(text)
    assert data["team_dsn"] == "postgresql://alice@db/team?sslmode=require"
    assert data["budget"] == 900 and data["project"] == {"name": "x"}
    assert load_workspace_config(tmp_path).team_dsn == "postgresql://alice@db/team?sslmode=require"
    settings.write_dsn(tmp_path, "host=other")          # replaced, not duplicated
    assert toml.read_text().count("team_dsn") == 1
    settings.write_dsn(tmp_path, None)
    assert "team_dsn" not in tomllib.loads(toml.read_text())
    assert tomllib.loads(toml.read_text())["budget"] == 900


def test_team_dsn_goes_into_the_neuralmind_table_when_the_file_has_one(tmp_path: Path) -> None:
    toml = tmp_path / ".neuralmind.toml"
    toml.write_text("[neuralmind]\nbudget = 700\n")
    settings.write_dsn(tmp_path, 'host=db dbname="a b"')
    assert tomllib.loads(toml.read_text())["neuralmind"] == {"budget": 700,
                                                              "team_dsn": 'host=db dbname="a b"'}
    assert settings.read_dsn(tmp_path) == 'host=db dbname="a b"'


def test_a_broken_toml_is_not_touched(tmp_path: Path) -> None:
    toml = tmp_path / ".neuralmind.toml"
    toml.write_text("budget = = 3\n")
    with pytest.raises(EngineError, match="not valid TOML"):
        settings.write_dsn(tmp_path, "host=db")
    assert toml.read_text() == "budget = = 3\n"
