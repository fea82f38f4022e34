"""The one-writer rule for the decision store: opened and used on the engine thread only."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sample_workspace import make_repo

from neuralmind.errors import EngineError
from neuralmind.memory.decisions import store as store_module
from neuralmind.service.engine_service import EngineService


@pytest.mark.asyncio
async def test_decision_store_is_opened_off_the_event_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened_on: list[str] = []
    real_init = store_module.DecisionStore.__init__

    def recording_init(self: store_module.DecisionStore, *args: object, **kw: object) -> None:
        opened_on.append(threading.current_thread().name)
        real_init(self, *args, **kw)   # type: ignore[arg-type]

    monkeypatch.setattr(store_module.DecisionStore, "__init__", recording_init)
    svc = EngineService(make_repo(tmp_path / "shop"))
    await svc.start(index=False, watch_head=False)
    try:
        record = await svc.decisions_record("Totals are rounded once", "cents drift otherwise",
                                            files=["app/billing.py"])
        assert (await svc.decisions_get(record["id"]))["title"] == "Totals are rounded once"
        with pytest.raises(EngineError) as info:
            await svc.decisions_get("no-such-decision")
        assert info.value.code == "not_found"
    finally:
        await svc.close()
    assert opened_on and threading.main_thread().name not in opened_on, opened_on
