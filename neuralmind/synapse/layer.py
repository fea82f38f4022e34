"""The synapse layer as the engine exposes it (`Workspace.synapses`).

Editing events are learned at file level (the file node id is the repo-relative
path), which keeps them cheap; query hits and feedback may be symbol ids
(`path::Qualified.name`) and are mapped to their file where a file is needed.
Reads use the merged view of the active namespace (1.0), personal (0.8) and
shared (0.5). Every method fails open: learning never breaks an edit, a query or
a build.

With a team store configured (`share`), what is learned on the default branch is also
written to `shared`, and every write to `shared` puts its event in the store's outbox
in the same transaction (`sharing.py`); `on_share` then tells the team sync to push.
Branch, personal and ephemeral learning stay on this machine.
"""

from __future__ import annotations

import contextlib
import logging
import posixpath
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from neuralmind import config, outbox
from neuralmind.events import bus, publish
from neuralmind.graph.model import file_of
from neuralmind.statedir import STATE_DIR_NAME, atomic_write_bytes
from neuralmind.statedir import state_dir as state_dir_of
from neuralmind.synapse import learned, seeding
from neuralmind.synapse.export import bundle_bytes, bundle_document, memory_markdown
from neuralmind.synapse.namespaces import (
    EPHEMERAL,
    PERSONAL,
    SHARED,
    ActiveNamespace,
    merged_weights,
    normalize_namespace,
)
from neuralmind.synapse.sessions import Batch, Question, SessionTracker
from neuralmind.synapse.sharing import SharedView
from neuralmind.synapse.store import SynapseStore

log = logging.getLogger("neuralmind.synapse")

DB_NAME = "synapses.db"
MEMORY_NAME = "SYNAPSE_MEMORY.md"
BUNDLE_NAME = "synapse_bundle.json"
QUESTION_HITS = 5  # a question's top hits linked to the files it led to
HITS_CACHE_SIZE = 64  # provided hits per question, so repeated flushes ask once
SYNAPSE_EVENT_PAIRS = 50  # reinforced pairs an event lists (a page draws them as edges)


class SynapseLayer:
    """Hebbian memory of one workspace: learning signals in, associations and predictions out."""

    def __init__(self, state_dir: Path, root: Path, clock: Callable[[], float] = time.time,
                 namespace: str | None = None, db_dir: Path | None = None) -> None:
        """`db_dir`: where synapses.db lives when not in `state_dir` (the repository's
        learned folder, shared by its worktrees); exports stay in `state_dir`."""
        self.state_dir = Path(state_dir)
        self.root = Path(root).resolve()
        if self.state_dir.resolve() == self.root / STATE_DIR_NAME:
            state_dir_of(self.root)  # created with its .gitignore, so it is never committed
        self.clock = clock
        self.store = SynapseStore(Path(db_dir or self.state_dir) / DB_NAME, clock=clock)
        self._active = ActiveNamespace(self.root, namespace)
        self.sessions = SessionTracker(self._learn_batch, self._learn_question, clock)
        # Set by the engine: question -> top hit ids, used when a session names its question
        # but nobody reported its hits (e.g. replayed event streams).
        self.hits_provider: Callable[[str], list[str]] | None = None
        self._hits_cache: dict[str, list[str]] = {}
        self.share = False          # a team store is configured: `shared` writes are sent
        self.on_share: Callable[[], None] | None = None   # an event is in the outbox

    # --- the team brain -------------------------------------------------------------------
    def _sharing(self) -> bool:
        """Whether learning now is the team's: shared, and on the default branch."""
        return self.share and self.namespace == PERSONAL

    def _shared(self, wrote: bool = True) -> None:
        if wrote and self.on_share is not None and self.store.last_skipped() is None:
            try:
                self.on_share()
            except Exception as e:  # learning fails open
                log.warning("could not wake the team sync: %s", e)

    def unsent(self) -> int:
        """Shared events in this store's outbox (not yet taken by the team sync)."""
        try:
            with self.store.reading() as conn:
                return outbox.count(conn)
        except sqlite3.Error as e:
            log.info("cannot count the unsent team events: %s", e)
            return 0

    def exchange_needed(self, mirror: str) -> bool:
        """Whether the team sync has something to collect, or this store shows another
        mirror (read without a write transaction: most rounds have neither)."""
        try:
            with self.store.reading() as conn:
                return SharedView(conn, 0.0).exchange_needed(mirror)
        except sqlite3.Error:
            return True          # let the exchange's own transaction say what is wrong

    @contextlib.contextmanager
    def shared_view(self) -> Iterator[SharedView]:
        """The team component's exchange with this store (outbox out, the team's state in),
        in one transaction of it; errors are raised."""
        with self.store.transaction() as conn:
            yield SharedView(conn, self.clock())

    @property
    def disabled(self) -> str | None:
        """Why the store refuses to touch its file (a newer schema, a failed migration)."""
        return self.store.disabled

    def last_skipped(self) -> str | None:
        """Why the last write was skipped (locked, read-only), or None when it landed."""
        return self.store.last_skipped()

    # --- namespaces ---------------------------------------------------------------------
    @property
    def namespace(self) -> str:
        """Where writes go: `branch:<name>` on a non-default git branch, else personal."""
        return self._active.get()

    def _weights(self, namespaces: Sequence[str] | None = None) -> dict[str, float]:
        if namespaces:
            return {normalize_namespace(ns): 1.0 for ns in namespaces}
        return merged_weights(self.namespace)

    def _writable(self, namespace: str | None) -> str:
        return self.namespace if namespace is None else normalize_namespace(namespace)

    # --- paths --------------------------------------------------------------------------
    def file_id(self, path: str | Path) -> str:
        """Repo-relative '/' path of a file (absolute paths must lie under the root)."""
        p = str(path).replace("\\", "/").strip()
        if not p:
            raise ValueError("empty file path")
        if Path(p).is_absolute():
            try:
                p = Path(p).resolve().relative_to(self.root).as_posix()
            except ValueError:
                raise ValueError(f"{path} is outside the workspace {self.root}") from None
        p = posixpath.normpath(p)
        if p == "." or p.startswith("../") or p == "..":
            raise ValueError(f"{path} is outside the workspace")
        return p

    # --- learning -----------------------------------------------------------------------
    def activate(self, node_ids: Iterable[str], namespace: str | None = None,
                 now: float | None = None) -> int:
        """Hebbian co-activation of a set of nodes; returns the number of pairs reinforced."""
        share = namespace is None and self._sharing()
        n = self.store.activate(list(node_ids), self._writable(namespace), now, share=share)
        self._shared(share)
        return n

    def activate_files(self, paths: Iterable[str | Path], namespace: str | None = None,
                       now: float | None = None) -> int:
        """Co-activate files and record their order as transitions (A -> B -> C)."""
        files = list(dict.fromkeys(self.file_id(p) for p in paths))
        ns = self._writable(namespace)
        n = self.store.activate(files, ns, now)
        self.store.record_transitions(zip(files, files[1:], strict=False), ns, now)
        return n

    def editing_event(self, session: str, kind: str, file: str = "", ts: float | None = None,
                      query: str | None = None) -> None:
        """One editor/agent event: session_start (optionally with the question that started
        it), open, edit, save, session_end. Raises ValueError for malformed events only."""
        rel = self.file_id(file) if file else ""
        self.sessions.event(session, kind, rel, ts=ts, query=query)

    def record_query(self, session: str, query: str, hit_ids: Sequence[str],
                     ts: float | None = None) -> None:
        """A question asked in `session` and its top hits; later edits are what it led to."""
        if query and query.strip():
            self.sessions.question(session, query.strip(), list(hit_ids)[:QUESTION_HITS], ts)

    def flush(self, session: str | None = None) -> None:
        """Learn what the session (or every session) has pending now. Co-activation windows
        stay open, so flushing after every quiet spell (as the LSP server does) learns the
        same as one flush at the end."""
        self.sessions.flush(session)

    def close_sessions(self) -> None:
        """End every open session (learning what is pending)."""
        self.sessions.close_all()

    def _learn_batch(self, batch: Batch) -> None:
        pairs = list(batch.pairs)
        if batch.question and batch.edited:
            hits = batch.hits or self._provided_hits(batch.question)
            hit_files = list(dict.fromkeys(file_of(h) for h in hits))
            pairs += [(h, f) for h in hit_files for f in batch.edited if h != f]
        share = self._sharing() and bool(pairs or batch.touched or batch.transitions)
        n = self.store.learn_batch(pairs, batch.touched, batch.transitions, self.namespace,
                                   batch.ts, share=share)
        self._shared(share)
        if n and bus.active:
            publish("synapse", session=batch.session, namespace=self.namespace, pairs=n,
                    edges=[list(p) for p in pairs[:SYNAPSE_EVENT_PAIRS]],
                    files=list(batch.touched))

    def _learn_question(self, q: Question) -> None:
        hits = q.hits or self._hits_cache.get(q.query, [])
        self.store.record_question(self.namespace, q.session, q.query, hits, q.files, q.ts)

    def _provided_hits(self, query: str) -> list[str]:
        if self.hits_provider is None:
            return []
        if query not in self._hits_cache:
            try:
                hits = list(self.hits_provider(query))[:QUESTION_HITS]
            except Exception as e:  # learning fails open
                log.warning("could not fetch hits for a replayed question: %s", e)
                hits = []
            if len(self._hits_cache) >= HITS_CACHE_SIZE:
                del self._hits_cache[next(iter(self._hits_cache))]
            self._hits_cache[query] = hits
        return self._hits_cache[query]

    def feedback(self, node_id: str, positive: bool, context: Sequence[str] = (),
                 now: float | None = None) -> int:
        """Positive: reinforce the node with its context. Negative: weaken its edges in the
        merged namespaces (LTP edges keep their floor and are never deleted)."""
        if positive:
            n = self.activate([node_id, *context], now=now)
        else:
            n = self.store.weaken_node(node_id, sorted(self._weights()),
                                       config.NEGATIVE_FEEDBACK_FACTOR, now, share=self.share)
            self._shared(self.share)
        publish("synapse", feedback="positive" if positive else "negative", node=node_id,
                context=list(context), pairs=n, namespace=self.namespace)
        return n

    # --- recall -------------------------------------------------------------------------
    def spread(self, seed_ids: Sequence[str], depth: int = config.SPREAD_DEPTH,
               top_k: int = config.SPREAD_TOP_K, namespaces: Sequence[str] | None = None,
               now: float | None = None) -> list[tuple[str, float]]:
        """Nodes reached by spreading activation from the seeds (a symbol seed also seeds its
        file), with their accumulated energy; seeds themselves are not returned."""
        seeds = self._seeds(seed_ids)
        if not seeds:
            return []
        return self.store.spread(seeds, self._weights(namespaces), depth, top_k, now)

    @staticmethod
    def _seeds(seed_ids: Sequence[str]) -> dict[str, float]:
        seeds: dict[str, float] = {}
        for s in seed_ids:
            if s:
                seeds[s] = 1.0
                seeds.setdefault(file_of(s), 1.0)
        return seeds

    def spread_detailed(self, seed_ids: Sequence[str], depth: int = config.SPREAD_DEPTH,
                        top_k: int = config.SPREAD_TOP_K, now: float | None = None,
                        ) -> list[tuple[str, float, dict[str, float]]]:
        """`spread` with each node's energy split by namespace (personal, shared, branch:...)."""
        seeds = self._seeds(seed_ids)
        if not seeds:
            return []
        return self.store.spread_detailed(seeds, self._weights(), depth, top_k, now)

    def neighbors(self, node_id: str, k: int = 10, namespaces: Sequence[str] | None = None,
                  now: float | None = None) -> list[tuple[str, float]]:
        """Strongest merged associations of one node."""
        nbrs = self.store.edges_of([node_id], self._weights(namespaces), now).get(node_id, {})
        return sorted(nbrs.items(), key=lambda kv: (-kv[1], kv[0]))[:k]

    def associations(self, node_ids: Sequence[str], namespaces: Sequence[str] | None = None,
                     now: float | None = None) -> dict[str, dict[str, float]]:
        """Every merged association of each of `node_ids` (a bulk `neighbors`, unsorted)."""
        out: dict[str, dict[str, float]] = {}
        ids = list(node_ids)
        for i in range(0, len(ids), 500):
            out.update(self.store.edges_of(ids[i:i + 500], self._weights(namespaces), now))
        return out

    def learned_edges(self, limit: int, now: float | None = None,
                      ) -> list[tuple[str, str, float, str]]:
        """The strongest synapses learned from use (every namespace but the structural and
        co-change priors of `shared`), strongest first."""
        return learned.strongest(self.store, limit, (SHARED,), now)

    def next_likely(self, node_id: str, k: int = 5, now: float | None = None,
                    ) -> list[tuple[str, float]]:
        """What usually follows `node_id`: directional transitions normalised to probabilities
        (the full distribution sums to 1; the top k are returned)."""
        return _top(_normalise(self.store.transitions_from(node_id, self._weights(), now)), k)

    def next_likely_file(self, path: str | Path, k: int = 5, now: float | None = None,
                         mix: dict[str, float] | None = None) -> list[tuple[str, float]]:
        """Files likely to be touched after `path`: a mixture of transitions, co-activation
        and popularity (each normalised first), as probabilities over the candidates."""
        f = self.file_id(path)
        weights = self._weights()
        parts = {
            "transition": _by_file(self.store.transitions_from(f, weights, now), f),
            "coactivation": _by_file(self.store.edges_of([f], weights, now).get(f, {}), f),
            "popularity": _by_file(self.store.popularity(weights, 100, now), f),
        }
        score: dict[str, float] = defaultdict(float)
        for name, w in (mix or config.NEXT_FILE_MIX).items():
            for node, p in _normalise(parts.get(name, {})).items():
                score[node] += w * p
        return _top(_normalise(score), k)

    def session_counts(self, path: str | Path) -> tuple[int, dict[str, int]]:
        """How many learned editing sessions touched `path`, and how many of those also
        touched each partner file: what was learned here (the active namespace and personal),
        not the priors seeded into `shared` at build."""
        f = self.file_id(path)
        learned = sorted(ns for ns in self._weights() if ns not in (SHARED, EPHEMERAL))
        of, partners = self.store.cochange_counts(f, learned)
        return of, {p: c for p, c in partners.items() if file_of(p) == p and p != f}

    def question_files(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """Files that earlier questions sharing words with `query` led to."""
        return self.store.question_files(query, k)

    def learn_use(self, session: str, question: str, kept: Sequence[str],
                  unused: Sequence[str], ts: float | None = None) -> None:
        """What an answer's use taught: the question led to the `kept` files (changed and
        still changed at the next commit), and its answer returned `unused` files the work
        did not open or change. Kept files strengthen the question -> files association;
        unused ones weaken it, down to none (SynapseStore.question_scores)."""
        if question.strip() and (kept or unused):
            share = self._sharing()
            self.store.record_question(self.namespace, session, question.strip(), [],
                                       list(kept), ts, unused=list(unused), share=share)
            self._shared(share)

    # --- seeding ------------------------------------------------------------------------
    def seed_structural(self, edges: Iterable[tuple[str, str, int]],
                        now: float | None = None) -> int:
        """Call/import edges with counts -> file-level synapses in `shared` (log-scaled, MAX
        semantics, idempotent). Returns how many new synapses were created."""
        try:
            agg = seeding.file_level_edges(edges)
        except (TypeError, ValueError) as e:
            log.warning("structural seeding skipped: %s", e)
            return 0
        self.store.set_structural(agg)
        weights = {pair: seeding.structural_weight(c) for pair, c in agg.items()}
        return self.store.seed_pairs(weights, SHARED, now)

    def import_bundle(self, path: str | Path, namespace: str = SHARED,
                      now: float | None = None) -> int:
        """Load a bundle into `namespace` (MAX semantics); ValueError when malformed.
        Returns how many new synapses were created."""
        pairs, transitions = seeding.read_bundle(Path(path))
        ns = normalize_namespace(namespace)
        share = self.share and ns == SHARED
        created = self.store.seed_pairs(pairs, ns, now, share=share)
        if transitions:
            self.store.seed_transitions(transitions, ns, now, share=share)
        self._shared(share)
        return created

    def seed_bundle(self, path: str | Path, now: float | None = None) -> int:
        """`--bootstrap FILE` at build: like import_bundle into shared, but fails open."""
        try:
            return self.import_bundle(path, SHARED, now)
        except ValueError as e:
            log.warning("bundle seeding skipped: %s", e)
            return 0

    def seed_cochange(self, root: Path | None = None, now: float | None = None) -> int:
        """Files changed together in the last COCHANGE_MAX_COMMITS commits -> `shared`
        synapses (log-scaled like structural edges) and a popularity prior; 0 when not a git
        checkout. Returns how many new synapses were created."""
        base = Path(root).resolve() if root else self.root
        commits = seeding.git_commits(base)
        if not commits:
            return 0
        pairs, freq = seeding.cochange(commits, base)
        weights = {p: seeding.structural_weight(c) for p, c in pairs.items()}
        created = self.store.seed_pairs(weights, SHARED, now, share=self.share)
        self.store.seed_activations(dict(freq), SHARED, now, share=self.share)
        self._shared(self.share)
        return created

    # --- operations ---------------------------------------------------------------------
    def stats(self, now: float | None = None) -> dict[str, Any]:
        out = self.store.stats(now)
        out["active_namespace"] = self.namespace
        out["open_sessions"] = len(self.sessions.open_sessions)
        if self.disabled:
            out["disabled"] = self.disabled
        return out

    def prune(self, older_than_days: float | None = None, now: float | None = None,
              ) -> dict[str, int]:
        return self.store.prune(now, older_than_days)

    def decay_pass(self, now: float | None = None) -> dict[str, int]:
        return self.store.decay_pass(now)

    def export_memory(self, now: float | None = None) -> Path:
        """Write `.neuralmind/SYNAPSE_MEMORY.md` (valid even when empty); return its path."""
        t = self.clock() if now is None else now
        path = self.state_dir / MEMORY_NAME
        text = memory_markdown(self.store.stats(t), self.namespace, t)
        atomic_write_bytes(path, text.encode("utf-8"))
        return path

    def export_bundle(self, path: str | Path | None = None, now: float | None = None) -> Path:
        """Write every durable synapse and transition (not `ephemeral`) as a bundle JSON."""
        t = self.clock() if now is None else now
        target = Path(path) if path else self.state_dir / BUNDLE_NAME
        synapses = [s for s in self.store.dump(None, t) if s["namespace"] != EPHEMERAL]
        transitions = [r for r in self.store.dump_transitions(t) if r["namespace"] != EPHEMERAL]
        atomic_write_bytes(target, bundle_bytes(bundle_document(synapses, transitions, t)))
        return target

    def close(self) -> None:
        self.close_sessions()
        self.store.close()


def _by_file(scores: dict[str, float], exclude: str) -> dict[str, float]:
    """Fold symbol ids into their files and drop the file asked about."""
    out: dict[str, float] = defaultdict(float)
    for node, s in scores.items():
        f = file_of(node)
        if f != exclude:
            out[f] += s
    return out


def _normalise(scores: dict[str, float]) -> dict[str, float]:
    total = sum(v for v in scores.values() if v > 0)
    return {k: v / total for k, v in scores.items() if v > 0} if total else {}


def _top(scores: dict[str, float], k: int) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[: max(0, k)]


__all__ = ["PERSONAL", "SHARED", "SynapseLayer"]
