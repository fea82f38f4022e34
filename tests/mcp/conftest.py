"""Fixtures: one indexed temporary repository and a real EngineService over it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp_support import make_repo

from neuralmind.service.core import EngineService


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("mcp") / "shop")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def service(repo: Path) -> AsyncIterator[EngineService]:
    """Built in-process (real tree-sitter, real model), no HEAD watcher."""
    svc = EngineService(repo, build_in_process=True)
    await svc.start(index=True, watch_head=False)
    assert svc._build_task is not None
    await svc._build_task
    yield svc
    await svc.close()
