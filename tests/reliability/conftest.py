"""One built 200-file repository per session; tests that write get their own copy."""

from __future__ import annotations

from pathlib import Path

import pytest
from reliability_support import cli, make_repo, private_copy


@pytest.fixture(scope="session")
def built_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_repo(tmp_path_factory.mktemp("reliability") / "shop")
    done = cli("build", str(root), timeout=300)
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def repo(built_repo: Path, tmp_path: Path) -> Path:
    """A private copy of the built repository (see `private_copy`)."""
    return private_copy(built_repo, tmp_path / "shop")


@pytest.fixture(scope="session")
def small_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20 modules, built, with two recorded decisions and learned synapses: every store exists."""
    from neuralmind.engine import Workspace

    root = make_repo(tmp_path_factory.mktemp("reliability-small") / "shop", n_files=20)
    ws = Workspace(root)
    ws.build()
    for i in range(2):
        ws.decisions.record(f"Invoices rule {i} stays", "Audits need it.", files=[f"pkg/mod00{i}.py"])
    ws.feedback("pkg/mod001.py::helper_1", True, ["pkg/mod002.py"])
    ws.synapses.close()
    return root


@pytest.fixture
def small_repo(small_built: Path, tmp_path: Path) -> Path:
    return private_copy(small_built, tmp_path / "small")
