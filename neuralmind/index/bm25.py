"""BM25 over node texts, updated incrementally, persisted as flat postings.

The index is a base and an overlay. The base (`postings.FlatPostings`) is flat arrays,
memory-mapped from the saved file: a document removed from it is only marked dead. The
overlay holds what was added since, as dicts (term -> {doc: tf}; a term in one overlay
document is a (doc, tf) tuple, 56 bytes where a one-entry dict is 184), and a document
keeps the tuple of its terms there (to remove it). When the overlay passes
KEYWORD_OVERLAY_ENTRIES, and on every save, it is merged into a new base, so a build of
the Linux kernel (61.5M entries: 3.5 GB as dicts) never holds more than that in dicts.
Scoring is the same float64 arithmetic, in the same order, over both: rankings do not
depend on where a document lives (tests/index/test_bm25.py compares them).

Scoring is the Lucene/ATIRE form: idf = ln(1 + (N - df + 0.5) / (df + 0.5)).
k1 and b are search-time parameters, not index state: a saved index is scored
with the current ones. b = 0.4 (was 0.75) because node texts range from a
one-line signature to a whole file and full length normalisation buries the
files a change request is about (dev sets, hybrid: retrieval MRR .837 -> .844,
history MRR .741 -> .754, R@5 .782 -> .788; b 0.3 / 0.5 / 0.9 and k1 0.9-2.0
measured too, see search_index.py).
"""

from __future__ import annotations

import heapq
import logging
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neuralmind.config import BASE_LENGTHS_KEPT, KEYWORD_OVERLAY_ENTRIES
from neuralmind.index.postings import (
    DamagedPostings,
    DocNumbers,
    FlatPostings,
    OtherVersion,
    empty,
    merge,
)
from neuralmind.index.tokens import code_tokens, token_counts
from neuralmind.statedir import file_stamp, move_aside

log = logging.getLogger("neuralmind.index")

K1 = 1.2
B = 0.4
LEGACY_FILE = "bm25.json"   # the JSON keyword index before postings.py: rebuilt, then removed


@dataclass
class WrittenBase:
    """A base written and mapped off the serving thread, numbered, its subset masks made."""

    base: FlatPostings
    numbers: DocNumbers
    masks: dict[Callable[[str], bool], np.ndarray]


class BM25Index:
    """Keyword index: document id -> term frequencies, with live postings."""

    def __init__(self, k1: float = K1, b: float = B,
                 overlay_entries: int = KEYWORD_OVERLAY_ENTRIES) -> None:
        self.k1 = k1
        self.b = b
        self.overlay_entries = overlay_entries
        self._base: FlatPostings = empty()
        self._alive: np.ndarray | None = None      # base documents still live (None: all)
        self._base_num: DocNumbers | None = None   # base id -> number, made on first need
        self._base_n = 0                           # live base documents
        self._base_total = 0                       # and their summed lengths
        self._base_masks: dict[Callable[[str], bool], np.ndarray] = {}
        self._base_lengths: dict[str, int] = {}    # `length`'s base answers, this base only
        # the overlay
        self._docs: dict[str, tuple[str, ...]] = {}     # doc -> its distinct terms
        self._lengths: dict[str, int] = {}
        self._postings: dict[str, dict[str, int] | tuple[str, int]] = {}
        self._total_length = 0
        self._entries = 0
        self._subset_stats: dict[Callable[[str], bool], tuple[int, int]] = {}
        self._since: set[str] | None = None   # docs changed since a `snapshot` (being written)
        self.snapshots = 0

    def __len__(self) -> int:
        return self._base_n + len(self._docs)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs or (isinstance(doc_id, str)
                                        and self._base_number(doc_id) is not None)

    def ids(self) -> list[str]:
        base = self._base.ids
        live = base if self._alive is None else [base[i] for i in np.flatnonzero(self._alive)]
        return [*live, *self._docs]

    def length(self, doc_id: str) -> int:
        """A document's token count (0: not indexed): the learned file step's size feature.
        A base document's is kept until the base changes or the document leaves it
        (BASE_LENGTHS_KEPT): the step asks it of the same ~130 files every change request,
        and finding a base number bisects the ids (~3 us a file)."""
        if doc_id in self._lengths:
            return self._lengths[doc_id]
        kept = self._base_lengths.get(doc_id)
        if kept is not None:
            return kept
        num = self._base_number(doc_id)
        n = 0 if num is None else int(self._base.lengths[num])
        if len(self._base_lengths) >= BASE_LENGTHS_KEPT:
            self._base_lengths.clear()
        self._base_lengths[doc_id] = n
        return n

    def add(self, doc_id: str, text: str) -> None:
        """Index `text` under `doc_id`, replacing what the id held before."""
        self.add_terms(doc_id, token_counts(text))

    def add_terms(self, doc_id: str, terms: dict[str, int]) -> None:
        if self._since is not None:
            self._since.add(doc_id)
        if not self.remove(doc_id):
            self._subset_stats.clear()
        tf = {t: int(n) for t, n in terms.items() if n > 0}
        self._docs[doc_id] = tuple(tf)
        length = sum(tf.values())
        self._lengths[doc_id] = length
        self._total_length += length
        self._entries += len(tf)
        postings = self._postings
        for term, n in tf.items():
            posting = postings.get(term)
            if posting is None:
                postings[term] = (doc_id, n)
            elif posting.__class__ is tuple:
                postings[term] = {posting[0]: posting[1], doc_id: n}
            else:
                posting[doc_id] = n
        if self._entries >= self.overlay_entries:
            self.compact()

    def remove(self, doc_id: str) -> bool:
        if self._since is not None:
            self._since.add(doc_id)
        terms = self._docs.pop(doc_id, None)
        if terms is None:
            return self._drop_base(doc_id)
        self._subset_stats.clear()
        self._total_length -= self._lengths.pop(doc_id)
        self._entries -= len(terms)
        postings = self._postings
        for term in terms:
            posting = postings.get(term)
            if posting is None:
                continue
            if posting.__class__ is tuple:
                if posting[0] == doc_id:
                    del postings[term]
                continue
            posting.pop(doc_id, None)
            if len(posting) == 1:
                postings[term] = next(iter(posting.items()))
            elif not posting:
                del postings[term]
        return True

    # --- the base --------------------------------------------------------------------------
    def number_documents(self) -> None:
        """Make the base documents' id -> number map now, not at the first save that needs
        it: a server calls this at warm-up and after each flush (its idle time), since every
        flush makes a new base. On the Linux kernel's 835k documents it is ~0.4 s, which the
        first save after a load or a pause paid."""
        if self._base_n and self._base_num is None:
            self._base_num = DocNumbers(self._base.ids)

    def _base_number(self, doc_id: str) -> int | None:
        """The live base document's number (None: not a live base document)."""
        if not self._base_n:
            return None
        numbers = self._base_num
        if numbers is None:
            numbers = self._base_num = DocNumbers(self._base.ids)
        num = numbers.get(doc_id)
        if num is None or (self._alive is not None and not self._alive[num]):
            return None
        return num

    def _drop_base(self, doc_id: str) -> bool:
        num = self._base_number(doc_id)
        if num is None:
            return False
        if self._alive is None:
            self._alive = np.ones(len(self._base.ids), bool)
        self._alive[num] = False
        self._base_lengths.pop(doc_id, None)
        self._base_n -= 1
        self._base_total -= int(self._base.lengths[num])
        self._subset_stats.clear()
        return True

    def _set_base(self, base: FlatPostings) -> None:
        self._base, self._alive, self._base_num = base, None, None
        self._base_n = len(base.ids)
        self._base_total = int(base.lengths.sum())
        self._base_masks.clear()
        self._base_lengths.clear()
        self._subset_stats.clear()

    def compact(self) -> None:
        """Merge the overlay and the dead marks into a new base (flat arrays in memory
        until the next save maps them from the file)."""
        if not self._docs and self._alive is None:
            return
        self._since = None          # a snapshot being written is not adopted: a new base
        ids = list(self._docs)
        base = merge(self._base, self._alive, ids, [self._lengths[d] for d in ids],
                     self._overlay_postings())
        self._postings, self._docs, self._lengths = {}, {}, {}
        self._total_length = self._entries = 0
        self._set_base(base)

    def _overlay_postings(self) -> Iterator[tuple[str, Iterable[tuple[str, int]]]]:
        for term, posting in self._postings.items():
            yield term, ((posting,) if posting.__class__ is tuple
                         else posting.items())   # type: ignore[union-attr]

    def _base_mask(self, subset: Callable[[str], bool]) -> np.ndarray:
        """Which base documents are in `subset` (made once per base)."""
        mask = self._base_masks.get(subset)
        if mask is None:
            ids = self._base.ids
            mask = np.fromiter((subset(i) for i in ids), bool, len(ids))
            self._base_masks[subset] = mask
        return mask

    # --- reading ---------------------------------------------------------------------------
    def _posting(self, term: str) -> dict[str, int] | None:
        """The overlay documents containing `term` with their counts (None: none)."""
        posting = self._postings.get(term)
        if posting is None or posting.__class__ is not tuple:
            return posting
        return {posting[0]: posting[1]}

    def _base_posting(self, term: str, mask: np.ndarray | None
                      ) -> tuple[np.ndarray, np.ndarray] | None:
        """(document numbers, counts) of the base documents in `mask` holding `term`."""
        if not self._base_n:
            return None
        tid = self._base.lookup(term)
        if tid < 0:
            return None
        docs, tfs = self._base.posting(tid)
        if mask is not None:
            keep = mask[docs]
            docs, tfs = docs[keep], tfs[keep]
        return (docs, tfs) if len(docs) else None

    def release(self) -> None:
        """Empty the index a posting at a time, for a dropped generation: freeing ~10^6
        entries in one go holds the GIL for tens of ms; a Python loop lets threads in."""
        for term in list(self._postings):
            del self._postings[term]
        for doc_id in list(self._docs):
            del self._docs[doc_id]
        self._lengths.clear()
        self._total_length = self._entries = 0
        self._set_base(empty())

    def idf(self, term: str) -> float:
        base = self._base_posting(term, self._alive)
        overlay = self._posting(term)
        df = (len(base[0]) if base else 0) + (len(overlay) if overlay else 0)
        n = len(self)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def search(self, query: str, k: int = 20) -> list[tuple[str, float]]:
        """Best `k` documents for the query's code tokens, highest score first."""
        return self.search_terms(code_tokens(query), k)

    def search_terms(self, terms: Iterable[str], k: int = 20,
                     subset: Callable[[str], bool] | None = None,
                     b: float | None = None) -> list[tuple[str, float]]:
        """Best `k` documents for the terms. With `subset`, only its documents are scored,
        with the subset's own statistics (count, mean length, document frequencies): whole
        files ranked among files, not among the short symbol texts around them.

        Each document's score is summed term by term in the question's order with the
        same float64 operations whether it lives in the base (numpy, a posting at a
        time) or the overlay (Python), so the ranking is the same either way."""
        if not len(self):
            return []
        b = self.b if b is None else b
        n, total = self._stats(subset)
        avg = total / n if n else 1.0
        mask = self._alive
        if subset is not None:
            mask = self._base_mask(subset) if mask is None else mask & self._base_mask(subset)
        base_scores: np.ndarray | None = None
        scores: dict[str, float] = {}
        k1p1 = self.k1 + 1.0
        for term, q_count in Counter(terms).items():
            posting = self._posting(term)
            if posting and subset is not None:
                posting = {d: tf for d, tf in posting.items() if subset(d)}
            base = self._base_posting(term, mask)
            df = (len(posting) if posting else 0) + (len(base[0]) if base else 0)
            if not df:
                continue
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            if base is not None:
                docs, tfs = base
                tf = tfs.astype(np.float64)
                lengths = self._base.lengths[docs].astype(np.float64)
                norm = self.k1 * ((1.0 - b) + (b * lengths) / (avg or 1.0))
                if base_scores is None:
                    base_scores = np.zeros(len(self._base.ids))
                base_scores[docs] += (q_count * idf) * tf * k1p1 / (tf + norm)
            for doc_id, tf_ in (posting or {}).items():
                norm_ = self.k1 * (1.0 - b + b * self._lengths[doc_id] / (avg or 1.0))
                scores[doc_id] = scores.get(doc_id, 0.0) + (
                    q_count * idf * tf_ * (self.k1 + 1.0) / (tf_ + norm_))
        if base_scores is not None:
            scores.update(self._base_best(base_scores, k))
        best = heapq.nlargest(k, scores.items(), key=lambda kv: (kv[1], kv[0]))
        return sorted(best, key=lambda kv: (-kv[1], kv[0]))

    @staticmethod
    def best(found: Sequence[tuple[str, float]], k: int) -> list[tuple[str, float]]:
        """`search_terms(..., k)` from what `search_terms(..., K)` found, for any K >= k:
        the same selection (best by score, then id) and order, so one scoring pass serves
        both depths (the learned file step reads whole-file BM25 deeper than the ranking)."""
        best = heapq.nlargest(k, found, key=lambda kv: (kv[1], kv[0]))
        return sorted(best, key=lambda kv: (-kv[1], kv[0]))

    def _base_best(self, base_scores: np.ndarray, k: int) -> dict[str, float]:
        """The scored base documents that can reach the best `k`: every one scoring at
        least the k-th best score (ties at the edge are settled by id, as for the rest)."""
        hit = np.flatnonzero(base_scores)       # a touched document's score is > 0
        values = base_scores[hit]
        if len(hit) > k:
            edge = np.partition(values, len(values) - k)[len(values) - k]
            keep = values >= edge
            hit, values = hit[keep], values[keep]
        ids = self._base.ids
        return {ids[i]: float(v) for i, v in zip(hit.tolist(), values.tolist(), strict=True)}

    def _stats(self, subset: Callable[[str], bool] | None) -> tuple[int, int]:
        """(documents, total length) of the index or of a subset (cached until a change)."""
        if subset is None:
            return len(self), self._base_total + self._total_length
        if subset not in self._subset_stats:
            mask = self._base_mask(subset)
            if self._alive is not None:
                mask = mask & self._alive
            ids = [d for d in self._docs if subset(d)]
            self._subset_stats[subset] = (
                int(mask.sum()) + len(ids),
                int(self._base.lengths[mask].sum()) + sum(self._lengths[d] for d in ids))
        return self._subset_stats[subset]

    def term_frequencies(self, doc_id: str) -> dict[str, int]:
        """The document's terms and counts ({} for an unknown id). A base document's
        come from a scan of every posting: for tests and inspection, not for serving."""
        if doc_id in self._docs:
            return {t: self._overlay_tf(t, doc_id) for t in self._docs[doc_id]}
        num = self._base_number(doc_id)
        return {} if num is None else self._base.terms_of(num)

    def _overlay_tf(self, term: str, doc_id: str) -> int:
        posting = self._postings[term]
        return posting[1] if posting.__class__ is tuple else posting[doc_id]

    # --- persistence ----------------------------------------------------------------------
    def is_file(self, path: Path) -> bool:
        """The index is exactly what `path` holds: its base is mapped from that file, still
        there unchanged (the stamp taken when it was mapped), with no overlay and no dead
        marks. Writing it would rewrite the same bytes: on the Linux kernel the write at a
        build's end rewrote the 617 MB base when only the pending list had changed (KERN11).
        A merge makes a base in memory (no stamp), so after one this is False until a write."""
        stamp = self._base.stamp
        return (stamp is not None and not self._docs and self._alive is None
                and file_stamp(path) == stamp)

    def save(self, path: Path) -> None:
        """Merge the overlay into the base, write it (atomically), and map the file: a
        server's base then costs only the pages its questions touch. Nothing is written
        when the file holds the index already (`is_file`)."""
        if self.is_file(path):
            return
        self.compact()
        self._base.save(path)
        path.with_name(LEGACY_FILE).unlink(missing_ok=True)
        self._set_base(FlatPostings.open(path, ids=self._base.ids))

    def snapshot(self) -> Callable[[Path], WrittenBase]:
        """`save` as a job for another thread: the base (immutable, mapped), the dead marks
        and the overlay (what saves changed since the last write) copied now; the job merges
        and writes them and maps the file (`adopt` takes it). On the Linux kernel `save`
        held a server's engine thread ~10 s (61.5M entries merged, 617 MB written), and a
        save arriving meanwhile waited for it."""
        base, alive = self._base, None if self._alive is None else self._alive.copy()
        ids = list(self._docs)
        lengths = [self._lengths[d] for d in ids]
        postings = [(t, (p,) if p.__class__ is tuple else tuple(p.items()))   # type: ignore[union-attr]
                    for t, p in self._postings.items()]
        numbers = self._base_num      # (a server's: made at warm-up and after each write)
        masks = dict(self._base_masks)
        self._since = set()
        self.snapshots += 1         # `adopt` takes only the latest snapshot's base

        def write(path: Path) -> WrittenBase:
            merged = merge(base, alive, ids, lengths, iter(postings))
            merged.save(path)
            path.with_name(LEGACY_FILE).unlink(missing_ok=True)
            mapped = FlatPostings.open(path, ids=merged.ids)
            # the kept documents' numbers and masks moved, not made again (a Python call
            # per document held the GIL beside the saves); the new ones' added
            return WrittenBase(mapped, numbers.merged(alive, mapped.ids) if numbers is not None
                               else DocNumbers(mapped.ids),
                               {f: np.concatenate([m if alive is None else m[alive],
                                                   np.fromiter(map(f, ids), bool, len(ids))])
                                for f, m in masks.items()})
        return write

    def adopt(self, written: WrittenBase | None, snapshot: int) -> bool:
        """Serve the base a `snapshot` job wrote, with the documents changed since the
        snapshot applied again from the overlay (a few saves' worth: the overlay stays
        small). False (nothing changed) when a merge made another base meanwhile, or
        `written` is None (the job wrote nothing: a newer state was on disk), or another
        snapshot was taken after this one (`snapshot`: the `snapshots` count it was taken
        at; the documents changed in between are only in the overlay served now)."""
        if snapshot != self.snapshots:
            return False
        since, self._since = self._since, None
        if since is None or written is None:
            return False
        now = {d: self.term_frequencies(d) for d in since if d in self._docs}
        if any(d not in now and d in self for d in since):
            return False        # (a base document: only after a compact, which clears since)
        self._postings, self._docs, self._lengths = {}, {}, {}
        self._total_length = self._entries = 0
        self._set_base(written.base)
        self._base_num = written.numbers
        self._base_masks.update(written.masks)
        for doc_id in since:
            if doc_id in now:
                self.add_terms(doc_id, now[doc_id])
            else:
                self._drop_base(doc_id)
        return True

    @classmethod
    def load(cls, path: Path) -> BM25Index | None:
        """The saved index, or None when absent, damaged (moved aside) or of another format."""
        try:
            base = FlatPostings.open(path)
        except FileNotFoundError:
            return None
        except OtherVersion as e:
            log.info("keyword index %s has another format (%s); it will be rebuilt", path, e)
            return None
        except (OSError, DamagedPostings) as e:
            move_aside(path, f"unreadable keyword index: {e}")
            return None
        index = cls()   # k1/b are search-time parameters, not stored
        index._set_base(base)
        return index
