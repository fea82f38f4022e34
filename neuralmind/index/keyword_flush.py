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

What is written is what changed: the base only when the served one is not the file on
disk already (`BM25Index.is_file`: at a build's end only the pending list had changed, and
the 617 MB base was rewritten as is), and the metadata as the entries changed since its
last full file when they are few (`search_meta.py`: the 148 MB of JSON was half the
writer's GIL time beside the saves).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from neuralmind.index.bm25 import WrittenBase
from neuralmind.index.state_files import BM25_FILE, META_DELTA_FILE, META_FILE, VECTORS_FILE
from neuralmind.statedir import file_stamp

if TYPE_CHECKING:
    from neuralmind.index.search_index import SearchIndex


class KeywordFlush:
    """The keyword side of one flush: snapshot (engine thread), write (any), take in."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index
        self.bm25 = index._bm25
        self.version = index._keyword_version
        self.journal_seq = index.journal.last    # the saves this snapshot holds
        base = index._paths()[BM25_FILE]
        # the base on disk is the one served (None: it is written)
        self._on_disk = file_stamp(base) if index._bm25.is_file(base) else None
        self._job = None if self._on_disk else index._bm25.snapshot()
        self.snapshot = index._bm25.snapshots
        self._meta = index.meta_write()
        self.written: WrittenBase | None = None
        self.done = False           # the snapshot is on disk
        self.seconds = 0.0          # how long `run` took
        self.wrote_base = False     # (a server paces its writes by the base's)

    def run(self) -> None:
        """Merge and write the snapshot (unless a newer state is on disk already)."""
        index, paths = self.index, self.index._paths()
        t0 = time.perf_counter()
        with index._write_lock:
            if index._keyword_written >= self.version:
                return
            if self._job is None and file_stamp(paths[BM25_FILE]) != self._on_disk:
                return          # replaced since (another writer): the next write does it
            if self._meta.base not in (None, index._meta_changes.file_id):
                return          # a full file written since the delta was planned: likewise
            files = (BM25_FILE, META_FILE, META_DELTA_FILE)
            index._writing.update(files)    # not another process's
            try:
                if self._job is not None:
                    self.written = self._job(paths[BM25_FILE])
                    self.wrote_base = True
                self._meta.write(paths[META_FILE])
                with index._lock:
                    index._meta_changes.written(self._meta)
                index._keyword_written = self.version
                self.done = True
            finally:
                index._stamps.update({n: file_stamp(paths[n]) for n in files})
                index._writing.clear()
        self.seconds = time.perf_counter() - t0
        self._meta.names = self._meta.kw_hash = None

    def finish(self) -> None:
        """Serve the written base (the saves made since applied again on it)."""
        index = self.index
        with index._lock:
            if index._bm25 is self.bm25 and self._job is not None:
                self.bm25.adopt(self.written, self.snapshot)
            if index._keyword_version == self.version and self.done:
                index._unsaved["keyword"] = False
            if self.done:
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
            index._stamps[VECTORS_FILE] = file_stamp(path)
        if not index._unsaved["keyword"]:
            return None
        return KeywordFlush(index)
