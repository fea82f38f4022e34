"""The server dreams when idle, at most once per interval, and never when told not to."""

from __future__ import annotations

from pathlib import Path

import pytest
from sample_workspace import make_repo

from neuralmind.config import DREAM_INTERVAL_HOURS, WorkspaceConfig
from neuralmind.memory.clock import Clock
from neuralmind.service.engine_service import EngineService


@pytest.mark.asyncio
async def test_idle_dreams_once_per_interval(tmp_path: Path) -> None:
    svc = EngineService(make_repo(tmp_path / "shop"))
    await svc.start(index=False, watch_head=False)
    try:
        ws = await svc.workspace()
        ws.memory.clock = Clock(1_790_000_000.0)
        await svc.memory_remember("Carts expire after a day.", "fact")
        svc.dreams.idle_seconds = 0.0
        assert await svc.dreams.maybe_dream()
        assert (svc.root / ".neuralmind" / "DREAMS.md").is_file()
        assert not await svc.dreams.maybe_dream()                 # dreamt tonight already
        ws.memory.clock.advance(DREAM_INTERVAL_HOURS * 3600)
        svc.dreams.idle_seconds = 3600.0
        await svc.memory_stats()                                  # a request: not idle
        assert not await svc.dreams.maybe_dream()
        svc.dreams.idle_seconds = 0.0
        assert await svc.dreams.maybe_dream() and svc.dreams.dreams == 2
    finally:
        await svc.close()


@pytest.mark.asyncio
async def test_no_dreams_when_turned_off_or_with_nothing_to_dream(tmp_path: Path) -> None:
    svc = EngineService(make_repo(tmp_path / "shop"), WorkspaceConfig(dream_when_idle=False))
    await svc.start(index=False, watch_head=False)
    try:
        svc.dreams.idle_seconds = 0.0
        assert not await svc.dreams.maybe_dream()
        svc.config.dream_when_idle = True
        assert not await svc.dreams.maybe_dream()                 # no memories yet
        assert not (svc.root / ".neuralmind" / "DREAMS.md").exists()
    finally:
        await svc.close()
