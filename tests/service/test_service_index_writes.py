"""When a server writes the search index to disk: once saves pause, for longer where a
write takes longer (before any write is timed, as long as the index's size says), and
within a bound under saves that never pause. A real service over a real workspace (parser,
keyword index, the files on disk read back by another reader); the constants are shrunk
to test seconds. Why: on the Linux kernel a write (~10-18 s on a worker thread) shares the
GIL with the saves made meanwhile, which then took ~1.5-2x as long (BENCHMARKS KERN11)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from sample_workspace import eventually

from neuralmind.index.search_index import SearchIndex
from neuralmind.index.state_files import BM25_FILE, META_FILE
from neuralmind.service.engine_service import EngineService

pytestmark = pytest.mark.asyncio




def on_disk(root: Path, name: str) -> bool:
    """Another process's view: the function `name` is in the index files written."""
    reader = SearchIndex(root / ".neuralmind", root=root)
    return any(h.id.endswith("::" + name) for h in reader.search(name, mode="keyword").hits)


async def save_function(svc: EngineService, name: str) -> None:
    path = svc.root / "app" / "billing.py"
    path.write_text(path.read_text() + f"\n\ndef {name}(value):\n    return value\n")
    await svc.did_save(str(path))
    await eventually(lambda: _searchable(svc, name), 30, f"{name} searchable")


async def _searchable(svc: EngineService, name: str) -> bool:
    return any(h["symbol"].endswith(name) for h in (await svc.search(name, 5))["hits"])


async def test_the_first_write_waits_as_long_as_the_index_size_says(
        service: EngineService, monkeypatch: pytest.MonkeyPatch) -> None:
    state = service.root / ".neuralmind"
    size = sum((state / n).stat().st_size for n in (BM25_FILE, META_FILE))
    # a write of this index is expected to take 1 s: saves must pause 5 s (2 s before)
    monkeypatch.setattr("neuralmind.engine.index_jobs.FLUSH_EXPECTED_BYTES_PER_SECOND", size)
    await save_function(service, "refund_partial_invoice")
    saved = time.monotonic()
    await asyncio.sleep(3.5)
    assert not on_disk(service.root, "refund_partial_invoice")
    await eventually(lambda: asyncio.to_thread(on_disk, service.root, "refund_partial_invoice"),
                     30, "the write once saves paused")
    assert time.monotonic() - saved >= 4.5


async def test_saves_that_never_pause_are_written_within_the_bound(
        service: EngineService, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("neuralmind.service.freshness.FLUSH_MAX_DEFER_SECONDS", 2.0)
    first = time.monotonic()
    written_during_saves = False
    for i in range(24):                 # a save every ~0.5 s: never the 2 s pause
        await save_function(service, f"audit_step_{i}")
        if await asyncio.to_thread(on_disk, service.root, "audit_step_0"):
            written_during_saves = True
            break
        await asyncio.sleep(0.5)
    assert written_during_saves, "the index was not written while saves kept arriving"
    assert time.monotonic() - first < 10


async def test_the_write_at_a_builds_end_waits_for_saves_to_pause(
        service: EngineService) -> None:
    await save_function(service, "close_ledger_0")
    write = asyncio.ensure_future(service.freshness.write_when_quiet())
    for i in range(1, 5):               # saves 0.5 s apart: shorter than the 2 s pause
        await asyncio.sleep(0.5)
        assert not write.done()
        await save_function(service, f"close_ledger_{i}")
    last = time.monotonic()
    await asyncio.wait_for(write, 30)
    assert time.monotonic() - last >= 1.9        # it waited for the pause, then wrote
    assert await asyncio.to_thread(on_disk, service.root, "close_ledger_4")


async def test_a_write_decided_as_a_save_arrives_waits_for_the_pause(
        service: EngineService) -> None:
    """The build ended as saves began (the Linux kernel's start-up build re-embeds a few
    hundred nodes): the write was decided in a quiet moment, but a save reached the engine
    thread before its snapshot. It waits for saves to pause instead of writing beside them."""
    ws = await service.workspace()
    ws.index.handoff.start()        # a served build's child owned the vectors; it ended:
    ws.build_ended(True)            # the settled pending list is unsaved (the real calls)
    path = service.root / "app" / "billing.py"
    path.write_text(path.read_text() + "\n\ndef void_invoice_late(value):\n    return value\n")
    write = asyncio.ensure_future(service.freshness.write_when_quiet())   # decided: quiet
    await service.did_save(str(path))          # applied before the write's snapshot
    saved = time.monotonic()
    await asyncio.sleep(1.0)
    assert not write.done()
    assert not await asyncio.to_thread(on_disk, service.root, "void_invoice_late")
    await asyncio.wait_for(write, 30)
    assert time.monotonic() - saved >= 1.9
    assert await asyncio.to_thread(on_disk, service.root, "void_invoice_late")
