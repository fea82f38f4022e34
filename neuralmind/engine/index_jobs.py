"""A server's jobs on the search index between saves: a mixin of `Workspace`.

What a save's vectors and an index write do on the engine thread, each split so the slow
part runs on another thread (kept out of workspace.py, which stays under 500 lines):
`save_plan` / `store_saved` around the model (index/save_vectors.py), `begin_flush` /
`end_flush` around the keyword write (index/keyword_flush.py).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from neuralmind import heap
from neuralmind.config import FLUSH_EXPECTED_BYTES_PER_SECOND
from neuralmind.index.keyword_flush import KeywordFlush, begin_flush
from neuralmind.index.state_files import BM25_FILE, META_FILE

if TYPE_CHECKING:
    from neuralmind.graph.store import Graph
    from neuralmind.index.save_vectors import SavePlan
    from neuralmind.index.search_index import SearchIndex


class IndexJobs:
    """The index jobs; `graph` and `index` are the Workspace's."""

    graph: Graph
    index: SearchIndex
    last_write_s = 0.0      # the last keyword write's seconds (a server's flush pacing)

    def save_plan(self, node_ids: list[str]) -> SavePlan | None:
        """The texts of saved nodes (`update_files`) to embed off the engine thread."""
        return self.index.save_plan(self.graph, node_ids)

    def store_saved(self, plan: SavePlan, vectors: Any) -> int:
        """Store a plan's vectors (those whose node still has that text)."""
        return self.index.store_saved(self.graph, plan, vectors)

    def expected_write_s(self) -> float:
        """How long the next keyword write should take: the last one's, or before any, the
        index's size on disk at config's rate (the Linux kernel's first write took ~10 s)."""
        if self.last_write_s or "index" not in self.__dict__:
            return self.last_write_s
        written = 0         # what a flush rewrites whole: the keyword base and the metadata
        for name in (BM25_FILE, META_FILE):
            with contextlib.suppress(OSError):
                written += (self.index.state_dir / name).stat().st_size
        return written / FLUSH_EXPECTED_BYTES_PER_SECOND

    def begin_flush(self) -> KeywordFlush | None:
        """`flush_index` up to the keyword write, which the returned job's `run` does on
        any thread; `end_flush(job)` then serves what it wrote. None: nothing to write."""
        job = begin_flush(self.index) if "index" in self.__dict__ else None
        if job is None:
            heap.settle_after_saves()
        return job

    def end_flush(self, job: KeywordFlush) -> None:
        job.finish()
        if job.wrote_base:      # (one that wrote only the metadata says nothing of the next)
            self.last_write_s = job.seconds
        heap.settle_after_saves()
