"""Hybrid search over graph nodes: BM25 + vectors, fused by weighted reciprocal rank.

Measured with benchmarks/retrieval_bench.py on the dev sets only (public
retrieval.jsonl, 120 questions, package dir indexed; history split=history,
311 commit messages, whole sdist indexed; file-level MRR / Recall@5):

NODE TEXT. Embedded text = kind + qualified name + path + signature +
docstring (first 600 chars) (+ "defines a, b, ..." for file nodes). Keyword
text = the same names and prose plus each symbol's whole body and, for a file
node, the whole file. RRF k=60, weights 1/1:

    variant (vector text / keyword text)         mode     retrieval      hist-dev
    meta / meta                                  keyword  .756 / .908    .688 / .692
    meta / meta                                  vector   .804 / .946    .707 / .717
    meta / meta                                  hybrid   .798 / .946    .721 / .731
    meta + identifiers spelled as words          vector   .805 / .921    .708 / .713
    meta / + symbol bodies                       hybrid   .818 / .938    .720 / .751
    meta / + whole file on file nodes            hybrid   .802 / .933    .736 / .741
    meta / + both (shipped)                      hybrid   .828 / .950    .733 / .768

Body lines in the embedded text were not adopted: they make texts 2-3x longer
(rich: 337 s vs ~75 s to embed under the same load) and the run was stopped
before it paid for itself; bodies help as keywords, where they cost nothing.

FUSION. Grid over RRF k {5, 10, 20, 30, 60} x vector weight {0.5, 0.75, 1,
1.5} (BM25 weight 1), shipped text: k=10, weights 1/1 -> .837 / .967 and
.742 / .782 (k=5: .840/.975, .746/.771; k=20: .835/.958, .739/.772; vector
weight 1.5: .848/.967, .731/.763; 0.5: .820/.958, .735/.773). Adding a share
of a file's other candidates' scores to each node ("file support" 0.25) cost
.12 retrieval MRR and .04 history R@5: not used. A third list from a separate
whole-file BM25 (its own length normalisation), weight 0.5/1/1.5 at k=10:
.818-.838 / .929-.950 and .732-.744 / .778-.789 — no better: not used. Test files at half score
(unless the question is about tests) costs .006 history R@5 (Werkzeug's
commits change tests too) and nothing on retrieval; kept, as the product asks.

CHANGE REQUESTS (dev sets, hybrid, file-level MRR / R@5; retrieval then hist-dev;
base .837 / .967, .741 / .782): BM25 b 0.4 (k1 1.2) .844 / .967, .754 / .788
(b .3: .841, .759 / .782; b .5: .841, .748 / .782; b .9 worse; k1 .9/1.5/2.0 within
±.01). Change-request words ("fix", "add support", "allow ... instead") dropped from
the keyword query: .838, .746 / .787; the same words dropped from the embedded
question: worse (.754 / .785 hist-dev). A third RRF list of files ranked by the sum of
their nodes' fused scores (weight FILE_WEIGHT, same k) fused back into each node:
weight .25 .848 / .967, .761 / .789 with the two above (shipped; .15 .852, .758; .35
.849 / .958, .757; k 5 or 30 worse). Not kept: max + decayed sum of a file's other
nodes (c .05-.2: retrieval +.01, history R@5 -.005); identifier terms counted 2-3x
(no change); a bonus for files whose name is a query word (hist-dev MRR +.007 but
retrieval -.018 to -.047); RRF k per list (bm25 5/20, vector 5/20) and vector weight
1.25 (all worse on one set); 200 candidates a list (no gain); tests at 0.75/1.0 instead of
0.5 (hist-dev R@5 +.007, MRR -.004: kept 0.5 as the product asks). Then, on top:
each of the 5 best source files brings its own test file (tests/test_x.py) in at half
its score: hist-dev R@5 .789 -> .802, R@10 .877 -> .889, MRR .761 -> .759, public
sets unchanged (no tests indexed); share .3/.4/.9 and 2-10 files measured, .5 of 5
best. Also not kept: pseudo-relevance feedback on BM25 (top 3-5 nodes, 10-20 terms)
or on the query vector (Rocchio, top 3-5): +-.01 either way; symbol bodies limited to
30 lines or name/signature counted twice in the keyword text: +-.01; files ranked by
the centroid of their node vectors as another list (.25-1): retrieval MRR +.01, hist
R@5 -.006 to -.02; the file list ranked by a decayed sum instead of the sum: worse;
docs/ and examples/ at half score: hist-dev R@5 +.005 only, and those files are
never gold by how the history set was mined, so the gain says little.

Keyword search is usable as soon as the graph exists (`update(graph, embed=False)`);
vectors join when the embedder has run. A search reports `mode="keyword"` with a
notice when the model is unavailable or no vectors exist yet.

Thread model: `update` may run on a worker thread while `search` runs elsewhere;
state is swapped under a lock and embedding (the slow part) runs outside it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from neuralmind.graph.model import Node
from neuralmind.heap import no_gc
from neuralmind.index.bm25 import BM25Index
from neuralmind.index.embedder import Embedder, ModelUnavailable, load_embedder
from neuralmind.index.fusion import group_rrf, rrf
from neuralmind.index.jsonstream import members, read_slices, write_object
from neuralmind.index.tokens import code_tokens
from neuralmind.index.vectors import VectorStore

log = logging.getLogger("neuralmind.index")

FORMAT_VERSION = 1
BM25_FILE = "bm25.json"
VECTORS_FILE = "vectors.npz"
META_FILE = "search_meta.json"

# --- FUSION (tuned on the dev sets; see benchmarks/retrieval_bench.py) ---------------------
RRF_K = 10.0
WEIGHTS = {"bm25": 1.0, "vector": 1.0}
CANDIDATES = 100               # how deep each list is read before fusion
EXACT_BOOST = 1.0              # added to an exact identifier match (beats any fused score)
EXACT_MAX_NODES = 8            # a name shared by more nodes than this is not "exact"
TEST_FACTOR = 0.5              # score multiplier for tests/generated code, unless asked for
FILE_WEIGHT = 0.25             # weight of the file-level list (files by their nodes' sum)
COMPANION_SHARE = 0.5          # a top source file's own test file scores this share of it
COMPANION_FILES = 5            # how many of the best source files bring their test file

# Words of change requests ("fix", "add support for", "allow ... instead") that name the
# change, not the code: dropped from the keyword query only (the embedder sees the question).
_CHANGE_WORDS = frozenset(code_tokens(
    "fix fixes fixed add adds added support supports allow allows allowed use uses used "
    "using make makes remove removed update updated change changed instead new now also "
    "ensure properly correctly when don't doesn't issue bug"))

_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|specs)/|(^|/)test_[^/]*$|_test\.\w+$"
    r"|\.(spec|test)\.\w+$|(^|/)conftest\.py$")
_GENERATED_PATH = re.compile(r"_pb2(_grpc)?\.py$|\.generated\.|(^|/)generated/|\.min\.js$")
_TEST_WORDS = frozenset({"test", "tests", "testing", "pytest", "unittest", "fixture",
                         "fixtures", "spec", "specs", "mock", "conftest"})
_IDENT = re.compile(r"`([^`]+)`|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\(\))?")


class GraphLike(Protocol):
    nodes: Mapping[str, Node]


ProgressFn = Callable[[int, int], None]


@dataclass
class NodeTextOptions:
    """What text stands for a node (the retrieval decision measured in the bench)."""

    path: bool = True
    docstring_chars: int = 600
    body_lines: int = 0           # code lines after the signature, for the embedded text
    keyword_body_lines: int = -1  # the same for the keyword text (-1: the whole body)
    humanize: bool = False        # also spell identifiers as words ("case insensitive dict")
    file_keyword_body: bool = True    # a file node's keyword text is the whole file


DEFAULT_TEXT = NodeTextOptions()


@dataclass
class Hit:
    id: str
    score: float
    vector_rank: int | None = None
    bm25_rank: int | None = None
    vector_score: float | None = None
    bm25_score: float | None = None
    contributions: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)   # "exact name", "test code down-weighted"


@dataclass
class SearchResult:
    hits: list[Hit]
    mode: str            # "hybrid" | "keyword"
    notice: str = ""


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path)) or bool(_GENERATED_PATH.search(path))


def node_path(node_id: str) -> str:
    return node_id.split("::", 1)[0]


def companion_test_paths(path: str) -> list[str]:
    """Where a Python source file's own tests conventionally live."""
    folder, _, base = path.rpartition("/")
    if not base.endswith(".py") or base.startswith("test_") or base == "__init__.py":
        return []
    stem = base[:-3]
    here = folder + "/" if folder else ""
    return list(dict.fromkeys([f"tests/test_{base}", f"{here}test_{base}",
                               f"{here}tests/test_{base}", f"{here}{stem}_test.py"]))


def humanize(identifier: str) -> str:
    words = [t for t in code_tokens(identifier) if "_" not in t and "." not in t]
    return " ".join(words)


def _body(node: Node, lines: list[str] | None, limit: int) -> list[str]:
    """Up to `limit` non-blank code lines of the node after its signature (-1: all)."""
    if not lines or limit == 0 or node.kind == "file":
        return []
    start = node.start_line + max(1, node.signature.count("\n") + 1) - 1
    doc = {ln.strip() for ln in node.docstring.splitlines() if ln.strip()}
    out: list[str] = []
    in_doc = False
    for raw in lines[start:node.end_line]:
        s = raw.strip()
        if s.startswith(('"""', "'''")):
            quote = s[:3]
            if not (len(s) >= 6 and s.endswith(quote)):
                in_doc = not in_doc
            continue
        if in_doc or not s or s in doc or s.startswith("#"):
            continue
        out.append(s)
        if 0 < limit <= len(out):
            break
    return out


def node_text(node: Node, lines: list[str] | None = None,
              opts: NodeTextOptions = DEFAULT_TEXT, children: Iterable[str] = ()) -> str:
    """The text embedded for a node: kind, qualified name, path, signature, docstring."""
    parts = [f"{node.kind} {node.qualname or node.name}"]
    if opts.humanize:
        parts.append(humanize(node.qualname or node.name))
    if opts.path:
        parts.append(node.file)
    if node.signature:
        parts.append(node.signature.strip())
    if node.docstring:
        parts.append(node.docstring.strip()[:opts.docstring_chars])
    kids = list(children)
    if kids:
        parts.append("defines " + ", ".join(kids[:40]))
    parts.extend(_body(node, lines, opts.body_lines))
    return "\n".join(parts)


def keyword_text(node: Node, lines: list[str] | None = None,
                 opts: NodeTextOptions = DEFAULT_TEXT, children: Iterable[str] = ()) -> str:
    """The text indexed by BM25: the names and prose of the node, optionally its code."""
    parts = [node.name, node.qualname, node.file if opts.path else "", node.signature,
             node.docstring, " ".join(children)]
    if node.kind == "file":
        if opts.file_keyword_body and lines:
            parts.extend(lines)
    else:
        parts.extend(_body(node, lines, opts.keyword_body_lines))
    return "\n".join(p for p in parts if p)


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def query_identifiers(query: str) -> set[str]:
    """Tokens of the question written like code: `x`, snake_case, camelCase, dotted, f()."""
    found: set[str] = set()
    for m in _IDENT.finditer(query):
        if m.group(1):
            found.update(p for p in re.split(r"[^A-Za-z0-9_.]+", m.group(1)) if p)
            continue
        word, call = m.group(2), m.group(3)
        if (call or "_" in word.strip("_") or "." in word
                or re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|[A-Z][a-z]+[A-Z]", word)):
            found.add(word)
    out: set[str] = set()
    for w in found:
        out.add(w)
        if "." in w:
            out.add(w.rsplit(".", 1)[-1])
    return out


class SearchIndex:
    """BM25 + vector index of one workspace's nodes, persisted under `state_dir`."""

    def __init__(self, state_dir: Path, root: Path | None = None, *,
                 embedder: Embedder | None = None, threads: int = 0,
                 text_options: NodeTextOptions = DEFAULT_TEXT,
                 rrf_k: float = RRF_K, weights: Mapping[str, float] | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.root = Path(root) if root is not None else self.state_dir.parent
        self.text_options = text_options
        self.rrf_k = rrf_k
        self.weights = dict(weights or WEIGHTS)
        self._threads = threads
        self._embedder = embedder
        self._model_error: str | None = None
        self._lock = threading.RLock()
        self._embed_lock = threading.Lock()
        self._stamps: dict[str, tuple[int, int]] = {}
        self._bm25 = BM25Index()
        self._vectors = VectorStore()
        self._names: dict[str, str] = {}         # id -> lowercased name
        self._by_name: dict[str, list[str]] | None = None   # built on first exact lookup
        self._kw_hash: dict[str, str] = {}       # id -> hash of its keyword text
        self._pending: set[str] = set()          # nodes whose vectors are not computed yet
        # A long-lived writer (the LSP server) sets this: `_save` then only marks what is
        # unsaved and `flush()` writes it when the editor is idle; in memory it is current.
        self.defer_writes = False
        self._unsaved = {"keyword": False, "vectors": False}
        self._load()

    # --- persistence ---------------------------------------------------------------------
    def _paths(self) -> dict[str, Path]:
        return {n: self.state_dir / n for n in (BM25_FILE, VECTORS_FILE, META_FILE)}

    def _stamp(self, path: Path) -> tuple[int, int]:
        try:
            st = path.stat()
        except OSError:
            return (0, 0)
        return (st.st_mtime_ns, st.st_size)

    def _load(self) -> None:
        with no_gc(freeze=True):   # ~10^5 new objects: no full collection midway, none after
            self._load_files()

    def _load_files(self) -> None:
        paths = self._paths()
        bm25 = BM25Index.load(paths[BM25_FILE])
        vectors = VectorStore.load(paths[VECTORS_FILE])
        names: dict[str, str] = {}
        kw_hash: dict[str, str] = {}
        pending: set[str] = set()
        try:   # member by member (see jsonstream): a reloading server keeps serving
            text = read_slices(paths[META_FILE])
            fmt = None
            for key, value in members(text, stream=frozenset({"nodes"})):
                if key == "format":
                    fmt = value
                elif key == "pending":
                    pending = set(value)
                elif key == "nodes" and fmt == FORMAT_VERSION:
                    for k, v in value:
                        k = sys.intern(k)       # shared with the graph and the other indexes
                        names[k], kw_hash[k] = v[0], v[1]
                elif key == "nodes":
                    break
            if fmt != FORMAT_VERSION:
                names, kw_hash, pending = {}, {}, set()
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            names, kw_hash, pending = {}, {}, set()
        dropped = None
        with self._lock:
            if bm25 is not None and len(bm25) == len(kw_hash):
                dropped = self._bm25
                self._bm25, self._names, self._kw_hash = bm25, names, kw_hash
            self._vectors = vectors if vectors is not None else VectorStore()
            self._pending = pending
            self._by_name = None
            self._unsaved = {"keyword": False, "vectors": False}
            self._stamps = {n: self._stamp(p) for n, p in paths.items()}
        if dropped is not None:
            dropped.release()

    def _save(self, keyword: bool = True, vectors: bool = True) -> None:
        with self._lock:
            self._unsaved["keyword"] |= keyword
            self._unsaved["vectors"] |= vectors
            if not self.defer_writes:
                self.flush()

    def flush(self) -> bool:
        """Write what `_save` left unsaved (the keyword index ~20 MB of JSON on Django, so
        a server writes it once the saves pause, not per save); True when it wrote.

        Deferred changes never overwrite a generation another process wrote meanwhile
        (a build that saw the same sources): that one is loaded instead."""
        paths = self._paths()
        with self._lock:
            if self.defer_writes and self.unsaved and self.reload_if_changed():
                return False
            keyword, vectors = self._unsaved["keyword"], self._unsaved["vectors"]
            if keyword:
                self._bm25.save(paths[BM25_FILE])
                head = json.dumps({"format": FORMAT_VERSION, "pending": sorted(self._pending)},
                                  separators=(",", ":"), ensure_ascii=False)
                write_object(paths[META_FILE], head[:-1] + ',"nodes":',
                             ((i, [self._names[i], h]) for i, h in self._kw_hash.items()))
            if vectors:
                self._vectors.save(paths[VECTORS_FILE])
            self._unsaved = {"keyword": False, "vectors": False}
            if keyword or vectors:
                self._stamps = {n: self._stamp(p) for n, p in paths.items()}
            return keyword or vectors

    @property
    def unsaved(self) -> bool:
        return self._unsaved["keyword"] or self._unsaved["vectors"]

    def reload_if_changed(self) -> bool:
        """Pick up a generation another process wrote; True when something was reloaded.

        A cheap check (three stats) when nothing changed. Our own unsaved changes give way
        to another writer's files: that writer ran a build, which saw the same sources.
        """
        paths = self._paths()
        if all(self._stamp(p) == self._stamps.get(n) for n, p in paths.items()):
            return False
        if self._embed_lock.locked():   # we are the writer; our own state is newer
            return False
        if self.unsaved:
            log.info("another process wrote the search index; dropping unsaved changes")
        self._load()
        return True

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

    def embedder(self) -> Embedder | None:
        """The shared embedder, loaded on first use; None (with a notice) when unavailable."""
        if self._embedder is None and self._model_error is None:
            try:
                self._embedder = load_embedder(self._threads)
            except ModelUnavailable as e:
                self._model_error = str(e)
                log.warning("semantic search unavailable, keyword-only: %s", e)
        return self._embedder

    @property
    def model_error(self) -> str | None:
        return self._model_error

    @property
    def model_state(self) -> str:
        """"unavailable", "loaded" or "not_loaded", without loading the model."""
        if self._model_error:
            return "unavailable"
        return "loaded" if self._embedder is not None else "not_loaded"

    # --- building ------------------------------------------------------------------------
    def _texts(self, graph: GraphLike, ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """id -> (name, keyword text, embedded text) for the ids present in the graph."""
        nodes = graph.nodes
        children: dict[str, list[str]] = {}
        for n in nodes.values():
            if n.kind != "file" and n.qualname and "." not in n.qualname:
                children.setdefault(n.file, []).append(n.name)
        cache: dict[str, list[str] | None] = {}
        opts = self.text_options
        need_lines = opts.body_lines or opts.keyword_body_lines
        out: dict[str, tuple[str, str, str]] = {}
        for node_id in ids:
            node = nodes.get(node_id)
            if node is None:
                continue
            lines = None
            if need_lines if node.kind != "file" else opts.file_keyword_body:
                if node.file not in cache:
                    try:
                        cache[node.file] = (self.root / node.file).read_text(
                            encoding="utf-8", errors="replace").splitlines()
                    except OSError:
                        cache[node.file] = None
                lines = cache[node.file]
            kids = children.get(node.file, []) if node.kind == "file" else []
            out[node_id] = (node.name.lower(),
                            keyword_text(node, lines, self.text_options, kids),
                            node_text(node, lines, self.text_options, kids))
        return out

    def update(self, graph: GraphLike, changed_node_ids: Iterable[str] | None = None,
               embed: bool = True, progress: ProgressFn | None = None) -> int:
        """Bring the index up to date with `graph`; returns how many texts were embedded.

        With `changed_node_ids`, only those ids are looked at (absent ones are
        removed); otherwise every node is, and ids no longer in the graph go.
        """
        with self._embed_lock:
            if changed_node_ids is None:
                targets = list(graph.nodes)
                gone = [i for i in self._kw_hash if i not in graph.nodes]
            else:
                wanted = list(changed_node_ids)
                # a file node's text lists its symbols, so it changes with them
                wanted = list(dict.fromkeys(wanted + [node_path(i) for i in wanted]))
                targets = [i for i in wanted if i in graph.nodes]
                gone = [i for i in wanted if i not in graph.nodes]
            texts = self._texts(graph, targets)
            with self._lock:
                # A save patches the name map; rebuilding it from 42k names after every
                # save stalled the editor's loop ~30 ms (allocation-driven GC passes).
                by_name = self._by_name if changed_node_ids is not None else None
                self._by_name = by_name
                pending_before = set(self._pending)
                dirty = False
                for node_id in gone:
                    dirty |= node_id in self._kw_hash
                    self._bm25.remove(node_id)
                    _rename(by_name, node_id, self._names.pop(node_id, None), None)
                    self._kw_hash.pop(node_id, None)
                for node_id, (name, kw, _) in texts.items():
                    h = _hash(kw)
                    if self._kw_hash.get(node_id) != h:
                        self._bm25.add(node_id, kw)
                        self._kw_hash[node_id] = h
                        dirty = True
                    old = self._names.get(node_id)
                    if old != name:
                        dirty = True
                        _rename(by_name, node_id, old, name)
                    self._names[node_id] = name
                self._vectors.remove(gone)
                todo = {i: _hash(t[2]) for i, t in texts.items()
                        if self._vectors.text_hash(i) != _hash(t[2])}
                if changed_node_ids is None:
                    self._pending = set(todo)
                else:
                    self._pending = (self._pending - set(gone) - set(texts)) | set(todo)
                dirty |= self._pending != pending_before
            # rewriting ~20 MB of JSON for nothing would stall every reader (and the GIL)
            if dirty or bool(gone):
                self._save(keyword=True, vectors=bool(gone))
            if not embed or not todo:
                return 0
            embedder = self.embedder()
            if embedder is None:
                return 0
            return self._embed(embedder, {i: texts[i][2] for i in todo}, todo, progress)

    def _embed(self, embedder: Embedder, texts: dict[str, str], hashes: dict[str, str],
               progress: ProgressFn | None) -> int:
        with self._lock:
            if self._vectors.model_id != embedder.model_id:
                if len(self._vectors):
                    log.info("embedding model changed (%s -> %s); recomputing vectors",
                             self._vectors.model_id, embedder.model_id)
                self._vectors.clear(embedder.model_id)
            known = self._vectors.vectors_by_hash()
        reuse = [i for i in texts if hashes[i] in known]
        fresh = [i for i in texts if hashes[i] not in known]
        vecs = embedder.embed([texts[i] for i in fresh], progress) if fresh else np.zeros((0, 384))
        with self._lock:
            if reuse:
                self._vectors.upsert(reuse, np.stack([known[hashes[i]] for i in reuse]),
                                     [hashes[i] for i in reuse])
            if fresh:
                self._vectors.upsert(fresh, vecs, [hashes[i] for i in fresh])
            live = set(self._kw_hash)
            self._vectors.remove([i for i in self._vectors.ids() if i not in live])
            self._pending -= set(texts)
        self._save(keyword=True, vectors=True)
        return len({texts[i] for i in fresh})

    # --- searching -----------------------------------------------------------------------
    def search(self, query: str, k: int = 20, mode: str = "hybrid") -> SearchResult:
        """Ranked nodes for a question; `mode="keyword"` skips the model."""
        self.reload_if_changed()
        terms = code_tokens(query)
        about_tests = any(t in _TEST_WORDS for t in terms) or bool(
            re.search(r"\btest", query, re.IGNORECASE))
        notice = ""
        vector_hits: list[tuple[str, float]] = []
        use_vectors = mode == "hybrid"
        if use_vectors:
            embedder = self.embedder()
            if embedder is None:
                use_vectors, notice = False, f"keyword-only: {self._model_error}"
            elif len(self._vectors) == 0:
                use_vectors = False
                notice = ("keyword-only: embeddings are not ready yet"
                          + (f" ({self.pending} nodes pending)" if self._pending else ""))
            else:
                qv = embedder.embed([query])[0]
                with self._lock:
                    vector_hits = self._vectors.search(qv, CANDIDATES)
                if self._pending:
                    notice = f"{self.pending} nodes still waiting for embeddings"
        with self._lock:
            bm25_hits = self._bm25.search_terms(
                [t for t in terms if t not in _CHANGE_WORDS] or terms, CANDIDATES)
            names = self._names
            exact = self._exact_matches(query)
        lists = {"bm25": [i for i, _ in bm25_hits], "vector": [i for i, _ in vector_hits]}
        fused = {f.id: f for f in rrf(lists, self.weights, self.rrf_k)}
        bm25_score = dict(bm25_hits)
        vec_score = dict(vector_hits)
        node_scores = {i: fused[i].score if i in fused else 0.0 for i in set(fused) | exact}
        by_file = group_rrf(node_scores, node_path, FILE_WEIGHT, self.rrf_k) if FILE_WEIGHT else {}
        hits: list[Hit] = []
        for node_id, score in node_scores.items():
            f = fused.get(node_id)
            hit = Hit(node_id, score,
                      vector_rank=f.ranks.get("vector") if f else None,
                      bm25_rank=f.ranks.get("bm25") if f else None,
                      vector_score=vec_score.get(node_id), bm25_score=bm25_score.get(node_id),
                      contributions=dict(f.contributions) if f else {})
            if by_file:
                hit.score += by_file[node_id]
                hit.contributions["file"] = by_file[node_id]
            if node_id in exact:
                hit.score += EXACT_BOOST
                hit.reasons.append(f"exact name match: {names.get(node_id, '')}")
            if not about_tests and is_test_path(node_path(node_id)):
                hit.score *= TEST_FACTOR
                hit.reasons.append("test/generated code down-weighted")
            hits.append(hit)
        hits.sort(key=lambda h: (-h.score, h.id))
        if COMPANION_SHARE:
            hits = self._with_companion_tests(hits)
        return SearchResult(hits[:k], "hybrid" if use_vectors else "keyword", notice)

    def _with_companion_tests(self, hits: list[Hit]) -> list[Hit]:
        """Rank each of the best source files' test file (`tests/test_x.py` for `x.py`)
        just below it: a change to `x.py` usually changes its test too, which the
        test down-weighting would otherwise bury."""
        best: dict[str, float] = {}
        for h in hits:
            best.setdefault(node_path(h.id), h.score)
        sources = [f for f in best if not is_test_path(f)][:COMPANION_FILES]
        by_id = {h.id: h for h in hits}
        changed = False
        for source in sources:
            for test in companion_test_paths(source):
                if test not in self._names:
                    continue
                score = COMPANION_SHARE * best[source]
                hit = by_id.get(test)
                if hit is None:
                    hit = by_id[test] = Hit(test, 0.0)
                    hits.append(hit)
                if score > hit.score:
                    hit.score = score
                    hit.reasons.append(f"test of {source}")
                    changed = True
        if changed:
            hits.sort(key=lambda h: (-h.score, h.id))
        return hits

    def _exact_matches(self, query: str) -> set[str]:
        wanted = {w.lower() for w in query_identifiers(query)}
        if not wanted:
            return set()
        if self._by_name is None:
            by_name: dict[str, list[str]] = {}
            for node_id, name in self._names.items():
                by_name.setdefault(name, []).append(node_id)
            self._by_name = by_name
        return {i for w in wanted for i in self._by_name.get(w, ())
                if len(self._by_name[w]) <= EXACT_MAX_NODES}


def _rename(by_name: dict[str, list[str]] | None, node_id: str, old: str | None,
            new: str | None) -> None:
    """Move `node_id` from name `old` to name `new` in the exact-name map (None: absent)."""
    if by_name is None:
        return
    if old is not None and node_id in (ids := by_name.get(old, ())):
        ids.remove(node_id)
        if not ids:
            del by_name[old]
    if new is not None:
        by_name.setdefault(new, []).append(node_id)


def as_json(result: SearchResult) -> dict[str, Any]:
    """A plain-JSON view of a result (for --json and --explain)."""
    return {"mode": result.mode, "notice": result.notice, "hits": [
        {"id": h.id, "score": round(h.score, 6), "vector_rank": h.vector_rank,
         "bm25_rank": h.bm25_rank, "vector_score": h.vector_score, "bm25_score": h.bm25_score,
         "contributions": h.contributions, "reasons": h.reasons} for h in result.hits]}
