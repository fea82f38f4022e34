"""What runs on the engine thread between a save and the answers that wait for it. A real
service over a real workspace (parser, keyword index). Why: on the Linux kernel the first
save of each file queued the files near it (~250 ms: a pass over 2.6M edges) in front of
its first answer, and the first search naming an identifier built the exact-name map of
835k names (~0.6-2 s), which a save's first search paid (BENCHMARKS KERN13)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sample_workspace import eventually, make_repo

from neuralmind.context import retrieve
from neuralmind.engine import Workspace
from neuralmind.index import search_index
from neuralmind.service import engine_service
from neuralmind.service.engine_service import EngineService


@pytest_asyncio.fixture
async def service(tmp_path: Path) -> AsyncIterator[EngineService]:
    repo = make_repo(tmp_path / "shop")
    Workspace(repo).build(embed=False)
    svc = EngineService(repo)
    await svc.start(index=False, watch_head=False)
    yield svc
    await svc.close()


@pytest.mark.asyncio
async def test_the_files_near_a_first_edit_are_found_once_saves_pause(
        service: EngineService, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_service, "NEAR_EDIT_IDLE_SECONDS", 3.0, raising=False)
    path = service.root / "app" / "billing.py"
    path.write_text(path.read_text() + "\n\ndef fresh_total(value):\n    return value\n")
    await service.did_save(str(path))
    # the save's answers come before the near files are looked for
    await eventually(lambda: _searchable(service, "fresh_total"), 10, "the saved function")
    assert service.focus.is_edited("app/billing.py")      # the edited file leads at once
    assert service.focus._near == []
    # ...and once saves pause they join (the folder's other files)
    await eventually(lambda: _near(service), 10, "the files near the edit")
    assert "app/users.py" in service.focus._near


async def _searchable(svc: EngineService, name: str) -> bool:
    return any(h["symbol"].endswith(name) for h in (await svc.search(name, 5))["hits"])


async def _near(svc: EngineService) -> bool:
    return bool(svc.focus._near)


def test_warm_up_makes_what_a_saves_first_search_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "shop")
    Workspace(repo).build(embed=False)
    made: list[str] = []
    name_map, pair_tests = search_index.name_map, retrieve.pair_tests

    def names(names: dict[str, str]) -> Any:
        made.append("names")
        return name_map(names)

    def pairs(*args: Any) -> Any:
        made.append("pairs")
        return pair_tests(*args)

    monkeypatch.setattr(search_index, "name_map", names)
    monkeypatch.setattr(retrieve, "pair_tests", pairs)
    ws = Workspace.open_for_serving(repo, Workspace(repo).config)
    ws.warm_up()
    assert sorted(made) == ["names", "pairs"]
    hits, _, _ = ws.search("compute_invoice_total", 3)
    assert hits and hits[0].node.name == "compute_invoice_total"
    assert sorted(made) == ["names", "pairs"]     # the search read what warm-up made
