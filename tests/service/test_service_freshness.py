"""Freshness through the real service: every answer stamped from one generation, stale
hits flagged, and a checkout re-indexing exactly the files that differ (real git, real
parser, the real background build for a big checkout)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sample_workspace import eventually, git, make_repo

from neuralmind.config import CHECKOUT_INLINE_MAX_FILES
from neuralmind.engine.fresh_answers import FreshAnswers
from neuralmind.service.engine_service import EngineService

pytestmark = pytest.mark.asyncio(loop_scope="module")

MANY = CHECKOUT_INLINE_MAX_FILES + 5


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`main`, plus `small` (one file changed) and `big` (MANY new modules) branches."""
    root = make_repo(tmp_path_factory.mktemp("fresh") / "shop")
    git(root, "checkout", "-q", "-b", "small")
    (root / "app" / "billing.py").write_text(
        "def refund_invoice_on_small_branch(invoice):\n    return -invoice.total\n")
    git(root, "commit", "-qam", "small")
    git(root, "checkout", "-q", "-b", "big", "main")
    for i in range(MANY):
        (root / "app" / f"gen{i:02d}.py").write_text(f"def generated_helper_{i}():\n    return {i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "big")
    git(root, "checkout", "-q", "main")
    return root


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def service(repo: Path) -> AsyncIterator[EngineService]:
    svc = EngineService(repo)
    await svc.start(index=True, watch_head=False)   # HEAD moves are announced by the test

    async def indexed() -> bool:
        return (await svc.status())["indexing"] is None and svc.indexing.last_full_build

    await eventually(indexed, 120, "the first index")
    yield svc
    await svc.close()


async def _symbols(svc: EngineService, question: str) -> list[str]:
    return [h["symbol"] for h in (await svc.search(question, 5))["hits"]]


async def test_every_answer_is_stamped_with_head_and_generation(service: EngineService,
                                                                repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    for out in (await service.query("invoice total with tax"),
                await service.search("invoice total", 3), await service.wakeup()):
        fresh = out["freshness"]
        assert fresh["head"] == head
        assert fresh["index_generation"] >= 1
        assert fresh["dirty_files"] == [] and fresh["unsaved_files"] == []
        assert fresh["pending_files"] == [] and not fresh["truncated"]
        assert all(h["stale"] is False for h in out["hits"])
    assert (await service.status())["freshness"]["head"] == head


async def test_a_hit_from_a_file_changed_since_indexed_is_stale(service: EngineService,
                                                                 repo: Path) -> None:
    path = repo / "app" / "users.py"
    before = path.stat()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
    try:
        out = await service.search("authenticate user password", 5)
        stale = {h["file"] for h in out["hits"] if h["stale"]}
        assert stale == {"app/users.py"}
        service.worktree.touched()          # what a save or a watched file does
        await eventually(lambda: _dirty_is(service, []), 10, "the change set re-read")
    finally:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert not any(h["stale"] for h in (await service.search("authenticate user", 5))["hits"])


async def _dirty_is(service: EngineService, expected: list[str]) -> bool:
    return (await service.status())["freshness"]["dirty_files"] == expected


async def test_a_small_checkout_reindexes_what_differs_through_the_save_path(
        service: EngineService, repo: Path) -> None:
    generation = (await service.status())["freshness"]["index_generation"]
    git(repo, "checkout", "-q", "small")
    await service.worktree.head_moved()
    assert service.worktree.checkout_pending <= {"app/billing.py"}   # may be drained already
    await eventually(lambda: _found(service, "refund_invoice_on_small_branch",
                                    "refund_invoice_on_small_branch"), 30, "the new symbol")
    out = await service.search("compute_invoice_total", 5)
    assert "compute_invoice_total" not in [h["symbol"] for h in out["hits"]]
    assert out["partial"] is False and out["freshness"]["pending_files"] == []
    assert out["freshness"]["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert out["freshness"]["index_generation"] > generation
    assert service.indexing.state is None          # no background build for one file
    git(repo, "checkout", "-q", "main")
    await service.worktree.head_moved()
    await eventually(lambda: _found(service, "compute_invoice_total", "compute_invoice_total"),
                     30, "main's symbols back")


async def _found(service: EngineService, question: str, symbol: str) -> bool:
    return symbol in await _symbols(service, question)


async def test_a_big_checkout_answers_partial_until_the_background_build_is_in(
        service: EngineService, repo: Path) -> None:
    git(repo, "checkout", "-q", "big")
    await service.worktree.head_moved()
    pending = service.worktree.checkout_pending
    assert len(pending) == MANY and all(p.startswith("app/gen") for p in pending)
    first = await service.search("generated helper", 5)
    assert first["partial"] is True
    assert first["freshness"]["counts"]["pending"] >= MANY and first["freshness"]["truncated"]

    async def settled() -> bool:
        out = await service.search("generated_helper_7", 5)
        return not out["partial"] and "generated_helper_7" in [h["symbol"] for h in out["hits"]]

    await eventually(settled, 120, "the checkout indexed")
    assert not service.worktree.checkout_pending
    git(repo, "checkout", "-q", "main")
    await service.worktree.head_moved()
    await eventually(lambda: _gone(service), 120, "the generated files removed")


async def _gone(service: EngineService) -> bool:
    out = await service.search("generated_helper_7", 5)
    return not out["partial"] and "generated_helper_7" not in [h["symbol"] for h in out["hits"]]


async def test_a_pass_of_buffer_extractions_settles_the_heap(
        service: EngineService, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An extraction is a save in memory, but no index flush (which settles the heap after
    saves) follows it: each pass settles once, after its last buffer (RSS8: the first pass
    after saves otherwise left up to ~75 MB free but resident on rich)."""
    settles: list[int] = []
    real = FreshAnswers.settle_after_buffers

    def counted() -> None:                       # the real settle, with when it ran
        settles.append(service.buffers.extractions)
        real()

    # the buffer pass's settle only: an index flush settles the heap too, whenever saves
    # pause (counting a flush's settle at 0 once satisfied the wait below before the pass's)
    monkeypatch.setattr(FreshAnswers, "settle_after_buffers", staticmethod(counted))
    before = service.buffers.extractions
    for rel in ("app/billing.py", "app/users.py"):
        await service.did_open(rel, text=(repo / rel).read_text())
        await service.did_change(rel, edits=[((0, 0, 0, 0), "# typed, not saved\n")])

    async def extracted() -> bool:
        return service.buffers.extractions == before + 2 and before + 2 in settles

    await eventually(extracted, 30, "both buffers extracted and the heap settled")
    assert before + 2 in settles and before + 1 not in settles   # after the pass, not per buffer
    for rel in ("app/billing.py", "app/users.py"):
        await service.did_close(rel)
    await eventually(lambda: _unsaved_gone(service), 30, "the closed buffers reverted")


async def _unsaved_gone(service: EngineService) -> bool:
    return not (await service.status())["freshness"]["unsaved_files"]
