"""What runs on the engine thread between a save and the answers that wait for it. A real
service over a real workspace (parser, keyword index). Why: on the Linux kernel the first
save of each file queued the files near it (~250 ms: a pass over 2.6M edges) in front of
its first answer, and the first search naming an identifier built the exact-name map of
835k names (~0.6-2 s), which a save's first search paid (BENCHMARKS KERN13)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sample_workspace import eventually, make_repo

from neuralmind.config import ATTENTION_NEIGHBOURS
from neuralmind.context import retrieve
from neuralmind.engine import Workspace, coverage
from neuralmind.index import search_index
from neuralmind.service import engine_service
from neuralmind.service.engine_service import EngineService


@pytest.mark.asyncio
async def test_the_files_near_a_first_edit_are_found_once_saves_pause(
        service: EngineService, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_service, "SAVES_PAUSE_SECONDS", 3.0, raising=False)
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


@pytest.mark.asyncio
async def test_the_files_near_several_first_edits_are_found_in_one_pass(
        service: EngineService, monkeypatch: pytest.MonkeyPatch) -> None:
    passes: list[list[str]] = []
    files_near = coverage.files_near

    def counted(graph: Any, rels: Any, k: int = ATTENTION_NEIGHBOURS) -> Any:
        passes.append(list(rels))
        return files_near(graph, rels, k)

    monkeypatch.setattr(coverage, "files_near", counted, raising=False)
    monkeypatch.setattr(coverage, "nearby_files",
                        lambda g, rel, k=ATTENTION_NEIGHBOURS: counted(g, [rel], k)[rel])
    edited = ["app/billing.py", "app/users.py", "app/__init__.py"]
    for i, rel in enumerate(edited):
        path = service.root / rel
        path.write_text(path.read_text() + f"\n\ndef edit_{i}(value):\n    return value\n")
        await service.did_save(str(path))
    await eventually(lambda: _searchable(service, "edit_2"), 10, "the last saved function")
    await eventually(lambda: _near(service), 10, "the files near the edits")
    assert passes == [edited]
    ws = await service.workspace()
    near = {rel: coverage.nearby_files(ws.graph, rel) for rel in edited}
    assert all(set(files) <= set(service.focus._near) for files in near.values())


def test_the_importers_of_several_files_are_each_ones_importers(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/b.py": "def f():\n    return 1\n",
             "pkg/a.py": "from pkg.b import f\n\n\ndef g():\n    return f()\n",
             "main.py": "import pkg.a\nfrom pkg import b\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    graph = Workspace(tmp_path).build(embed=False).graph
    targets = sorted(graph.nodes)
    expected = {t: graph.importers(t) for t in targets}
    assert expected["pkg/b.py"] == ["main.py", "pkg/a.py"]
    assert graph.importers_of(targets) == expected        # one pass over the edges
    graph.in_edges(targets[0])                            # (the in-edge index built)
    assert graph.importers_of(targets) == expected


@pytest.mark.asyncio
async def test_the_answers_periodic_settle_waits_for_saves_to_pause(
        service: EngineService, monkeypatch: pytest.MonkeyPatch) -> None:
    """The settle and count (0.5-0.7 s on the kernel's engine thread) never runs in front of a
    save's answers: it waits for saves to pause, as the files near an edit do."""
    monkeypatch.setattr(engine_service, "SAVES_PAUSE_SECONDS", 5.0, raising=False)
    path = service.root / "app" / "billing.py"
    path.write_text(path.read_text() + "\n\ndef settle_later(value):\n    return value\n")
    await service.did_save(str(path))
    periodic = asyncio.ensure_future(service.use._periodic())
    await eventually(lambda: _searchable(service, "settle_later"), 10, "the saved function")
    await asyncio.sleep(0.5)                # the periodic work alone takes ~0.1 s here
    assert not periodic.done() and service.use.summary is None
    await asyncio.wait_for(periodic, 30)    # ...and once saves pause it runs
    assert service.use.summary is not None


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
