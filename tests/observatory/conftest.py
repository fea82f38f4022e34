"""Fixtures: the observed workspace, indexed by a real EngineService, served on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from observatory_support import make_observed_repo
from service_support import indexed_service

from neuralmind.mcp.http import McpEndpoint, serve_http
from neuralmind.service.engine_service import EngineService


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_observed_repo(tmp_path_factory.mktemp("observatory") / "shop")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def service(repo: Path) -> AsyncIterator[EngineService]:
    """Indexed by the service's own background build (real tree-sitter, real model)."""
    async with indexed_service(repo) as svc:
        yield svc


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def endpoint(service: EngineService) -> AsyncIterator[McpEndpoint]:
    ep = await serve_http(service, write_discovery_file=False)
    yield ep
    await ep.stop()
