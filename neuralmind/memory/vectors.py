"""The recall-side vector cache: every recallable atom's vector as one matrix in memory.

Vectors are stored in `atom_vectors` (float32, L2-normalised, keyed by the embedded text
and the model, shared with decision search); recall needs them all at once, so they are
kept here as one matrix and reloaded only when the store's content generation moves (an
atom written, changed or deleted, by this process or another). Atoms whose text has no
current vector are embedded on the way and cached. Without the model, `refresh` reports
why and recall is keyword-only.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from neuralmind.errors import EngineError
from neuralmind.index.embedder import DIM
from neuralmind.memory.search import ABOUT_SQL, atom_text, cache_vectors, get_embedder, vector_key

log = logging.getLogger("neuralmind.memory")

# Atoms recall may return: not forgotten, not superseded by a newer one.
RECALL_SCOPE = ("a.state IN ('active', 'proposed') AND NOT EXISTS (SELECT 1 FROM edges s WHERE "
                "s.kind = 'supersedes' AND s.dst_type = 'atom' AND s.dst = a.id)")


class VectorCache:
    """seq -> row of one float32 matrix, for the recallable atoms of one store."""

    def __init__(self) -> None:
        self.generation = -1
        self.seqs = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, DIM), dtype=np.float32)
        self.index: dict[int, int] = {}   # seq -> row
        self.unavailable = ""          # why there are no vectors (the model is missing)
        self.model_id = ""             # the model the matrix holds vectors of
        self._lock = threading.Lock()

    def refresh(self, conn: sqlite3.Connection, write: Callable[[], Any], generation: int) -> None:
        """Reload when the store or the model changed since the last load (embedding what is
        missing: an atom new or changed, or cached by another model)."""
        with self._lock:
            try:
                embedder = get_embedder()
            except EngineError as e:
                self.unavailable = e.message
                self.generation = generation
                return
            if (generation == self.generation and embedder.model_id == self.model_id
                    and not self.unavailable):
                return
            self.unavailable = ""
            rows = conn.execute(
                f"SELECT a.seq, a.id, a.label, a.text, v.text_hash, v.vector, {ABOUT_SQL} FROM atoms a "
                f"LEFT JOIN atom_vectors v ON v.atom_id = a.id WHERE {RECALL_SCOPE} "
                "ORDER BY a.seq").fetchall()
            texts = [atom_text(r[2], r[3], r[6]) for r in rows]
            hashes = [vector_key(embedder.model_id, t) for t in texts]
            stale = [i for i, r in enumerate(rows) if r[4] != hashes[i]]
            matrix = np.zeros((len(rows), DIM), dtype=np.float32)
            for i, r in enumerate(rows):
                if r[5] is not None and r[4] == hashes[i]:
                    matrix[i] = np.frombuffer(r[5], dtype=np.float32)
            if stale:
                fresh = embedder.embed([texts[i] for i in stale]).astype(np.float32)
                matrix[stale] = fresh
                cache_vectors(write, [(rows[i][1], hashes[i], fresh[j].tobytes())
                                      for j, i in enumerate(stale)])
                log.info("embedded %d memory atom(s)", len(stale))
            self.seqs = np.array([r[0] for r in rows], dtype=np.int64)
            self.matrix = matrix
            self.index = {int(s): i for i, s in enumerate(self.seqs.tolist())}
            self.generation = generation
            self.model_id = embedder.model_id

    def similarities(self, question: str) -> np.ndarray:
        """Cosine of every cached atom (row order of `seqs`) with the question."""
        if not len(self.seqs):
            return np.zeros(0, dtype=np.float32)
        q = get_embedder().embed_question(question)
        # numpy's own loop, not BLAS: on a busy 2-core machine BLAS threads made this one
        # matrix-vector product 15-17 ms at 10k atoms; einsum takes ~1 ms
        return np.einsum("ij,j->i", self.matrix, q)

    def rows(self, seqs: list[int]) -> np.ndarray:
        """The cached vectors of `seqs`, in that order (zeros for atoms not cached)."""
        out = np.zeros((len(seqs), DIM), dtype=np.float32)
        for j, s in enumerate(seqs):
            i = self.index.get(s)
            if i is not None:
                out[j] = self.matrix[i]
        return out
