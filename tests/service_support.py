"""A real EngineService over a test repository, indexed by its own background build
(real tree-sitter, real model): shared by the MCP and observatory tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from sample_workspace import eventually

from neuralmind.service.engine_service import EngineService


@contextlib.asynccontextmanager
async def indexed_service(repo: Path) -> AsyncIterator[EngineService]:
    svc = EngineService(repo)
    await svc.start(index=True, watch_head=False)

    async def indexed() -> bool:
        status = await svc.status()
        return status["embedded_nodes"] > 0 and status["indexing"] is None

    try:
        await eventually(indexed, 120, "the first index")
        yield svc
    finally:
        await svc.close()
