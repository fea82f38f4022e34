"""Node vectors: raw float32 rows persisted in one file, searched with usearch (cosine).

The raw vectors are the source of truth (`vectors.npz`: the matrix plus ids,
text hashes and usearch keys as JSON). Below `EXACT_LIMIT` vectors, search is
usearch's exact brute force over that matrix — measured on this 2-core
machine with 384-d vectors and k=100: usearch exact 4.6 ms/query at 20k and
6.7 ms at 50k, numpy matmul + argpartition 6.2 / 11.0 ms, HNSW 0.8 / 1.2 ms
but 7 s / 22 s to build. Above it an HNSW index (f16, ef 128) is kept in
`vectors.usearch`; if that file is unreadable, stale or of another version,
it is rebuilt from the stored vectors, never re-embedded.

Importing usearch before onnxruntime makes onnxruntime's import crash the
process (usearch's extension carries its own C++ runtime; seen with usearch
2.26.6 + onnxruntime 1.32.0), so `_usearch()` loads onnxruntime first.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from neuralmind.statedir import atomic_writer, move_aside

log = logging.getLogger("neuralmind.index")

FORMAT_VERSION = 1
DIM = 384
# In memory the matrix is float16: half of 30 MB at 20k nodes, and a cosine off by ~1e-5
# (measured: the same neighbours in the same order, and identical context-bench figures).
# The file keeps float32 (its format is unchanged).
MEMORY_DTYPE = np.float16
EXACT_LIMIT = 50_000
HNSW_EXPANSION_SEARCH = 128
HNSW_DTYPE = "f16"
# The background HNSW build's niceness (its thread only): it yields the cores to the
# server's engine thread, which searches exactly until the index is ready.
HNSW_BUILD_NICE = 10
_import_lock = threading.Lock()


def _usearch() -> Any:
    """`usearch.index`, imported after onnxruntime (see the module docstring)."""
    with _import_lock:
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        try:
            import onnxruntime  # noqa: F401  (load order only)
        except Exception:  # keyword-only installs may lack it; usearch alone is fine then
            pass
        import usearch.index  # ~30 ms warm, ~1 s cold: with the first vector search
    return usearch.index


def _json_pieces(values: list[Any], piece: int = 4096) -> Iterator[str]:
    """json.dumps(values) in pieces of `piece` items, never joined: the meta JSON is written
    as it comes (`save`). One call over Django's 42k ids held the GIL ~22 ms (the server's
    event loop stalled); joined, then added to and encoded, it was ~7 copies of a 2.6 MB
    string at 20k nodes, each one call holding the GIL, and on fresh memory (page faults:
    the VM's were ~0.1 ms each) 20-60 ms apiece (STALL16)."""
    yield "["
    for i in range(0, len(values), piece):
        yield ("," if i else "") + json.dumps(values[i:i + piece], separators=(",", ":"))[1:-1]
    yield "]"


NPZ_SLICE_BYTES = 1 << 20


def _write_npz(f: BinaryIO,
               members: Sequence[tuple[str, np.ndarray | list[bytes], np.dtype]]) -> None:
    """What `np.savez(f, name=array.astype(dtype), ...)` writes, converted and written
    ~1 MB at a time. np.savez copies 16 MB per call, and our BytesIO the whole archive
    once more: on whole Django that held the GIL for 35 ms (a stall of the server's loop).
    A member given as a list of bytes is a uint8 array of their concatenation, written
    piece by piece (never joined)."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, array, dtype in members:
            if isinstance(array, list):
                header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.uint8)),
                          "fortran_order": False, "shape": (sum(map(len, array)),)}
                with zf.open(f"{name}.npy", "w", force_zip64=True) as out:
                    np.lib.format.write_array_header_1_0(out, header)
                    for part in array:
                        out.write(part)
                continue
            header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                      "shape": array.shape}
            row_bytes = dtype.itemsize * max(1, int(np.prod(array.shape[1:])))
            rows = max(1, NPZ_SLICE_BYTES // row_bytes)
            with zf.open(f"{name}.npy", "w", force_zip64=True) as out:
                np.lib.format.write_array_header_1_0(out, header)
                for start in range(0, len(array), rows):
                    out.write(np.ascontiguousarray(array[start:start + rows], dtype=dtype).data)


class VectorStore:
    """Ids (node ids) <-> unit vectors, with the hash of the text each vector embeds."""

    def __init__(self, model_id: str = "", dim: int = DIM, exact_limit: int = EXACT_LIMIT) -> None:
        self.model_id = model_id
        self.dim = dim
        self.exact_limit = exact_limit
        self._vecs = np.zeros((0, dim), dtype=MEMORY_DTYPE)
        self._n = 0
        self._ids: list[str] = []
        self._hashes: list[str] = []
        self._keys: list[int] = []
        self._row: dict[str, int] = {}
        self._next_key = 0
        # the keys sorted and their rows (`_rows_of`: an HNSW search's keys to rows), made on
        # first use after the keys changed: a dict of every key per search was ~10 ms of each
        # hybrid answer over the Linux kernel's 106k vectors
        self._key_order: tuple[np.ndarray, np.ndarray] | None = None
        self._hnsw: Any = None          # above exact_limit, built by `_HnswBuild`
        self._build: _HnswBuild | None = None
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return self._n

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._row

    def ids(self) -> list[str]:
        return list(self._ids)

    def text_hash(self, node_id: str) -> str | None:
        row = self._row.get(node_id)
        return None if row is None else self._hashes[row]

    def vectors_by_hash(self, wanted: set[str]) -> dict[str, np.ndarray]:
        """A stored vector (a copy) for each of the `wanted` text hashes stored, to reuse
        instead of re-embedding. Only those are copied: a build asks once per 256-text
        slice (the hash list is still scanned each time, a set test per stored vector)."""
        with self._lock:
            return {h: self._vecs[i].copy() for i, h in enumerate(self._hashes) if h in wanted}

    def reusable(self, model_id: str, hashes: dict[str, str],
                 ) -> tuple[dict[str, np.ndarray], list[str]]:
        """(id -> a stored vector of the same text, the ids left to embed) for `hashes`
        (id -> text hash), after dropping another model's vectors."""
        self.use_model(model_id)
        known = self.vectors_by_hash(set(hashes.values()))
        reuse = {i: known[h] for i, h in hashes.items() if h in known}
        return reuse, [i for i in hashes if i not in reuse]

    def vector(self, node_id: str) -> np.ndarray | None:
        row = self._row.get(node_id)
        return None if row is None else self._vecs[row].astype(np.float32)

    # --- mutation ------------------------------------------------------------------------
    def upsert(self, ids: Sequence[str], vectors: np.ndarray, hashes: Sequence[str]) -> None:
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        with self._lock:
            new = [i for i in ids if i not in self._row]
            need = self._n + len(set(new))
            if need > len(self._vecs):
                # Grow by an eighth, not double: a save adding one symbol to a loaded 20k-row
                # matrix would otherwise take 30 MB more for the rest of the process's life.
                room = max(need, len(self._vecs) + len(self._vecs) // 8, 64)
                grown = np.zeros((room, self.dim), MEMORY_DTYPE)
                grown[:self._n] = self._vecs[:self._n]
                self._vecs = grown
            changed_rows: list[int] = []
            for node_id, vec, h in zip(ids, vectors, hashes, strict=True):
                row = self._row.get(node_id)
                if row is None:
                    row = self._n
                    self._n += 1
                    self._row[node_id] = row
                    self._ids.append(node_id)
                    self._hashes.append(h)
                    self._keys.append(self._next_key)
                    self._next_key += 1
                    self._key_order = None
                else:
                    self._hashes[row] = h
                    if self._hnsw is not None:
                        self._hnsw.remove(self._keys[row])
                self._vecs[row] = vec
                changed_rows.append(row)
                if self._build is not None:
                    self._build.touched.add(self._keys[row])
            if self._hnsw is not None and changed_rows:
                rows = np.array(changed_rows)
                self._hnsw.add(np.array([self._keys[r] for r in rows], dtype=np.uint64),
                               self._vecs[rows])

    def merge_from(self, other: VectorStore, accept: Callable[[str, str], bool]) -> list[str]:
        """Take `other`'s vectors that `accept(id, text hash)` and that differ from ours (a
        build child's slices, read by the serving process): only those rows are upserted, so
        an HNSW index in use grows by them instead of being rebuilt over every vector (the
        Linux kernel's 82k took ~30 s, once per slice the build wrote). Returns their ids."""
        if not len(other):
            return []
        with self._lock:
            self.use_model(other.model_id)
            rows = [r for r, (i, h) in enumerate(zip(other._ids, other._hashes, strict=True))
                    if self.text_hash(i) != h and accept(i, h)]
            if rows:
                self.upsert([other._ids[r] for r in rows], other._vecs[rows],
                            [other._hashes[r] for r in rows])
        return [other._ids[r] for r in rows]

    def remove(self, ids: Sequence[str]) -> int:
        removed = 0
        with self._lock:
            for node_id in ids:
                row = self._row.pop(node_id, None)
                if row is None:
                    continue
                removed += 1
                if self._hnsw is not None:
                    self._hnsw.remove(self._keys[row])
                if self._build is not None:
                    self._build.touched.add(self._keys[row])
                last = self._n - 1
                if row != last:   # move the last row into the hole
                    self._vecs[row] = self._vecs[last]
                    self._ids[row] = self._ids[last]
                    self._hashes[row] = self._hashes[last]
                    self._keys[row] = self._keys[last]
                    self._row[self._ids[row]] = row
                self._ids.pop()
                self._hashes.pop()
                self._keys.pop()
                self._n = last
                self._key_order = None
        return removed

    def use_model(self, model_id: str) -> None:
        """Drop every vector if they came from another model (incomparable)."""
        with self._lock:
            if self.model_id != model_id:
                if self._n:
                    log.info("embedding model changed (%s -> %s); recomputing vectors",
                             self.model_id, model_id)
                self.clear(model_id)

    def clear(self, model_id: str | None = None) -> None:
        """Drop every vector (when the model changed, old vectors are incomparable)."""
        with self._lock:
            if model_id is not None:
                self.model_id = model_id
            self._vecs = np.zeros((0, self.dim), dtype=MEMORY_DTYPE)
            self._n, self._next_key, self._hnsw, self._build = 0, 0, None, None
            self._ids, self._hashes, self._keys, self._row = [], [], [], {}
            self._key_order = None

    # --- search --------------------------------------------------------------------------
    def search(self, vec: np.ndarray, k: int = 20) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the `k` nearest vectors, best first."""
        with self._lock:
            n = self._n
            if n == 0 or k <= 0:
                return []
            k = min(k, n)
            q = np.asarray(vec, dtype=MEMORY_DTYPE).reshape(self.dim)
            us = _usearch()
            index = self._hnsw_index() if n >= self.exact_limit else None
            if index is None:      # exact: below the limit, or while the index is built
                matches = us.search(self._vecs[:n], q, k, us.MetricKind.Cos, exact=True)
                # as Python numbers first: one numpy scalar per hit was ~0.1 ms of k=100
                ids = self._ids
                return [(ids[key], 1.0 - d) for key, d in
                        zip(matches.keys.tolist(), matches.distances.tolist(), strict=True)]
            matches = index.search(q, k)
            rows = self._rows_of(np.asarray(matches.keys, np.uint64))
            return [(self._ids[int(r)], 1.0 - float(d))
                    for r, d in zip(rows, matches.distances, strict=True) if r >= 0]

    def _rows_of(self, keys: np.ndarray) -> np.ndarray:
        """The row of each key (-1: not stored), by bisection in the sorted keys."""
        if self._key_order is None:
            stored = np.array(self._keys, np.uint64)
            order = np.argsort(stored, kind="stable")
            self._key_order = (stored[order], order)
        ordered, rows = self._key_order
        if not len(ordered):
            return np.full(len(keys), -1, np.int64)
        at = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
        return np.where(ordered[at] == keys, rows[at], -1)

    def _hnsw_index(self, start: bool = True) -> Any:
        """The HNSW index if one is ready (a finished build swapped in here, by the caller's
        thread: the one writer), else None, its build started on a thread of its own from a
        snapshot. Built inline, the Linux kernel's 106k vectors held the server's engine
        thread ~23 s at its first hybrid search; an exact search over them is ~30 ms."""
        if self._hnsw is None:
            if self._build is None and start:
                log.info("building the HNSW index over %d vectors (exact search meanwhile)",
                         self._n)
                self._build = _HnswBuild(self._new_hnsw(), np.array(self._keys, np.uint64),
                                         self._vecs[:self._n].copy())
            elif self._build is not None and self._build.done.is_set():
                self._hnsw, build, self._build = self._build.index, self._build, None
                if build.error is not None:
                    log.warning("building the HNSW index failed: %s", build.error)
                    self._hnsw = None
                else:
                    self._catch_up(build.touched)
        return self._hnsw

    def hnsw_ready(self, timeout: float = 0.0) -> bool:
        """An HNSW index is in use (waiting up to `timeout` s for one being built)."""
        build = self._build
        if build is not None:
            build.done.wait(timeout)
        with self._lock:
            return self._n >= self.exact_limit and self._hnsw_index(start=False) is not None

    def _catch_up(self, touched: set[int]) -> None:
        """The rows upserted or removed while a snapshot was built: replayed on its index."""
        if not touched:
            return
        for key in touched:
            if key in self._hnsw:
                self._hnsw.remove(key)
        rows = [r for r, key in enumerate(self._keys) if key in touched]
        if rows:
            self._hnsw.add(np.array([self._keys[r] for r in rows], dtype=np.uint64),
                           self._vecs[rows])

    def _new_hnsw(self) -> Any:
        return _usearch().Index(ndim=self.dim, metric="cos", dtype=HNSW_DTYPE,
                                expansion_search=HNSW_EXPANSION_SEARCH)

    # --- persistence ---------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write `path` (npz) atomically, and the HNSW index beside it when one is in use."""
        with self._lock:
            head = json.dumps({"format": FORMAT_VERSION, "model_id": self.model_id,
                               "dim": self.dim, "next_key": self._next_key})
            meta = [head[:-1]]     # the same bytes as head with the three lists added
            for name, values in (("ids", self._ids), ("hashes", self._hashes),
                                 ("keys", self._keys)):
                meta.append(f',"{name}":')
                meta.extend(_json_pieces(values))
            meta.append("}")
            with atomic_writer(path) as f:
                _write_npz(f, [("vectors", self._vecs[:self._n], np.dtype(np.float32)),
                               ("meta", [m.encode("utf-8") for m in meta], np.dtype(np.uint8))])
            hnsw_path = path.with_suffix(".usearch")
            if self._n >= self.exact_limit:
                self._hnsw_index(start=False)   # a finished build taken in
            if self._hnsw is not None:
                tmp = hnsw_path.with_name(f".{hnsw_path.name}.{os.getpid()}.tmp")
                self._hnsw.save(str(tmp))
                os.replace(tmp, hnsw_path)
            elif hnsw_path.exists():
                hnsw_path.unlink()

    @classmethod
    def load(cls, path: Path, exact_limit: int = EXACT_LIMIT) -> VectorStore | None:
        """The saved store, or None when absent, damaged (moved aside) or of another format."""
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode("utf-8"))
                vecs = np.asarray(data["vectors"], dtype=MEMORY_DTYPE)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as e:
            move_aside(path, f"unreadable vector store: {e}")
            return None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
            log.info("vector store %s has another format; vectors will be recomputed", path)
            return None
        try:
            store = cls(str(meta["model_id"]), int(meta["dim"]), exact_limit)
            ids = [sys.intern(i) for i in meta["ids"]]   # shared with the graph's node ids
            hashes, keys = list(meta["hashes"]), list(meta["keys"])
            if not (len(ids) == len(hashes) == len(keys) == len(vecs)) or (
                    len(vecs) and vecs.shape[1] != store.dim):
                raise ValueError("ids, hashes, keys and vectors disagree")
        except (KeyError, TypeError, ValueError) as e:
            move_aside(path, f"malformed vector store: {e}")
            return None
        store._vecs, store._n = vecs, len(vecs)
        store._ids, store._hashes, store._keys = ids, hashes, [int(k) for k in keys]
        store._row = {node_id: r for r, node_id in enumerate(ids)}
        store._next_key = int(meta.get("next_key", max(store._keys, default=-1) + 1))
        if store._n >= exact_limit:
            store._hnsw = store._load_hnsw(path.with_suffix(".usearch"))
        return store

    def _load_hnsw(self, path: Path) -> Any:
        """The saved HNSW index if it holds exactly our keys; otherwise None (rebuilt from
        the vectors off the caller's thread at the first search, `_hnsw_index`)."""
        if path.exists():
            try:
                index = self._new_hnsw()
                index.load(str(path))
                if (index.ndim == self.dim and len(index) == self._n
                        and all(k in index for k in self._keys[:: max(1, self._n // 64)])):
                    return index
                log.info("HNSW index %s does not match the stored vectors; rebuilding", path)
            except Exception as e:  # usearch raises RuntimeError/ValueError on bad files
                log.warning("HNSW index %s is unreadable (%s); rebuilding from vectors", path, e)
        return None


class _HnswBuild:
    """An HNSW index built on a thread of its own (lowered priority, one core) from a
    snapshot of the keys and vectors; `touched` collects the keys changed meanwhile, which
    the store replays when it takes the index (`VectorStore._hnsw_index`)."""

    def __init__(self, index: Any, keys: np.ndarray, vecs: np.ndarray) -> None:
        self.index = index
        self.touched: set[int] = set()
        self.error: BaseException | None = None
        self.done = threading.Event()
        threading.Thread(target=self._run, args=(keys, vecs), name="neuralmind-hnsw",
                         daemon=True).start()

    def _run(self, keys: np.ndarray, vecs: np.ndarray) -> None:
        try:
            try:        # this thread only: answers and saves keep the cores first
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HNSW_BUILD_NICE)
            except OSError:
                pass
            self.index.add(keys, vecs, threads=1)
        except Exception as e:  # surfaced by the store: it searches exactly instead
            self.error = e
        finally:
            self.done.set()
