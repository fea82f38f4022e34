"""Fixtures: one indexed temporary repository and a real EngineService over it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp_support import make_repo
from service_support import indexed_service

from neuralmind.service.engine_service import EngineService


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("mcp") / "shop")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def service(repo: Path) -> AsyncIterator[EngineService]:
    """Indexed by the service's own background build (real tree-sitter, real model)."""
    async with indexed_service(repo) as svc:
        yield svc
