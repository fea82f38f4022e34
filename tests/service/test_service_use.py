"""Answers recorded for `savings` through the real service (real model, SQLite): off the
next request's path, and none lost."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sample_workspace import eventually, make_repo

from neuralmind.service import use as use_module
from neuralmind.service.engine_service import EngineService

pytestmark = pytest.mark.asyncio


def _recorded(db: Path) -> list[str]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return [q for (q,) in conn.execute("SELECT question FROM answers ORDER BY id")]


async def test_answers_are_recorded_once_the_engine_is_idle_and_none_is_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(tmp_path / "shop")
    svc = EngineService(root)
    await svc.start(index=True, watch_head=False)
    ws = await svc.workspace()
    db = ws.use.store.path
    # back to back, inside the idle wait: asked, not recorded yet (nothing queued behind them)
    monkeypatch.setattr(use_module, "USE_RECORD_IDLE_SECONDS", 30.0)
    first = ["invoice total with tax", "where are users created"]
    for q in first:
        await svc.query(q)
    assert _recorded(db) == []
    # a report counts every answer given: it records what waits
    report = await svc.savings()
    assert report["overall"]["answers"] == 2 and _recorded(db) == first
    # the idle wait records by itself
    monkeypatch.setattr(use_module, "USE_RECORD_IDLE_SECONDS", 0.05)
    await svc.query("how is a refund computed")

    async def recorded_three() -> bool:
        return len(_recorded(db)) == 3

    await eventually(recorded_three, 10, "the third answer recorded")
    # an answer given just before the server closes is recorded by the close
    monkeypatch.setattr(use_module, "USE_RECORD_IDLE_SECONDS", 30.0)
    await svc.search("invoice total", 3)
    await svc.close()
    assert _recorded(db) == [*first, "how is a refund computed", "invoice total"]
