"""Fixtures shared by the service tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from sample_workspace import make_repo

from neuralmind.engine import Workspace
from neuralmind.service.engine_service import EngineService


@pytest_asyncio.fixture
async def service(tmp_path: Path) -> AsyncIterator[EngineService]:
    """A server on a built workspace (keyword index, no vectors) that has not written the
    index yet and runs no start-up build or HEAD watch: what a test does is all it does."""
    repo = make_repo(tmp_path / "shop")
    Workspace(repo).build(embed=False)
    svc = EngineService(repo)
    await svc.start(index=False, watch_head=False)
    yield svc
    await svc.close()
