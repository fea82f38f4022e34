"""BM25 over node texts, updated incrementally and persisted as one JSON file.

Per document only its term frequencies are stored; postings are rebuilt from
them on load (a 20k-node workspace loads in a fraction of a second) and kept
current by `add`/`remove`, so a saved file touches one search, not a rebuild.
In memory the frequencies live in the postings only; a document keeps the tuple
of its terms (to remove it and to save it): a dict per document as well cost
~27 MB on a 20k-node workspace, the tuples ~7 MB.
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
import json
import logging
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from neuralmind.index.jsonstream import members, read_slices, write_object
from neuralmind.index.tokens import code_tokens
from neuralmind.statedir import move_aside

log = logging.getLogger("neuralmind.index")

FORMAT_VERSION = 1
K1 = 1.2
B = 0.4


class BM25Index:
    """Keyword index: document id -> term frequencies, with live postings."""

    def __init__(self, k1: float = K1, b: float = B) -> None:
        self.k1 = k1
        self.b = b
        self._docs: dict[str, tuple[str, ...]] = {}     # doc -> its distinct terms
        self._lengths: dict[str, int] = {}
        # term -> {doc: tf}; a term in one document only (most of a big repository's terms:
        # the kernel's 4.1M terms, 61.5M entries) is a (doc, tf) tuple, 56 bytes where a
        # one-entry dict is 184 (`_posting`, `_df` and `_tf` read both shapes)
        self._postings: dict[str, dict[str, int] | tuple[str, int]] = {}
        self._total_length = 0
        self._subset_stats: dict[Callable[[str], bool], tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._docs

    def ids(self) -> list[str]:
        return list(self._docs)

    def add(self, doc_id: str, text: str) -> None:
        """Index `text` under `doc_id`, replacing what the id held before."""
        self.add_terms(doc_id, Counter(code_tokens(text)))

    def add_terms(self, doc_id: str, terms: dict[str, int]) -> None:
        if doc_id in self._docs:
            self.remove(doc_id)
        tf = {t: int(n) for t, n in terms.items() if n > 0}
        self._docs[doc_id] = tuple(tf)
        length = sum(tf.values())
        self._subset_stats.clear()
        self._lengths[doc_id] = length
        self._total_length += length
        postings = self._postings
        for term, n in tf.items():
            posting = postings.get(term)
            if posting is None:
                postings[term] = (doc_id, n)
            elif posting.__class__ is tuple:
                postings[term] = {posting[0]: posting[1], doc_id: n}
            else:
                posting[doc_id] = n

    def remove(self, doc_id: str) -> bool:
        terms = self._docs.pop(doc_id, None)
        if terms is None:
            return False
        self._subset_stats.clear()
        self._total_length -= self._lengths.pop(doc_id)
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

    def _posting(self, term: str) -> dict[str, int] | None:
        """The documents containing `term` with their counts (None: none)."""
        posting = self._postings.get(term)
        if posting is None or posting.__class__ is not tuple:
            return posting
        return {posting[0]: posting[1]}

    def _df(self, term: str) -> int:
        posting = self._postings.get(term)
        return 0 if posting is None else 1 if posting.__class__ is tuple else len(posting)

    def _tf(self, term: str, doc_id: str) -> int:
        posting = self._postings[term]
        return posting[1] if posting.__class__ is tuple else posting[doc_id]

    def release(self) -> None:
        """Empty the index a posting at a time, for a dropped generation: freeing ~10^6
        entries in one go holds the GIL for tens of ms; a Python loop lets threads in."""
        for term in list(self._postings):
            del self._postings[term]
        for doc_id in list(self._docs):
            del self._docs[doc_id]
        self._lengths.clear()
        self._total_length = 0
        self._subset_stats.clear()

    def idf(self, term: str) -> float:
        df = self._df(term)
        n = len(self._docs)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def search(self, query: str, k: int = 20) -> list[tuple[str, float]]:
        """Best `k` documents for the query's code tokens, highest score first."""
        return self.search_terms(code_tokens(query), k)

    def search_terms(self, terms: Iterable[str], k: int = 20,
                     subset: Callable[[str], bool] | None = None,
                     b: float | None = None) -> list[tuple[str, float]]:
        """Best `k` documents for the terms. With `subset`, only its documents are scored,
        with the subset's own statistics (count, mean length, document frequencies): whole
        files ranked among files, not among the short symbol texts around them."""
        if not self._docs:
            return []
        b = self.b if b is None else b
        n, total = self._stats(subset)
        avg = total / n if n else 1.0
        scores: dict[str, float] = {}
        for term, q_count in Counter(terms).items():
            posting = self._posting(term)
            if not posting:
                continue
            if subset is not None:
                posting = {d: tf for d, tf in posting.items() if subset(d)}
                if not posting:
                    continue
            idf = math.log(1.0 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for doc_id, tf in posting.items():
                norm = self.k1 * (1.0 - b + b * self._lengths[doc_id] / (avg or 1.0))
                scores[doc_id] = scores.get(doc_id, 0.0) + (
                    q_count * idf * tf * (self.k1 + 1.0) / (tf + norm))
        best = heapq.nlargest(k, scores.items(), key=lambda kv: (kv[1], kv[0]))
        return sorted(best, key=lambda kv: (-kv[1], kv[0]))

    def _stats(self, subset: Callable[[str], bool] | None) -> tuple[int, int]:
        """(documents, total length) of the index or of a subset (cached until a change)."""
        if subset is None:
            return len(self._docs), self._total_length
        if subset not in self._subset_stats:
            ids = [d for d in self._docs if subset(d)]
            self._subset_stats[subset] = (len(ids), sum(self._lengths[d] for d in ids))
        return self._subset_stats[subset]

    # --- persistence ----------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """The same JSON as one `json.dumps` of the whole index, but encoded one document
        at a time: a single call held the GIL ~1 s for Django's 12 MB and froze the
        server's event loop; small calls let the loop run in between."""
        head = json.dumps({"format": FORMAT_VERSION, "k1": self.k1, "b": self.b},
                          separators=(",", ":"))
        write_object(path, head[:-1] + ',"docs":',
                     ((doc_id, self.term_frequencies(doc_id)) for doc_id in self._docs))

    def term_frequencies(self, doc_id: str) -> dict[str, int]:
        """The document's terms and counts ({} for an unknown id)."""
        return {t: self._tf(t, doc_id) for t in self._docs.get(doc_id, ())}

    @classmethod
    def load(cls, path: Path) -> BM25Index | None:
        """The saved index, or None when absent, damaged (moved aside) or of another format.

        Read one document at a time (see `jsonstream`): a reloading server keeps serving."""
        try:
            text = read_slices(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            move_aside(path, f"unreadable keyword index: {e}")
            return None
        head: dict[str, Any] = {}
        index: BM25Index | None = None
        try:
            for key, value in members(text, stream=frozenset({"docs"})):
                if key != "docs":
                    head[key] = value
                    continue
                if head.get("format") != FORMAT_VERSION:
                    break
                index = cls()   # the saved k1/b are informative only; scoring uses today's
                docs = value if isinstance(value, Iterator) else None
                if docs is None:
                    raise TypeError("docs is not an object")
                # one string per distinct term, as a single json.loads shares its keys
                # (without this, Django's index took ~80 MB more)
                terms: dict[str, str] = {}
                for doc_id, tf in docs:   # ids interned: one string per node id in the process
                    index.add_terms(sys.intern(doc_id),
                                    {terms.setdefault(t, t): n for t, n in tf.items()})
        except ValueError as e:
            move_aside(path, f"unreadable keyword index: {e}")
            return None
        except (KeyError, TypeError, AttributeError) as e:
            move_aside(path, f"malformed keyword index: {e}")
            return None
        if head.get("format") != FORMAT_VERSION:
            log.info("keyword index %s has another format; it will be rebuilt", path)
            return None
        if index is None:
            move_aside(path, "malformed keyword index: no documents")
        return index
