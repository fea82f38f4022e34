"""A build's slices embedded back to back, with both cores busy across slice boundaries.

A build embeds 256-text slices in turn (`SearchIndex.embed_pending`: attention is read
before each). Embedding each with `Embedder.embed` drained the pool at every slice: its
last batch ran alone, then nothing ran while the slice's vectors were stored and the next
was read (whole Django: 17.6 s with one batch in flight and 8.3 s with none, of 224 s;
BENCHMARKS.md "Cold index time, whole Django"). `embed_slices` asks for the next slice when
the pool has room for its first batch, while this slice's last batches run. Each slice is
batched exactly as `embed` batches it alone, so its vectors are the same bit for bit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future

import numpy as np

from neuralmind.index.embedder import DistinctTexts, Embedder, plan_batches


class _Slice(DistinctTexts):
    """One list of `embed_slices`, with how many of its batches are not yet back."""

    left = 0


def embed_slices(embedder: Embedder, slices: Iterable[Sequence[str]]) -> Iterator[np.ndarray]:
    """`embedder.embed(texts)` for each list of `slices` in turn. The next list is taken
    from `slices` when the pool has room for its first batch, before this list's vectors
    are handed out: at most one list ahead, unless lists are empty."""
    if embedder.workers == 1:
        for texts in slices:
            yield embedder.embed(texts)
        return
    pool = embedder.batch_pool()
    order: deque[_Slice] = deque()      # lists begun, not yet handed out, in order
    jobs = _slice_jobs(embedder, slices, order)
    ahead: deque[tuple[_Slice, list[int], Future[np.ndarray]]] = deque()
    more = True
    try:
        while True:
            while more and len(ahead) < embedder.workers:   # the pool never waits on us
                job = next(jobs, None)
                if job is None:
                    more = False
                else:
                    ahead.append((job[0], job[1], pool.submit(embedder.run_batch, job[2])))
            while order and order[0].left == 0:
                yield order.popleft().result()
            if not ahead:
                if not more:
                    return
                continue
            part, rows, future = ahead.popleft()
            part.vectors[rows] = future.result()
            part.left -= 1
    finally:
        for _, _, future in ahead:   # the caller stopped early, or a batch failed
            future.cancel()


def _slice_jobs(embedder: Embedder, slices: Iterable[Sequence[str]], order: deque[_Slice],
                ) -> Iterator[tuple[_Slice, list[int], list[list[int]]]]:
    """(list, its rows, their token ids) per batch of every list, lists in order; each
    list joins `order` when its first batch is asked for (before it, if it has none)."""
    for texts in slices:
        part = _Slice(texts)
        ids = embedder.token_ids(part.distinct) if part.distinct else []
        batches = plan_batches([len(x) for x in ids])
        part.left = len(batches)
        order.append(part)
        for batch in batches:
            yield part, batch, [ids[i] for i in batch]
