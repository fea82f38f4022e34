"""A served workspace's warm-up, in steps: what its first answers and saves would pay
otherwise.

Why steps: on the Linux kernel the warm-up took 33-57 s, one engine job, and `status` and
every answer queued behind it (issue #21 part 2). The service runs each step as its own
engine job, so requests go between them, and the long one (the resolution state saves
patch) `aside`: off the engine thread, while it serves answers and writes wait
(`service/engine_thread.py`). A caller that is not a server runs them in order
(`Workspace.warm_up`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from neuralmind import heap
from neuralmind.context.tokens import count_tokens
from neuralmind.graph.store import hold_point

if TYPE_CHECKING:
    from neuralmind.graph.store import Graph
    from neuralmind.index.search_index import SearchIndex

log = logging.getLogger("neuralmind.engine")


class Served(Protocol):
    """What the warm-up reads of a served `Workspace` (which imports this module)."""

    @property
    def index(self) -> SearchIndex: ...
    @property
    def graph(self) -> Graph: ...
    def search(self, question: str, k: int = 10) -> Any: ...


@dataclass(frozen=True)
class WarmUpStep:
    name: str
    run: Callable[[], object]
    aside: bool = False     # reads the served state, prepares only saves' own: may run aside


def warm_up_steps(ws: Served) -> list[WarmUpStep]:
    """The steps, answers' first (seconds), then saves' (tens of seconds on the kernel)."""
    return [
        # the keyword base's document numbers (~0.4 s on the kernel) and the exact-name map
        WarmUpStep("keyword", ws.index.warm_up),
        WarmUpStep("model", lambda: _model(ws)),
        # what a search makes on first use (test pairs, masks: 1.4-2.6 s on the kernel, a
        # save's first search paid it, KERN13); a name, so the exact-name side runs too
        WarmUpStep("first search", lambda: ws.search("warm_up", 1)),
        WarmUpStep("saves", lambda: _for_saves(ws), aside=True),
        WarmUpStep("big-file worker", lambda: _big_file_worker(ws)),
        WarmUpStep("settle", heap.settle_after_load),
    ]


def _model(ws: Served) -> None:
    """The embedding model and the budget tokenizer."""
    try:
        count_tokens("warm up")
        if ws.index.vector_count:
            ws.index.embedder()
    except Exception as e:  # a missing model degrades to keyword search, never fails start
        log.info("warm-up skipped: %s", e)


def _for_saves(ws: Served) -> None:
    """The resolution state saves patch, so the first save does not pay it (~1.5 s on
    Django, 33-57 s on the kernel); it sets only what saves read, never what answers do."""
    from neuralmind.graph.build import prepare_incremental  # serving builds on saves
    hold_point("warm_up_saves")
    prepare_incremental(ws.graph)


def _big_file_worker(ws: Served) -> None:
    """The big-file worker started, when the graph has big files: no save pays its start."""
    from neuralmind.graph.extract import CHUNKED_PARSE_OVER  # serving builds on saves
    big = {info.language for info in ws.graph.files.values() if info.size > CHUNKED_PARSE_OVER}
    if big:
        from neuralmind.graph import big_file_worker  # a process, for servers with big files
        big_file_worker.keep_ready(big)
