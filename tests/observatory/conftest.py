"""Fixtures: the observed workspace, indexed by a real EngineService, served on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from observatory_support import make_observed_repo
from sample_workspace import eventually

from neuralmind.mcp.http import McpEndpoint, serve_http
from neuralmind.service.engine_service import EngineService


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_observed_repo(tmp_path_factory.mktemp("observatory") / "shop")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def service(repo: Path) -> AsyncIterator[EngineService]:
    svc = EngineService(repo)
    await svc.start(index=True, watch_head=False)

    async def indexed() -> bool:
        status = await svc.status()
        return status["embedded_nodes"] > 0 and status["indexing"] is None

    await eventually(indexed, 120, "the first index")
    yield svc
    await svc.close()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def endpoint(service: EngineService) -> AsyncIterator[McpEndpoint]:
    ep = await serve_http(service, write_discovery_file=False)
    yield ep
    await ep.stop()
