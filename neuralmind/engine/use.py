"""Answers scored by use: recording answers, crediting their files, learning from them.

The usage store (neuralmind/usage) keeps the answers and their use; this is what the
engine does with it. An answer records the files it returned (best first) and its tokens,
with the whole codebase's token count (engine/codebase.py) when that is known. When an
answer settles (usage/store.py), what its use says goes to the synapse layer: the files
kept after it strengthen the question -> files association; the top files it returned
that the work after it neither opened nor changed weaken it (retrieval caps the effect).
An answer nothing followed teaches nothing: a question asked to understand, not to change,
is no evidence that its files were wrong.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind import config
from neuralmind.config import USE_RETURNED_FILES, USE_UNUSED_TOP
from neuralmind.context.tokens import count_tokens
from neuralmind.engine.codebase import CodebaseTokens
from neuralmind.engine.freshness import answer_files

if TYPE_CHECKING:
    from neuralmind.graph.store import Graph
    from neuralmind.synapse.layer import SynapseLayer
    from neuralmind.usage.store import Settled, UsageStore

log = logging.getLogger("neuralmind.engine")


class AnswerUse:
    """One workspace's answers and their use (called on the engine thread)."""

    def __init__(self, learned: Path, state: Path, root: Path,
                 synapses: Callable[[], SynapseLayer | None], window: float) -> None:
        self._learned = learned
        self._window = window
        self._synapses = synapses
        self.codebase = CodebaseTokens(state, root)
        self.codebase_complete = False
        self._report: dict[str, Any] = {}
        self._report_key: tuple[Any, ...] | None = None    # what the report was made from

    @functools.cached_property
    def store(self) -> UsageStore:
        from neuralmind.usage.store import UsageStore  # ~2 ms, with the first answer

        return UsageStore(self._learned, window=self._window)

    def count_codebase(self, graph: Graph, limit: int | None = None,
                       seconds: float | None = None) -> bool:
        self.codebase_complete = self.codebase.update(graph, limit, seconds)
        self.codebase.save()
        return self.codebase_complete

    def record(self, kind: str, session: str | None, question: str, out: dict[str, Any],
               now: float | None = None) -> int | None:
        files = answer_files(out)[:USE_RETURNED_FILES]
        tokens = out.get("tokens")
        if not isinstance(tokens, int):      # a search or recall: its compact listing
            tokens = count_tokens("\n".join(f"{h.get('file')}:{h.get('line')} {h.get('symbol', '')}"
                                            for h in out.get("hits", [])))
        total = self.codebase.total if self.codebase_complete else None
        return self.store.record(kind, session or "anonymous", question, files, tokens, total, now)

    def note(self, events: list[tuple[str, str, float]]) -> None:
        if events:
            self.store.note(events)

    def commit_made(self, changed: list[str], now: float | None = None) -> int:
        self.store.commit(changed, now)
        return self.settle(now)

    def settle(self, now: float | None = None) -> int:
        settled = self.store.settle(now)
        layer = self._synapses()
        for a in settled if layer is not None else ():
            if not a.touched:
                continue
            unused = unused_files(a)
            try:
                layer.learn_use(a.session, a.question, a.kept, unused, a.ts)
            except Exception as e:  # learning fails open
                log.warning("could not learn from an answer's use: %s", e)
        return len(settled)

    def savings(self, graph: Graph, count: bool = True) -> dict[str, Any]:
        """The savings report (usage/report.py), made again only when an answer or its use
        changed or the codebase's count moved: a server's status asks every
        USE_SETTLE_SECONDS, and reading every answer held the engine thread 64 ms at
        6,000 answers (667 ms before the use was counted in SQL) while nothing had changed."""
        from neuralmind.usage.report import savings  # the report's module, on first use

        if count:
            self.count_codebase(graph)
        total = self.codebase.total if self.codebase_complete else None
        version = self.store.version()
        key = None if version is None else (version, total)
        if key is None or key != self._report_key:
            self._report = savings(self.store.answers(), total)
            self._report_key = key
        return self._report


def unused_files(a: Settled) -> list[str]:
    """The answer's files that the work after it did not use and that it ranked above the
    first file the work did use (those are what cost the answer its rank; below it they
    cost nothing), among its top USE_UNUSED_TOP; all of those when it used none."""
    used = [r.rank for r in a.returned if r.used or r.file in a.touched]
    first = min(used) if used and config.USE_UNUSED_ABOVE_USED else None
    return [r.file for r in a.returned[:USE_UNUSED_TOP]
            if not r.used and r.file not in a.touched and (first is None or r.rank < first)]
