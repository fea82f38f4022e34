"""A server's index flush with the keyword side written off the engine thread.

`SearchIndex.flush` merges the keyword overlay into the base and rewrites it with the
search metadata; on the Linux kernel that is 61.5M entries, a 617 MB base and ~100-150 MB of
metadata, ~10 s, and it ran on the server's engine thread, so a save arriving during it
waited (BENCHMARKS.md LIVE9: the 5-13 s saves). Here the engine thread only takes a
snapshot (`begin_flush`: the base is immutable and mapped, the overlay and dead marks are
a few saves' worth, the metadata's three containers copied in ~0.1 s), another thread
merges and writes it (`KeywordFlush.run`, atomic replaces as before: a process killed
mid-write loses nothing), and the engine thread takes the written base in
(`KeywordFlush.finish`), applying again the documents saves changed meanwhile. One writer
of the files at a time (`SearchIndex._write_lock`, taken by the jobs and a synchronous
`flush`, never by `begin_flush`): a job behind a newer write writes nothing, and only the
latest snapshot's base is taken in.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from neuralmind.index.bm25 import WrittenBase
from neuralmind.index.search_meta import write_meta
from neuralmind.index.state_files import BM25_FILE, META_FILE, VECTORS_FILE

if TYPE_CHECKING:
    from neuralmind.index.search_index import SearchIndex


class KeywordFlush:
    """The keyword side of one flush: snapshot (engine thread), write (any), take in."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index
        self.bm25 = index._bm25
        self.version = index._keyword_version
        self.journal_seq = index.journal.last    # the saves this snapshot holds
        self._job = index._bm25.snapshot()
        self.snapshot = index._bm25.snapshots
        self._meta = (dict(index._names), dict(index._kw_hash), set(index._pending),
                      index.graph_token or "")
        self.written: WrittenBase | None = None
        self.seconds = 0.0          # how long `run` took

    def run(self) -> None:
        """Merge and write the snapshot (unless a newer state is on disk already)."""
        index, paths = self.index, self.index._paths()
        t0 = time.perf_counter()
        with index._write_lock:
            if index._keyword_written >= self.version:
                return
            index._writing.update((BM25_FILE, META_FILE))    # not another process's
            try:
                self.written = self._job(paths[BM25_FILE])
                write_meta(paths[META_FILE], *self._meta)
                index._keyword_written = self.version
            finally:
                index._stamps.update({n: index._stamp(paths[n]) for n in (BM25_FILE, META_FILE)})
                index._writing.clear()
        self.seconds = time.perf_counter() - t0
        self._meta = ({}, {}, set(), "")

    def finish(self) -> None:
        """Serve the written base (the saves made since applied again on it)."""
        index = self.index
        with index._lock:
            if index._bm25 is self.bm25:
                self.bm25.adopt(self.written, self.snapshot)
            if index._keyword_version == self.version and self.written is not None:
                index._unsaved["keyword"] = False
            if self.written is not None:
                index.journal.drop_through(self.journal_seq)


def begin_flush(index: SearchIndex) -> KeywordFlush | None:
    """What `flush` does, with the keyword side left to the returned job (None: nothing
    left to write). Another process's generation is loaded first, as `flush` does; the
    vectors, when they are ours to write, are written here."""
    with index._lock:   # (not the write lock: a job writing holds it for seconds)
        if index.defer_writes and index.unsaved:
            index.reload_if_changed()
        if index._unsaved["vectors"] and not index.handoff.active:
            path = index._paths()[VECTORS_FILE]
            index._vectors.save(path)
            index._unsaved["vectors"] = False
            index._stamps[VECTORS_FILE] = index._stamp(path)
        if not index._unsaved["keyword"]:
            return None
        return KeywordFlush(index)
