"""A build child's vector slices, read off the engine thread (issue #21 part 2).

While the Linux kernel's build child embedded, every slice it wrote (each
VECTOR_SAVE_SECONDS) was read whole on the server's engine thread: 1.6 s at 9k vectors,
growing with every slice, and answers waited behind it (BENCHMARKS LIVE15). The service
now reads the file on another thread (`SearchIndex.read_vectors`) and the engine thread
takes that store in, reading the file again only when a newer one replaced it meanwhile.
A real built workspace with the real model's vectors; a second store writes the file as
the build child does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sample_workspace import make_repo

from neuralmind.config import load_workspace_config
from neuralmind.engine.workspace import Workspace
from neuralmind.index import search_index
from neuralmind.index.state_files import VECTORS_FILE
from neuralmind.index.vectors import VectorStore

LOAD = VectorStore.load      # (the child's own reads are not the server's)


def _child_writes(state: Path, drop: str | None = None) -> None:
    """The vectors file replaced, as a build child's slice replaces it."""
    store = LOAD(state / VECTORS_FILE)
    assert store is not None
    if drop is not None:
        store.remove([drop])
    store.save(state / VECTORS_FILE)


def test_a_slice_read_aside_is_taken_in_without_reading_it_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "shop")
    Workspace(repo).build()
    state = repo / ".neuralmind"
    ws = Workspace.open_for_serving(repo, load_workspace_config(repo))
    assert ws.index.vector_count > 0
    reads: list[Path] = []
    def counted(path: Path, *args: Any, **kwargs: Any) -> VectorStore | None:
        reads.append(path)
        return LOAD(path, *args, **kwargs)

    monkeypatch.setattr(search_index.VectorStore, "load", counted)
    assert ws.index.read_vectors() is None          # no build child writes vectors
    ws.index.handoff.start()
    assert ws.index.read_vectors() is None          # nothing written since
    _child_writes(state)
    read = ws.index.read_vectors()                  # (the service: on another thread)
    assert read is not None and read.vectors is not None and len(reads) == 1
    assert ws.index.reload_if_changed(read)         # taken in: no read on the engine thread
    assert len(reads) == 1 and not ws.index.written_elsewhere()
    # a slice written after the read: the newer file is read and served
    read = ws.index.read_vectors()
    assert read is None                             # (nothing new yet)
    _child_writes(state)
    read = ws.index.read_vectors()
    assert read is not None and len(reads) == 2
    gone = next(iter(read.vectors._row))            # type: ignore[union-attr]
    _child_writes(state, drop=gone)
    assert ws.index.reload_if_changed(read)
    assert len(reads) == 3 and not ws.index.written_elsewhere()
