"""A save's vectors: which of its nodes need one, and storing them once embedded elsewhere.

A save makes its symbols searchable by keyword at once (`SearchIndex.update(embed=False)`);
their vectors follow. Two rules keep that follow-up small and off the next save's path
(issue #21 part 4, BENCHMARKS.md LIVE10):

- **Only nodes whose embedded text changed** (the text in the generation before the save
  against the one after) are embedded for a save. The others keep what they had: while a
  build child embeds (index/vector_handoff.py), the child embeds their unchanged text and
  its vector merges in; after a build that stopped at `max_embedded_nodes`, a node left at
  file level stays there (its file's vector stands for it, and a save that does not change
  its text does not change what it means). Before, a save queued every node of its file:
  the first save of a kernel file during the hand-off embedded hundreds of texts (seconds
  of ONNX on the engine thread, which the next save waited for), and after the build each
  save embedded its file whole past the cap.
- **The embedding runs off the engine thread**: the engine thread takes the texts
  (`save_plan`), a worker thread runs the model, the engine thread stores the vectors whose
  node still has that text (`store_saved`). The engine thread stays the one writer of the
  index; a save arriving meanwhile is applied at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from neuralmind.index.keyword_update import text_hash
from neuralmind.index.node_text import NodeTextOptions, file_children, graph_texts

if TYPE_CHECKING:
    from neuralmind.index.embedder import Embedder
    from neuralmind.index.vectors import VectorStore


def embedded_hashes(graph: Any, root: Path, ids: Iterable[str],
                    opts: NodeTextOptions) -> dict[str, str]:
    """id -> hash of the text embedded for it in `graph` (ids absent from it left out; the
    file nodes' children read from these ids' files only: the kernel's 835k nodes walked
    for them cost ~0.6 s a call, four calls a save, in LIVE10's first run).
    Empty when the embedded text holds body lines: those are read from the file, which a
    save already changed, so the text before it cannot be told (every node then counts as
    changed, as before this rule)."""
    if opts.body_lines:
        return {}
    ids = list(ids)
    return {i: text_hash(t[2]) for i, t in
            graph_texts(graph, root, ids, opts, keyword=False,
                        children=file_children(graph, ids)).items()}


def changed_text(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The ids of `after` whose embedded text is new or differs from `before`'s."""
    return [i for i, h in after.items() if before.get(i) != h]


@dataclass
class SavePlan:
    """Texts to embed for saved nodes, taken on the engine thread."""

    embedder: Embedder
    ids: list[str]
    hashes: list[str]
    texts: list[str]

    def embed(self) -> np.ndarray:
        """The vectors (run anywhere: the embedder is thread-safe)."""
        return self.embedder.embed(self.texts)


class SaveVectors:
    """`SearchIndex`'s side of a save's vectors (a mixin: it uses the index's state)."""

    _lock: threading.RLock
    _vectors: VectorStore
    _pending: set[str]
    root: Path
    text_options: NodeTextOptions

    if TYPE_CHECKING:   # SearchIndex's own
        def embedder(self, question: bool = False) -> Embedder | None: ...
        def _save(self, keyword: bool = True, vectors: bool = True) -> None: ...
        def _store(self, reuse: dict[str, np.ndarray], fresh: list[str],
                   vecs: np.ndarray | None, hashes: dict[str, str], prune: bool) -> None: ...

    def file_level(self, todo: dict[str, str], before: Mapping[str, str]) -> None:
        """Drop from `todo` the nodes a save left at file level: no vector, not pending
        (`max_embedded_nodes` left them to their file's vector) and the same text as
        before the save (called under the lock)."""
        for i in [i for i, h in todo.items() if before.get(i) == h and i not in self._pending
                  and self._vectors.text_hash(i) is None]:
            del todo[i]

    def save_plan(self, graph: Any, ids: Sequence[str]) -> SavePlan | None:
        """The texts of `ids` (still in `graph`) whose vector is missing or of another
        text; stored vectors of the same text are reused at once. None: nothing to embed."""
        embedder = self.embedder()
        if embedder is None:
            return None
        texts = {i: t[2] for i, t in graph_texts(graph, self.root, ids, self.text_options,
                                                 keyword=False,
                                                 children=file_children(graph, ids)).items()}
        hashes = {i: text_hash(t) for i, t in texts.items()}
        with self._lock:
            hashes = {i: h for i, h in hashes.items() if self._vectors.text_hash(i) != h}
            reuse, fresh = self._vectors.reusable(embedder.model_id, hashes)
            if reuse:
                self._store(reuse, [], None, {i: hashes[i] for i in reuse}, prune=False)
                self._save(keyword=False, vectors=True)
        if not fresh:
            return None
        return SavePlan(embedder, fresh, [hashes[i] for i in fresh], [texts[i] for i in fresh])

    def store_saved(self, graph: Any, plan: SavePlan, vecs: np.ndarray) -> int:
        """Store the plan's vectors whose node still has the text embedded (a save in
        between may have changed or removed it). Returns how many were stored."""
        now = embedded_hashes(graph, self.root, plan.ids, self.text_options)
        keep = [r for r, (i, h) in enumerate(zip(plan.ids, plan.hashes, strict=True))
                if now.get(i, h if self.text_options.body_lines else None) == h
                and i in graph.nodes]
        if not keep:
            return 0
        ids = [plan.ids[r] for r in keep]
        self._store({}, ids, vecs[keep], {i: plan.hashes[r] for i, r in zip(ids, keep,
                                                                           strict=True)},
                    prune=False)
        self._save(keyword=False, vectors=True)
        return len(ids)
