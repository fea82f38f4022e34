"""Hybrid search over graph nodes and files: BM25 + vectors, fused by reciprocal rank.

`search` is the whole ranking, top to bottom: read the question (`query.py`); gather
node evidence (BM25 over node texts, nearest node vectors, exact identifier names);
rank symbols (`symbol_rank.py`: weighted RRF of the two node lists, each file's summed
evidence fused back into its symbols, exact names first, test symbols scaled down); rank files from three
file lists (`file_rank.py`: the symbol ranking, whole-file BM25, best node meaning) with
the documentation and test-pairing priors; interleave the symbol hits so that they
follow the file ranking. Every constant is in config.py with the reason for its value;
the experiments behind them, kept and rejected, are tabled in BENCHMARKS.md.

Keyword search is usable as soon as the graph exists (`update(graph, embed=False)`);
vectors join when the embedder has run. A search reports `mode="keyword"` with a
notice when the model is unavailable or no vectors exist yet.

Thread model: `update` may run on a worker thread while `search` runs elsewhere;
state is swapped under a lock and embedding (the slow part) runs outside it.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from neuralmind.config import (
    CANDIDATES,
    EXACT_MAX_NODES,
    FILE_BM25_B,
    FILE_DENSE_CANDIDATES,
    LEARNED_KEYWORD_DEPTH,
    MAX_RANKED_FILES,
    RRF_K,
    RRF_WEIGHTS,
    SYMBOL_LIST_DEPTH,
    UPDATE_CHUNK,
)
from neuralmind.graph.graph import Graph
from neuralmind.heap import no_gc
from neuralmind.index.bm25 import BM25Index
from neuralmind.index.embed_pending import EmbedPending
from neuralmind.index.embedder import Embedder, ModelUnavailable, load_embedder
from neuralmind.index.file_rank import FileRankParams, RankedFile, interleave, rank_question_files
from neuralmind.index.keyword_update import apply_texts, exact_ids, name_map
from neuralmind.index.node_text import DEFAULT_TEXT, NodeTextOptions, file_children, graph_texts
from neuralmind.index.query import Question, lookup_name, parse_question, query_identifiers
from neuralmind.index.save_journal import SaveJournal
from neuralmind.index.save_vectors import SaveVectors
from neuralmind.index.search_meta import MetaChanges, MetaWrite, read_meta
from neuralmind.index.state_files import (
    BM25_FILE,
    INDEX_FILES,
    META_DELTA_FILE,
    META_FILE,
    VECTORS_FILE,
)
from neuralmind.index.symbol_rank import Hit, is_file_id, node_path, rank_symbols, rename
from neuralmind.index.vector_handoff import VectorHandoff
from neuralmind.index.vectors import VectorStore
from neuralmind.statedir import file_stamp

log = logging.getLogger("neuralmind.index")
FILE_KEYWORDS_READ = max(MAX_RANKED_FILES, LEARNED_KEYWORD_DEPTH)  # once a question (ASK11)


ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class VectorsRead:
    """The vectors file as read off the engine thread, and its stamp before the read."""
    stamp: tuple[int, int, int, int] | None
    vectors: VectorStore | None


@dataclass
class SearchResult:
    hits: list[Hit]
    mode: str            # "hybrid" | "keyword"
    notice: str = ""
    files: list[RankedFile] = field(default_factory=list)   # best first
    lead: frozenset[str] = frozenset()   # symbols named by a question that is only a name


class SearchIndex(SaveVectors, EmbedPending):
    """BM25 + vector index of one workspace's nodes, persisted under `state_dir`."""

    def __init__(self, state_dir: Path, root: Path | None = None, *,
                 embedder: Embedder | None = None, threads: int = 0,
                 text_options: NodeTextOptions = DEFAULT_TEXT,
                 rrf_k: float = RRF_K, weights: Mapping[str, float] | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.root = Path(root) if root is not None else self.state_dir.parent
        self.text_options = text_options
        self.rrf_k = rrf_k
        self.weights = dict(weights or RRF_WEIGHTS)
        self._threads = threads
        self._embedder = embedder
        self.one_shot = False      # set by a one-question process: see `embedder()`
        self.model_error: str | None = None      # why the model is unavailable
        self._lock, self._embed_lock = threading.RLock(), threading.Lock()
        self._stamps: dict[str, tuple[int, int, int, int] | None] = {}
        self._bm25 = BM25Index()
        self._vectors = VectorStore()
        self._names: dict[str, str] = {}         # id -> lowercased name
        # lowercased name -> its id, or its ids (a list) when several: on first exact lookup
        self._by_name: dict[str, str | list[str]] | None = None
        self._kw_hash: dict[str, bytes] = {}     # id -> hash of its keyword text (sha1)
        self._pending: set[str] = set()          # nodes whose vectors are not computed yet
        self._meta_changes = MetaChanges()       # names/hashes changed since the full file
        self.graph_token: str | None = None      # the graph it reflects (generation.py)
        # A long-lived writer (the LSP server) sets this: `_save` then only marks what is
        # unsaved and `flush()` writes it when the editor is idle; in memory it is current.
        self.defer_writes = False
        # A server sets this False: it reloads graph and index together (Workspace.reload),
        # so an answer never mixes another writer's index with its graph.
        self.follow_writers = True
        self._unsaved = {"keyword": False, "vectors": False}
        self._write_lock, self._writing = threading.RLock(), set[str]()   # (KeywordFlush)
        self._keyword_version, self._keyword_written = 0, -1   # _save()s; the one on disk
        self.handoff = VectorHandoff()   # a build child writing vectors.npz while we serve
        self.journal = SaveJournal(state_dir)   # a server's saves not written yet
        self._load()

    # --- persistence ---------------------------------------------------------------------
    def _paths(self) -> dict[str, Path]:
        return {n: self.state_dir / n for n in INDEX_FILES}

    def _load(self) -> None:
        with no_gc(freeze=True):   # ~10^5 new objects: no full collection midway, none after
            self._load_files()

    def _load_files(self) -> None:
        paths = self._paths()
        bm25 = BM25Index.load(paths[BM25_FILE])
        vectors = VectorStore.load(paths[VECTORS_FILE])
        meta = read_meta(paths[META_FILE])
        dropped = None
        with self._lock:
            if bm25 is not None and len(bm25) == len(meta.kw_hash):
                dropped = self._bm25
                self._bm25, self._names, self._kw_hash = bm25, meta.names, meta.kw_hash
                self.graph_token = meta.graph_token
                self._meta_changes.loaded(meta)
            else:       # what is kept is not that file's: the next write is a full one
                self._meta_changes = MetaChanges()
            self._vectors = vectors if vectors is not None else VectorStore()
            self._pending = meta.pending
            self.handoff.expected.clear()     # another writer's generation: ours is gone
            self._by_name = None
            self._unsaved = {"keyword": False, "vectors": False}
            self._stamps = {n: file_stamp(p) for n, p in paths.items()}
        if dropped is not None:
            dropped.release()

    def warm_up(self) -> None:
        """What a server's first save and search would pay otherwise: the keyword base's
        document numbers (a flush, writing nothing when nothing is unsaved) and the exact-name
        map (the Linux kernel's 835k names: ~0.6 s in process, 1.8-2.0 s through the server
        that the first search after a save paid, KERN13)."""
        if not self.unsaved:
            self.flush()
        with self._lock:
            self._name_map()

    def _save(self, keyword: bool = True, vectors: bool = True) -> None:
        with self._lock:
            self._unsaved["keyword"] |= keyword
            self._keyword_version += keyword
            self._unsaved["vectors"] |= vectors
            if not self.defer_writes:
                self.flush()

    def flush(self) -> bool:
        """Write what `_save` left unsaved (a server: once saves pause); True when it wrote.
        Never over another process's newer generation (loaded instead); a server's flush
        also numbers the keyword base for its next save, and trims its saves' journal."""
        paths = self._paths()
        with self._write_lock, self._lock:
            if self.defer_writes and self.unsaved:
                self.reload_if_changed()      # (a build child's vectors: merged, ours kept)
            keyword = self._unsaved["keyword"]
            vectors = self._unsaved["vectors"] and not self.handoff.active   # the child's file
            if keyword:
                self._bm25.save(paths[BM25_FILE])       # (nothing when the file holds it)
                self._meta_changes.written(self.meta_write().write(paths[META_FILE]))
                self._keyword_written = self._keyword_version
                self.journal.drop_through(self.journal.last)
            if vectors:
                self._vectors.save(paths[VECTORS_FILE])
            self._unsaved = {"keyword": False, "vectors": self._unsaved["vectors"] and not vectors}
            written = [BM25_FILE, META_FILE, META_DELTA_FILE] * keyword + [VECTORS_FILE] * vectors
            self._stamps.update({n: file_stamp(paths[n]) for n in written})
            if self.defer_writes:       # a server's idle time (warm-up, saves paused)
                self._bm25.number_documents()
            return keyword or vectors

    def meta_write(self) -> MetaWrite:
        """The metadata's next write (under the lock; a server's: a delta, search_meta.py)."""
        return self._meta_changes.plan(self._names, self._kw_hash, self._pending,
                                       self.graph_token or "", delta=self.defer_writes)

    def node_ids(self) -> list[str]:
        return list(self._kw_hash)      # (one C-level copy: atomic under the GIL)

    @property
    def unsaved(self) -> bool:
        return self._unsaved["keyword"] or self._unsaved["vectors"]

    def reload_if_changed(self, read: VectorsRead | None = None) -> bool:
        """Pick up a generation another process wrote; True when something was reloaded.

        A cheap check (three stats) when nothing changed. Our own unsaved changes give way
        to another writer's files: that writer ran a build, which saw the same sources.
        `read`: the vectors file as `read_vectors` read it, taken when it is still current."""
        if not (changed := self.written_elsewhere()):
            return False
        if self._embed_lock.locked():   # we are the writer; our own state is newer
            return False
        if changed == {VECTORS_FILE} and (self.handoff.active or not self.unsaved):
            self._load_vectors(read)    # a build embedding in slices: the rest is unchanged
            return True
        if self.unsaved:
            log.info("another process wrote the search index; dropping unsaved changes")
        self._load()
        return True

    def written_elsewhere(self) -> set[str]:
        """The index files another process wrote since we last read or wrote them."""
        return {n for n, p in self._paths().items()     # (KeywordFlush's: ours, being written)
                if n not in self._writing and file_stamp(p) != self._stamps.get(n)}

    def read_vectors(self) -> VectorsRead | None:
        """The vectors file a build child wrote (only it), read on the calling thread, not the
        engine's: the whole file each slice (on the kernel 1.6 s of the engine thread per
        slice at 9k vectors, growing with every slice, while answers waited, LIVE15). None
        when anything else changed or no child writes vectors; `reload_if_changed` takes it."""
        path = self._paths()[VECTORS_FILE]
        if not self.handoff.active or self.written_elsewhere() != {VECTORS_FILE}:
            return None
        stamp = file_stamp(path)        # before the read: a newer file is only read again
        with no_gc(freeze=True):
            return VectorsRead(stamp, VectorStore.load(path, exact_limit=sys.maxsize))

    def _load_vectors(self, read: VectorsRead | None = None) -> None:
        """The vectors file again: replaced, or merged while a build child writes it (from
        `read` when that is the file there now)."""
        path, merge = self._paths()[VECTORS_FILE], self.handoff.active
        if read is not None and merge and read.stamp == file_stamp(path):
            vectors = read.vectors
        else:
            with no_gc(freeze=True):
                vectors = VectorStore.load(path, **({"exact_limit": sys.maxsize} if merge else {}))
        with self._lock:
            if merge:
                self._pending.difference_update(
                    self.handoff.merge(self._vectors, vectors, self._kw_hash))
            else:
                self._vectors = vectors if vectors is not None else VectorStore()
                self._pending = {i for i in self._pending if i not in self._vectors}
            self._stamps[VECTORS_FILE] = file_stamp(path)

    def take_back_vectors(self, complete: bool) -> None:
        """The build child writing the vectors ended (`complete`: it embedded all it was
        going to): its last slices merged, the pending list settled, the file ours again."""
        with self._lock:
            if not self.handoff.active:
                return
            self._load_vectors()
            own = bool(self.handoff.expected)        # vectors of saves the file lacks
            self.handoff.settle(self._pending, self._vectors, complete)
            # the pending list on disk is the graph phase's: merges and the cap changed it
            self._save(keyword=True, vectors=own)

    # --- status --------------------------------------------------------------------------
    @property
    def node_count(self) -> int:
        return len(self._bm25)

    @property
    def vector_count(self) -> int:
        return len(self._vectors)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def waiting(self, node_id: str) -> bool:
        """The node is indexed by keyword and still waits for its vector."""
        return node_id in self._pending

    def embedder(self, question: bool = False) -> Embedder | None:
        """The shared embedder, loaded on first use; None (with a notice) when unavailable.

        `question`: only a question will be embedded; with `one_shot` set (a process that
        answers once and exits) the session is the quick-to-build one (`load_embedder`)."""
        if getattr(self._embedder, "one_shot", False) and not question:
            self._embedder = None           # many texts to embed after all: the full session
        if self._embedder is None and self.model_error is None:
            try:
                self._embedder = load_embedder(self._threads,
                                               one_shot=question and self.one_shot)
            except ModelUnavailable as e:
                self.model_error = str(e)
                log.warning("semantic search unavailable, keyword-only: %s", e)
        return self._embedder

    @property
    def model_state(self) -> str:
        """"unavailable", "loaded" or "not_loaded", without loading the model."""
        if self.model_error:
            return "unavailable"
        return "loaded" if self._embedder is not None else "not_loaded"

    # --- building ------------------------------------------------------------------------
    def _texts(self, graph: Graph, ids: Iterable[str], keyword: bool = True,
               children: dict[str, list[str]] | None = None) -> dict[str, tuple[str, str, str]]:
        """`children`: `file_children(graph)` when the caller asks for many slices of one
        graph (each call would walk every node again to make it)."""
        return graph_texts(graph, self.root, ids, self.text_options, keyword, children)

    def update(self, graph: Graph, changed_node_ids: Iterable[str] | None = None,
               embed: bool = True, progress: ProgressFn | None = None,
               before: Mapping[str, str] | None = None) -> int:
        """Bring the index up to date with `graph`; returns how many texts were embedded.

        With `changed_node_ids`, only those ids are looked at (absent ones are removed);
        otherwise every node is, and ids no longer in the graph go. `before`: a save's
        embedded-text hashes before it (`file_level`: nodes it did not change stay there)."""
        with self._embed_lock:
            if changed_node_ids is None:
                targets = graph.node_ids()
                gone = [i for i in self._kw_hash if i not in graph.nodes]
            else:
                wanted = list(changed_node_ids)
                # a file node's text lists its symbols, so it changes with them
                wanted = list(dict.fromkeys(wanted + [node_path(i) for i in wanted]))
                targets = [i for i in wanted if i in graph.nodes]
                gone = [i for i in wanted if i not in graph.nodes]
            with self._lock:
                # A save patches the name map; rebuilding it from 42k names after every
                # save stalled the editor's loop ~30 ms (allocation-driven GC passes).
                by_name = self._by_name if changed_node_ids is not None else None
                self._by_name, dirty = by_name, False
                self._meta_changes.note(i for i in gone if i in self._kw_hash)
                for node_id in gone:
                    dirty |= node_id in self._kw_hash
                    self._bm25.remove(node_id)
                    rename(by_name, node_id, self._names.pop(node_id, None), None)
                    self._kw_hash.pop(node_id, None)
                self._vectors.remove(gone)
            todo: dict[str, str] = {}           # id -> hash of the text its vector needs
            embedded: dict[str, str] = {}       # the texts themselves, when embedding now
            seen: list[str] = []
            children = file_children(graph, None if changed_node_ids is None else targets)
            for start in range(0, len(targets), UPDATE_CHUNK):
                texts = self._texts(graph, targets[start:start + UPDATE_CHUNK],
                                    children=children)
                with self._lock:
                    changed = apply_texts(texts, self._bm25, self._kw_hash, self._names,
                                          self._vectors, by_name, todo,
                                          embedded if embed else None, gone)
                    dirty |= self._meta_changes.note(changed)
                seen.extend(texts)
                del texts
            with self._lock:
                dirty |= self.graph_token != graph.token
                self.graph_token = graph.token
                if before is not None:
                    self.file_level(todo, before)
                if changed_node_ids is None:
                    dirty, self._pending = dirty or self._pending != set(todo), set(todo)
                else:   # in place: the kernel's 835k pending ids were copied 3x per save
                    pending, drop = self._pending, (set(gone) | set(seen)) - todo.keys()
                    dirty |= not drop.isdisjoint(pending) or not pending.issuperset(todo)
                    pending.difference_update(drop)
                    pending.update(todo)
                    self.handoff.record(self._vectors, seen, todo, gone)
            # rewriting ~29 MB for nothing would stall every reader (and the GIL); a writer
            # also writes what a reader's catch-up left unsaved (generation.py)
            if dirty or bool(gone) or (self._unsaved["keyword"] and not self.defer_writes):
                self._save(keyword=True, vectors=bool(gone))
            if not embed or not todo:
                return 0
            embedder = self.embedder()
            if embedder is None:
                return 0
            with self._lock:
                known, fresh = self._vectors.reusable(embedder.model_id, todo)
            vecs = embedder.embed([embedded[i] for i in fresh], progress) if fresh else None
            self._store(known, fresh, vecs, todo, prune=True)
            self._save(keyword=True, vectors=True)
            return len({embedded[i] for i in fresh})

    def _store(self, reuse: dict[str, np.ndarray], fresh: list[str], vecs: np.ndarray | None,
               hashes: dict[str, str], prune: bool) -> None:
        """Write vectors; drop those of removed ids (all with `prune`, else this slice's)."""
        with self._lock:
            if reuse:
                self._vectors.upsert(list(reuse), np.stack(list(reuse.values())),
                                     [hashes[i] for i in reuse])
            if fresh and vecs is not None:
                self._vectors.upsert(fresh, vecs, [hashes[i] for i in fresh])
            ids = self._vectors.ids() if prune else hashes
            self._vectors.remove([i for i in ids if i not in self._kw_hash])
            self._pending.difference_update(hashes)

    # --- searching -----------------------------------------------------------------------
    def search(self, query: str, k: int = 20, mode: str = "hybrid",
               pairs: Mapping[str, Sequence[str]] | None = None,
               file_params: FileRankParams | None = None) -> SearchResult:
        """Ranked files and symbols for a question; `mode="keyword"` skips the model.

        `pairs` maps each test file to the source files it exercises (`pairing.py`)."""
        if self.follow_writers:
            self.reload_if_changed()
        q, name = parse_question(query), lookup_name(query)
        # 1. evidence: node BM25, nearest node vectors, exact names, whole-file BM25
        qv, notice = self._question_vector(q, mode)
        with self._lock:
            node_bm25 = self._bm25.search_terms(q.keyword_terms, CANDIDATES)
            file_deep = self._bm25.search_terms(q.keyword_terms, FILE_KEYWORDS_READ,
                                                subset=is_file_id, b=FILE_BM25_B)
            file_bm25 = self._bm25.best(file_deep, MAX_RANKED_FILES)
            nearest = (self._vectors.search(qv, max(CANDIDATES, FILE_DENSE_CANDIDATES))
                       if qv is not None else [])
            exact = self._exact_matches(query, name)
        # 2. symbols: RRF of the node lists, exact names first, file evidence fused back
        hits = rank_symbols(node_bm25, nearest[:CANDIDATES], exact, self._names,
                            about_tests=q.about_tests, weights=self.weights, k=self.rrf_k)
        # 3. files: the symbol ranking, whole-file keywords and meaning, with the priors
        lists = {"symbols": [node_path(h.id) for h in hits[:SYMBOL_LIST_DEPTH]],
                 "keywords": [f for f, _ in file_bm25],
                 "meaning": [node_path(i) for i, _ in nearest]}
        with self._lock:    # a change request's learned step reads whole files (file_rank.py)
            files = rank_question_files(lists, pairs or {}, q, name is not None, hits, nearest,
                                        exact, self._bm25, file_params, file_deep)
        # 4. the hits follow the file ranking (a file with no symbol hit: the file), led by
        #    the symbols a question that is only a name names
        lead = frozenset(i for i in exact if self._names.get(i) == name)
        hits = interleave(hits, files, lambda h: node_path(h.id),
                          lambda f: Hit(f, 0.0, reasons=["ranked by its whole file"])
                          if f in self._names else None, k, lambda h: h.id in lead)
        return SearchResult(hits, "hybrid" if qv is not None else "keyword", notice, files,
                            lead)

    def _question_vector(self, q: Question, mode: str) -> tuple[np.ndarray | None, str]:
        """The question's vector (None: keyword-only) and any notice about the mode."""
        if mode != "hybrid":
            return None, ""
        embedder = self.embedder(question=True)
        if embedder is None:
            return None, f"keyword-only: {self.model_error}"
        if len(self._vectors) == 0:
            return None, ("keyword-only: embeddings are not ready yet"
                          + (f" ({self.pending} nodes pending)" if self._pending else ""))
        notice = f"{self.pending} nodes still waiting for embeddings" if self._pending else ""
        return embedder.embed_question(q.text), notice

    def _exact_matches(self, query: str, name: str | None = None) -> set[str]:
        """Nodes named by an identifier in the question, or by `name` (a bare-name question)."""
        wanted = {w.lower() for w in query_identifiers(query)} | ({name} if name else set())
        if not wanted:
            return set()
        return exact_ids(self._name_map(), wanted, EXACT_MAX_NODES)

    def _name_map(self) -> dict[str, str | list[str]]:
        """Lower-cased names -> node ids, made on first use (835k names on the kernel)."""
        if self._by_name is None:
            self._by_name = name_map(self._names)
        return self._by_name

