"""One built 200-file repository per session; tests that write get their own copy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from reliability_support import cli, make_repo


@pytest.fixture(scope="session")
def built_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_repo(tmp_path_factory.mktemp("reliability") / "shop")
    done = cli("build", str(root), timeout=300)
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def repo(built_repo: Path, tmp_path: Path) -> Path:
    """A private copy (sources, .git and .neuralmind, mtimes kept) of the built repository."""
    dest = tmp_path / "shop"
    shutil.copytree(built_repo, dest, symlinks=True)
    return dest
