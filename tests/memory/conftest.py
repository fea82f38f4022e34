"""Fixtures for the decision tests: real git repositories and the real embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest
from decision_helpers import GIT_ENV, POOL_PY, commit_all, git, write

from neuralmind.memory.search import get_embedder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit holding a small Python file and a README."""
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    write(r, "pool.py", POOL_PY)
    write(r, "README.md", "# demo\n")
    commit_all(r, "initial")
    return r


@pytest.fixture(autouse=True)
def _isolated_git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's own git calls use the same fixed identity and no user config."""
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)


@pytest.fixture(scope="session")
def model() -> object:
    """The real embedder, loaded once per session (the tests that need it fail without it)."""
    return get_embedder()
