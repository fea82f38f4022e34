"""Answers stamped with their freshness and scored by use: a mixin of `Workspace`.

Unsaved editor buffers extracted in place of their files (`set_buffer`), what every
adapter calls to stamp an answer (engine/freshness.py) and to record, credit
and report answers (engine/use.py), kept out of workspace.py, which holds the behaviour
and stays under 500 lines.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind import heap
from neuralmind.engine.freshness import changed_since_indexed, stamp_answer, work_tree_now
from neuralmind.engine.use import AnswerUse

if TYPE_CHECKING:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.graph.build import BuildReport
    from neuralmind.graph.store import Graph
    from neuralmind.synapse.layer import SynapseLayer


class FreshAnswers:
    """Stamps and use; the attributes below are the Workspace's."""

    root: Path
    state: Path
    learned: Path
    config: WorkspaceConfig
    graph: Graph
    _buffers: dict[str, str]
    _synapses_or_none: Callable[[], SynapseLayer | None]
    update_files: Callable[..., tuple[BuildReport, list[str]]]

    # --- unsaved buffers -------------------------------------------------------------------
    def set_buffer(self, rel: str, text: str) -> bool:
        """Extract an editor's unsaved `text` of `rel` in place of the file: its names are
        searchable on return (keyword side; embeddings follow on save). False, and the file
        is served again, when the text is the file's; False for a file not on disk (a new
        buffer is indexed when first saved)."""
        try:
            disk = (self.root / rel).read_bytes()
        except OSError:
            return False
        if disk == text.encode("utf-8", "surrogatepass"):
            self.drop_buffer(rel)
            return False
        self._buffers[rel] = text
        self.update_files([rel], texts={rel: text})
        return True

    @staticmethod
    def settle_after_buffers() -> None:
        """After a pass of buffer extractions, settle the heap as after saves. An extraction
        is a save in memory (a new graph generation, the keyword index updated), but no
        index flush follows it, and a flush is what settles after saves: the first pass
        after a run of saves peaks in a thread's malloc arena (up to ~75 MB on rich), and
        in one bench run of four that stayed resident for the rest of the session (+27
        MB; the edit phase otherwise +3.5 MB against +0.9-1.6 MB settled, RSS8). A pass
        comes once per typing pause (OVERLAY_IDLE_SECONDS)."""
        heap.settle_after_saves()

    def drop_buffer(self, rel: str) -> None:
        """The buffer closed unsaved, or equals the file again: serve the file on disk."""
        if self._buffers.pop(rel, None) is not None or rel in self.graph.buffers:
            self.update_files([rel])

    # --- freshness (engine/freshness.py) -------------------------------------------------------
    def stamp_answer(self, out: dict[str, Any], *, head: str | None, dirty: list[str] | None,
                     unsaved: Iterable[str] = (), pending: Iterable[str] = (),
                     not_indexed: Iterable[str] = ()) -> dict[str, Any]:
        """`out` (an answer computed from the graph served now) stamped, with stale hits."""
        return stamp_answer(self.graph, self.root, out, head, dirty, unsaved, pending,
                            not_indexed)

    def stale_files(self, files: Iterable[str]) -> set[str]:
        """Of `files`, those whose bytes on disk may differ from what the index holds."""
        return changed_since_indexed(self.graph, self.root, files)

    def work_tree_now(self) -> dict[str, Any]:
        """HEAD, the change set and what of it is not indexed, asked of git now (the CLI)."""
        return work_tree_now(self.graph, self.root, self.config.languages or None)

    # --- answers scored by use (engine/use.py) ---------------------------------------------
    @functools.cached_property
    def use(self) -> AnswerUse:
        """Answers and what of them was used (kept in the learned folder), the codebase's
        token count, and what use teaches the synapse layer."""
        return AnswerUse(self.learned, self.state, self.root, self._synapses_or_none,
                         self.config.use_window_seconds)

    def savings(self, count: bool = True) -> dict[str, Any]:
        """The savings report: answers, tokens, use, per day and overall (`count`: count
        the codebase's tokens first, all of them, if they are not)."""
        return self.use.savings(self.graph, count)
