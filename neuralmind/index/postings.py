"""Flat keyword postings: the BM25 index's base, one binary file, memory-mapped.

Why not Python dicts: on the Linux kernel (835k documents, 4.1M terms, 61.5M posting
entries) the postings as dicts took 3.5 GB and 12 min to load from 829 MB of JSON.
Here a term's posting is a run of int32 document numbers and uint16 counts (uint32
when some count needs it), ~6 B per entry; loading maps the file instead of decoding
it, so only the postings a question touches are ever read.

Layout: MAGIC, a little-endian u32 header length, a JSON header (version, counts,
dtypes, each section's offset and size, the CRC-32 of the body), then 8-byte-aligned
sections:
  doc_blob, doc_off[D+1]     document ids (UTF-8) and where each starts
  lengths[D]                 document lengths (int64)
  term_blob, term_off[T+1]   terms (UTF-8) by term number
  term_hash[T], term_perm[T] the terms' 64-bit blake2b hashes sorted, each one's term number
  post_off[T+1]              where each term's entries start
  post_docs[E], post_tf[E]   document numbers and counts
Terms are numbered in first-seen order, so `merge` appends new terms without renumbering;
a lookup hashes the term and binary-searches `term_hash` (a hash may repeat: the term's
bytes decide). Documents are numbered in order; removed ones are dropped by `merge`.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import mmap
import os
import struct
import sys
import zlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neuralmind.statedir import atomic_writer, stat_stamp

MAGIC = b"NMKWPOST"
VERSION = 1
_ALIGN = 8
_SECTIONS = ("doc_blob", "doc_off", "lengths", "term_blob", "term_off", "term_hash",
             "term_perm", "post_off", "post_docs", "post_tf")
# Entries placed per numpy step in `merge` (~2.5 MB of temporaries). Each step's numpy calls
# hold the GIL: at 1 << 20 one `np.repeat` of a step held a server's GIL 50-170 ms at the
# Django 20k subset (947k entries, one step) and stalled its event loop (STALL16).
MERGE_CHUNK = 1 << 16


class DamagedPostings(ValueError):
    """The file is not a postings file of ours, or does not check out."""


class OtherVersion(ValueError):
    """A postings file of another format version (rebuilt, not moved aside)."""


def term_hash(term: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(term, digest_size=8).digest(), "little")


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")   # ids are paths: any bytes a tree holds


@dataclass
class FlatPostings:
    """Read-only postings of documents `ids` (numbered by position)."""

    ids: list[str]
    lengths: np.ndarray        # int64[D]
    term_blob: np.ndarray      # uint8
    term_off: np.ndarray       # int64[T+1]
    term_hash: np.ndarray      # uint64[T], sorted
    term_perm: np.ndarray      # int32[T]
    post_off: np.ndarray       # int64[T+1]
    post_docs: np.ndarray      # int32[E]
    post_tf: np.ndarray        # uint16 or uint32[E]
    _mapped: Any = None        # the mmap the arrays view, kept alive with them
    # the mapped file's identity when opened (`file_stamp`); None for a base in memory
    stamp: tuple[int, int, int, int] | None = None

    @property
    def term_count(self) -> int:
        return len(self.term_off) - 1

    @property
    def entries(self) -> int:
        return int(self.post_off[-1])

    def term(self, tid: int) -> str:
        raw = bytes(self.term_blob[self.term_off[tid]:self.term_off[tid + 1]])
        return raw.decode("utf-8", "surrogatepass")

    def lookup(self, term: str | bytes) -> int:
        """The term's number, or -1."""
        raw = _encode(term) if isinstance(term, str) else term
        h = np.uint64(term_hash(raw))
        i = int(np.searchsorted(self.term_hash, h, "left"))
        while i < len(self.term_hash) and self.term_hash[i] == h:
            tid = int(self.term_perm[i])
            if bytes(self.term_blob[self.term_off[tid]:self.term_off[tid + 1]]) == raw:
                return tid
            i += 1
        return -1

    def posting(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """(document numbers, counts) of term number `tid`."""
        start, end = int(self.post_off[tid]), int(self.post_off[tid + 1])
        return self.post_docs[start:end], self.post_tf[start:end]

    def terms_of(self, doc: int) -> dict[str, int]:
        """A document's terms and counts: a scan of every entry (tests and inspection)."""
        at = np.flatnonzero(self.post_docs == doc)
        tids = np.searchsorted(self.post_off, at, "right") - 1
        return {self.term(int(t)): int(self.post_tf[a]) for t, a in zip(tids, at, strict=True)}

    # --- the file -------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Atomically replace `path` (temporary file, fsync, rename)."""
        id_bytes = [_encode(i) for i in self.ids]
        doc_off = np.zeros(len(id_bytes) + 1, np.int64)
        np.cumsum([len(b) for b in id_bytes], out=doc_off[1:])
        arrays: dict[str, np.ndarray] = {
            "doc_blob": np.frombuffer(b"".join(id_bytes), np.uint8), "doc_off": doc_off,
            "lengths": self.lengths, "term_blob": self.term_blob, "term_off": self.term_off,
            "term_hash": self.term_hash, "term_perm": self.term_perm,
            "post_off": self.post_off, "post_docs": self.post_docs, "post_tf": self.post_tf}
        sections: dict[str, list[Any]] = {}
        offset, crc = 0, 0
        for name in _SECTIONS:
            arr = np.ascontiguousarray(arrays[name])
            sections[name] = [arr.dtype.str, offset, int(arr.size)]
            crc = zlib.crc32(memoryview(arr).cast("B"), crc)
            pad = -arr.nbytes % _ALIGN
            crc = zlib.crc32(b"\0" * pad, crc)
            offset += arr.nbytes + pad
        header = json.dumps({"version": VERSION, "docs": len(self.ids),
                             "terms": self.term_count, "entries": self.entries,
                             "body_bytes": offset, "crc32": crc, "sections": sections},
                            separators=(",", ":")).encode("ascii")
        header += b" " * (-(len(MAGIC) + 4 + len(header)) % _ALIGN)
        with atomic_writer(path) as f:
            f.write(MAGIC + struct.pack("<I", len(header)) + header)
            for name in _SECTIONS:
                arr = np.ascontiguousarray(arrays[name])
                f.write(memoryview(arr).cast("B"))
                f.write(b"\0" * (-arr.nbytes % _ALIGN))

    @classmethod
    def open(cls, path: Path, ids: list[str] | None = None) -> FlatPostings:
        """Map `path`. OSError when unreadable; OtherVersion; DamagedPostings when it does
        not check out (its CRC-32 is computed by reading the file, not through the map,
        so the check leaves no pages in this process's memory). `ids`: the document ids
        when the caller has them (a save that just wrote the file), else decoded and
        interned (one string per id in the process, shared with the graph)."""
        with open(path, "rb") as f:
            head = f.read(len(MAGIC) + 4)
            if len(head) < len(MAGIC) + 4 or head[:len(MAGIC)] != MAGIC:
                raise DamagedPostings("not a keyword postings file")
            (hlen,) = struct.unpack("<I", head[len(MAGIC):])
            try:
                header = json.loads(f.read(hlen))
            except ValueError as e:
                raise DamagedPostings(f"unreadable header: {e}") from None
            if not isinstance(header, dict):
                raise DamagedPostings("unreadable header")
            if header.get("version") != VERSION:
                raise OtherVersion(f"format version {header.get('version')}")
            base = len(MAGIC) + 4 + hlen
            crc = 0
            while block := f.read(1 << 24):
                crc = zlib.crc32(block, crc)
            size = f.tell() - base
            if size != header.get("body_bytes") or crc != header.get("crc32"):
                raise DamagedPostings("truncated or altered (size or CRC-32 differs)")
            stamp = stat_stamp(os.fstat(f.fileno()))
            try:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                arrays = {name: np.frombuffer(mapped, np.dtype(dt), count, base + off)
                          for name, (dt, off, count) in header["sections"].items()}
            except (KeyError, TypeError, ValueError) as e:
                raise DamagedPostings(f"malformed header: {e}") from None
        if ids is None:
            blob, off = arrays["doc_blob"], arrays["doc_off"]
            raw = bytes(blob)
            ids = [sys.intern(raw[off[i]:off[i + 1]].decode("utf-8", "surrogatepass"))
                   for i in range(len(off) - 1)]
            del raw, blob, off
            _forget_pages(mapped, base + header["sections"]["lengths"][1])
        flat = cls(ids, arrays["lengths"], arrays["term_blob"], arrays["term_off"],
                   arrays["term_hash"], arrays["term_perm"], arrays["post_off"],
                   arrays["post_docs"], arrays["post_tf"], mapped, stamp)
        flat._check(header)
        return flat

    def _check(self, header: dict[str, Any]) -> None:
        d, t, e = len(self.ids), self.term_count, self.entries
        if (d != header["docs"] or t != header["terms"] or e != header["entries"]
                or len(self.lengths) != d or len(self.term_hash) != t
                or len(self.term_perm) != t or len(self.post_off) != t + 1
                or len(self.post_docs) != e or len(self.post_tf) != e
                or int(self.term_off[-1]) != len(self.term_blob)):
            raise DamagedPostings("section sizes disagree")


class DocNumbers:
    """A base's document id -> number (its position in `ids`), as the ids' hashes sorted
    with their positions: 12 bytes a document, where a dict was ~75 (its table and an int
    per number past 256: ~60 MB for the Linux kernel's 835k documents, held by a server
    for its life). A lookup is a binary search (`bisect` over an `array`: ~1 us; numpy's
    searchsorted on one value was ~10 us), then the id itself compared (hashes can
    collide); `hash()` of a str is fixed for the process, and this table never leaves it."""

    __slots__ = ("ids", "hashes", "order")

    def __init__(self, ids: list[str]) -> None:
        self.ids = ids
        hashes = np.fromiter((hash(i) for i in ids), np.int64, len(ids))
        order = np.argsort(hashes, kind="stable").astype(np.int32)
        self.hashes = array("q", hashes[order].tobytes())
        self.order = array("i", order.tobytes())

    def __len__(self) -> int:
        return len(self.ids)

    def merged(self, alive: np.ndarray | None, ids: list[str]) -> DocNumbers:
        """The numbers of the base `merge` makes from this one's (`alive` ones kept in
        order, then `ids`'s new documents after them): this table's arrays renumbered
        and the new documents' hashes sorted in, numpy throughout (sorting releases the
        GIL). Building it from the ids, a Python call per document, held a server's GIL
        beside its saves: on the Linux kernel a dict of 835k numbers was ~15% of an index
        write's GIL samples (KERN11)."""
        hashes = np.frombuffer(self.hashes, np.int64)
        order = np.frombuffer(self.order, np.int32)
        if alive is not None:
            renumber = np.cumsum(alive, dtype=np.int64) - 1
            live = alive[order]
            hashes, order = hashes[live], renumber[order[live]]
        first = len(hashes)
        fresh = np.fromiter((hash(i) for i in ids[first:]), np.int64, len(ids) - first)
        hashes = np.concatenate([hashes, fresh])
        order = np.concatenate([order.astype(np.int32),
                                np.arange(first, len(ids), dtype=np.int32)])
        by_hash = np.argsort(hashes, kind="stable")
        table = DocNumbers.__new__(DocNumbers)
        table.ids = ids
        table.hashes = array("q", hashes[by_hash].tobytes())
        table.order = array("i", order[by_hash].tobytes())
        return table

    def get(self, doc_id: str) -> int | None:
        h = hash(doc_id)
        hashes, n = self.hashes, len(self.hashes)
        i = bisect.bisect_left(hashes, h)
        while i < n and hashes[i] == h:
            num = self.order[i]
            if self.ids[num] == doc_id:
                return num
            i += 1
        return None


def _forget_pages(mapped: mmap.mmap, end: int) -> None:
    """Unmap the pages before byte `end` from this process (the ids' sections, read once
    when the ids were decoded and never again): clean file pages, so nothing is lost, but
    while mapped they count in the process's RSS (~50 MB on the Linux kernel's 835k ids)."""
    size = end - end % mmap.PAGESIZE
    if size > 0:
        try:
            mapped.madvise(mmap.MADV_DONTNEED, 0, size)
        except (AttributeError, OSError, ValueError):  # no madvise here: the pages stay
            pass


def empty() -> FlatPostings:
    z64 = np.zeros(1, np.int64)
    return FlatPostings([], np.zeros(0, np.int64), np.zeros(0, np.uint8), z64,
                        np.zeros(0, np.uint64), np.zeros(0, np.int32), z64.copy(),
                        np.zeros(0, np.int32), np.zeros(0, np.uint16))


def merge(base: FlatPostings, alive: np.ndarray | None, ids: list[str], lengths: list[int],
          postings: Iterable[tuple[str, Iterable[tuple[str, int]]]]) -> FlatPostings:
    """A new base: `base`'s documents still `alive` (None: all), in order, then the
    documents `ids` with their `lengths` and `postings` (term -> (doc id, count) pairs).
    Base entries are copied MERGE_CHUNK at a time, so the temporaries stay small next
    to the arrays themselves."""
    keep = np.arange(len(base.ids)) if alive is None else np.flatnonzero(alive)
    remap = None
    if alive is not None:
        remap = np.full(len(base.ids), -1, np.int64)
        remap[keep] = np.arange(len(keep))
    first = len(keep)
    number = {doc_id: first + i for i, doc_id in enumerate(ids)}
    # the new entries, and the terms the base does not have
    new_terms: list[bytes] = []
    new_hashes: list[int] = []
    known: dict[str, int] = {}
    o_tid, o_doc, o_tf = array("i"), array("i"), array("I")   # 12 B an entry, not ~100 as lists
    t_base = base.term_count
    for term, pairs in postings:
        tid = known.get(term)
        if tid is None:
            raw = _encode(term)
            tid = base.lookup(raw) if t_base else -1
            if tid < 0:
                tid = t_base + len(new_terms)
                new_terms.append(raw)
                new_hashes.append(term_hash(raw))
            known[term] = tid
        for doc_id, tf in pairs:
            o_tid.append(tid)
            o_doc.append(number[doc_id])
            o_tf.append(tf)
    del known, number
    n_terms = t_base + len(new_terms)
    ot = np.frombuffer(o_tid, np.int32)
    od = np.frombuffer(o_doc, np.int32)
    of = np.frombuffer(o_tf, np.uint32)
    del o_tid, o_doc, o_tf
    # entries per term: the base's live ones, then the new ones
    counts = np.zeros(n_terms, np.int64)
    e_base = base.entries
    for s in range(0, e_base, MERGE_CHUNK):
        tids, live = _chunk(base, alive, s, min(e_base, s + MERGE_CHUNK))
        counts[:t_base] += np.bincount(tids[live] if live is not None else tids,
                                       minlength=t_base)
    counts += np.bincount(ot, minlength=n_terms)
    post_off = np.zeros(n_terms + 1, np.int64)
    np.cumsum(counts, out=post_off[1:])
    total = int(post_off[-1])
    big_tf = max(int(base.post_tf.max()) if e_base else 0, int(of.max()) if len(of) else 0)
    post_docs = np.empty(total, np.int32)
    post_tf = np.empty(total, np.uint32 if big_tf > 0xFFFF else np.uint16)
    fill = post_off[:-1].copy()       # next free slot of each term
    for s in range(0, e_base, MERGE_CHUNK):
        e = min(e_base, s + MERGE_CHUNK)
        tids, live = _chunk(base, alive, s, e)
        docs, tfs = base.post_docs[s:e], base.post_tf[s:e]
        if live is not None:
            tids, docs, tfs = tids[live], remap[docs[live]], tfs[live]   # type: ignore[index]
        _place(tids, docs, tfs, fill, post_docs, post_tf)
    for s in range(0, len(ot), MERGE_CHUNK):    # one run per term: no sort needed
        _place(ot[s:s + MERGE_CHUNK], od[s:s + MERGE_CHUNK], of[s:s + MERGE_CHUNK], fill,
               post_docs, post_tf)
    # terms: the base's, then the new ones; hashes re-sorted with them
    blob = np.concatenate([base.term_blob, np.frombuffer(b"".join(new_terms), np.uint8)])
    term_off = np.concatenate([base.term_off, base.term_off[-1]
                               + np.cumsum([len(t) for t in new_terms], dtype=np.int64)])
    hashes = np.concatenate([base.term_hash, np.array(new_hashes, np.uint64)])
    perm = np.concatenate([base.term_perm, np.arange(t_base, n_terms, dtype=np.int32)])
    by_hash = np.argsort(hashes, kind="stable")
    kept_ids = base.ids if alive is None else [base.ids[i] for i in keep]
    return FlatPostings(kept_ids + ids,
                        np.concatenate([base.lengths[keep], np.array(lengths, np.int64)]),
                        blob, term_off, hashes[by_hash], perm[by_hash].astype(np.int32),
                        post_off, post_docs, post_tf)


def _chunk(base: FlatPostings, alive: np.ndarray | None, s: int, e: int
           ) -> tuple[np.ndarray, np.ndarray | None]:
    """Term numbers of base entries s..e, and which are live (None: all)."""
    off = base.post_off
    t0 = int(np.searchsorted(off, s, "right")) - 1
    t1 = int(np.searchsorted(off, e - 1, "right"))        # one past the last term
    runs = np.minimum(off[t0 + 1:t1 + 1], e) - np.maximum(off[t0:t1], s)
    tids = np.repeat(np.arange(t0, t1, dtype=np.int64), runs)
    return tids, (None if alive is None else alive[base.post_docs[s:e]])


def _place(tids: np.ndarray, docs: np.ndarray, tfs: np.ndarray, fill: np.ndarray,
           post_docs: np.ndarray, post_tf: np.ndarray) -> None:
    """Write entries at each term's next free slots. Entries come in runs, one per term
    within a call (a term's run may go on in the next call: `fill` moved past it)."""
    if not len(tids):
        return
    starts = np.flatnonzero(np.diff(tids, prepend=-1))      # first entry of each run
    counts = np.diff(np.append(starts, len(tids)))
    run_tids = tids[starts]
    dest = fill[tids] + np.arange(len(tids)) - np.repeat(starts, counts)
    post_docs[dest] = docs
    post_tf[dest] = tfs
    fill[run_tids] += counts
