"""A build's embedding of what `SearchIndex.update(embed=False)` left pending: a mixin of
`SearchIndex` (kept out of search_index.py, which holds the persistence and the ranking).

The pending nodes go in `EmbedOrder` (attention first, `max_embedded_nodes` by importance,
the rest left at file level), a slice at a time through `embed_slices` (the next slice's
batches start while this one's last run), written every VECTOR_SAVE_SECONDS so that a
reloading server gains coverage meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from neuralmind.config import ATTENTION_SAVE_SECONDS, EMBED_SLICE, VECTOR_SAVE_SECONDS
from neuralmind.index.embed_order import EmbedOrder, choose
from neuralmind.index.embed_stream import embed_slices
from neuralmind.index.keyword_update import text_hash
from neuralmind.index.node_text import file_children
from neuralmind.index.symbol_rank import node_path

if TYPE_CHECKING:
    from neuralmind.graph.graph import Graph
    from neuralmind.index.embedder import Embedder
    from neuralmind.index.vectors import VectorStore

log = logging.getLogger("neuralmind.index")
ProgressFn = Callable[[int, int], None]


class EmbedPending:
    """`embed_pending`; the attributes and methods below are `SearchIndex`'s."""

    _lock: threading.RLock
    _pending: set[str]
    _vectors: VectorStore

    if TYPE_CHECKING:   # SearchIndex's own
        def embedder(self, question: bool = False) -> Embedder | None: ...
        def _texts(self, graph: Graph, ids: Iterable[str], keyword: bool = True,
                   children: dict[str, list[str]] | None = None
                   ) -> dict[str, tuple[str, str, str]]: ...
        def _store(self, reuse: dict[str, np.ndarray], fresh: list[str],
                   vecs: np.ndarray | None, hashes: dict[str, str], prune: bool) -> None: ...
        def _save(self, keyword: bool = True, vectors: bool = True) -> None: ...

    def embed_pending(self, graph: Graph, *, attention: Callable[[], Sequence[str]] = tuple,
                      limit: int | None = None,
                      importance: Callable[[str], float] | None = None,
                      progress: ProgressFn | None = None,
                      saved: Callable[[int], None] | None = None, settle: bool = True) -> int:
        """Embed what `update(embed=False)` left pending, in `EmbedOrder` (`attention()`
        asked before every slice; `importance` first when `limit` leaves no room for all;
        the rest stays at file level). Vectors are written every VECTOR_SAVE_SECONDS, and
        soon after attention slices, so a reloading server gains coverage meanwhile;
        `saved(vectors)` follows each write. `settle=False` (a build child, whose server owns
        the keyword files from `graph_ready` on) writes only the vectors: the server settles
        the pending list. Returns how many nodes were embedded."""
        embedder = self.embedder()
        if embedder is None:
            return 0
        with self._lock:
            pending = sorted(self._pending)
        room = None if limit is None else max(0, limit - len(self._vectors))
        chosen = choose(pending, room, importance)
        children = file_children(graph)
        texts = self._texts(graph, chosen, keyword=False, children=children)
        sizes = dict(zip(texts, embedder.token_lengths([t[2] for t in texts.values()]),
                         strict=True))
        del texts
        order = EmbedOrder.by_path(pending, chosen, node_path, sizes)
        total, done, last_save, unsaved = len(chosen), 0, time.monotonic(), False
        begun: deque[tuple[bool, dict[str, str], dict[str, np.ndarray], list[str]]] = deque()

        def fresh_texts() -> Iterator[list[str]]:   # asked for while the last slice runs
            while True:
                ids, urgent = order.next_slice(EMBED_SLICE, attention())
                if not ids:
                    return
                texts = {i: t[2] for i, t in
                         self._texts(graph, ids, keyword=False, children=children).items()}
                hashes = {i: text_hash(t) for i, t in texts.items()}
                with self._lock:
                    reuse, fresh = self._vectors.reusable(embedder.model_id, hashes)
                begun.append((urgent, hashes, reuse, fresh))
                yield [texts[i] for i in fresh]

        for vecs in embed_slices(embedder, fresh_texts()):
            urgent, hashes, reuse, fresh = begun.popleft()
            self._store(reuse, fresh, vecs, hashes, prune=False)
            done += len(hashes)
            total = max(total, done)      # attention files may go past the cap
            if progress is not None:
                progress(done, total)
            unsaved = True
            since = time.monotonic() - last_save
            if since >= VECTOR_SAVE_SECONDS or (urgent and since >= ATTENTION_SAVE_SECONDS):
                self._save(keyword=False, vectors=True)
                last_save, unsaved = time.monotonic(), False
                if saved is not None:
                    saved(len(self._vectors))
        left = order.rest()
        with self._lock:
            self._pending.difference_update(left)    # represented by their files' vectors
        if left:
            log.info("%d nodes left at file level (max_embedded_nodes %s)", len(left), limit)
        if unsaved or (left and settle):
            self._save(keyword=settle, vectors=True)
            if saved is not None:
                saved(len(self._vectors))
        return done
