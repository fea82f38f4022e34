"""The workspace engine: one object per project root that owns every component.

Adapters (CLI, LSP, MCP) hold a `Workspace` (inside a server, through the
EngineService) and call its methods; an operation offered by more than one
adapter, or any behaviour an adapter would otherwise hold (hover, workspace
symbols, the path rule, the commit scan), is one method here. Components are
created lazily so a command pays only for what it uses (the LSP server must
answer `initialize` before the embedding model is loaded).
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind import heap
from neuralmind.config import (
    DEFAULT_BUDGET,
    MAX_BUDGET,
    MAX_NEXT_K,
    MAX_QUESTION_CHARS,
    MAX_SEARCH_K,
    MIN_BUDGET,
    QUERY_HITS,
    REVIEW_MIN_CONFIDENCE,
    STALE_TEMP_SECONDS,
    WAKEUP_BUDGET,
    WAKEUP_MEMORY_SHARE,
    WorkspaceConfig,
    load_workspace_config,
)
from neuralmind.context.pack import ContextResult, RankedHit, assemble
from neuralmind.context.retrieve import rank
from neuralmind.engine import coverage, memory_ops, navigation
from neuralmind.engine.attention import Attention
from neuralmind.engine.fresh_answers import FreshAnswers
from neuralmind.engine.index_jobs import IndexJobs
from neuralmind.engine.observatory_views import ObservatoryViews
from neuralmind.engine.paths import confine
from neuralmind.engine.warm_up import warm_up_steps
from neuralmind.engine.workspace_memory import WorkspaceMemory
from neuralmind.engine.workspace_team import WorkspaceTeam
from neuralmind.errors import InvalidArgument, NotFound
from neuralmind.graph.store import Graph, graph_path, load_graph, stored_token
from neuralmind.repo.learned import learned_dir
from neuralmind.statedir import state_dir, sweep_stale_temps

if TYPE_CHECKING:
    from neuralmind.graph.build import BuildReport
    from neuralmind.graph.model import Node
    from neuralmind.index.file_rank import RankedFile
    from neuralmind.index.search_index import SearchIndex
    from neuralmind.memory.decisions.store import DecisionStore
    from neuralmind.memory.store import MemoryStore
    from neuralmind.review.cochange import CommitHistory
    from neuralmind.review.report import Review
    from neuralmind.synapse.layer import SynapseLayer

log = logging.getLogger("neuralmind.engine")

ProgressFn = Callable[[str, int, int], None]  # (phase, done, total)


class Workspace(FreshAnswers, IndexJobs, ObservatoryViews, WorkspaceMemory, WorkspaceTeam):
    """The engine for one project root."""

    def __init__(self, root: Path, config: WorkspaceConfig | None = None) -> None:
        self.root = Path(root).resolve()
        self.config = config or load_workspace_config(self.root)
        self._graph: Graph | None = None
        self._buffers: dict[str, str] = {}    # unsaved editor buffers extracted in place
        self._text_changes = coverage.TextChanges()
        self.attention = Attention()
        self._history: tuple[str, CommitHistory] | None = None   # (base sha, its co-change)

    @property
    def state(self) -> Path:
        return state_dir(self.root)

    # --- graph ---------------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        """The last complete graph on disk (empty when the workspace was never built)."""
        if self._graph is None:
            self._graph = load_graph(self.state)
        return self._graph

    def build(self, changed: list[str] | None = None, progress: ProgressFn | None = None,
              embed: bool = True, bootstrap: Path | None = None) -> BuildReport:
        """Bring graph and search index up to date: all files, or only `changed` paths.

        A full build also seeds the synapse layer with cold-start priors (the call and
        import structure, git co-change, an optional bundle); seeding fails open.
        """
        from neuralmind.graph.build import GraphBuilder  # ~50 ms: a cold query needs none
        from neuralmind.index.save_journal import SaveJournal  # (with the index, first use)
        before = self.graph if changed is not None else None
        if before is None:
            sweep_stale_temps(self.state, STALE_TEMP_SECONDS)
            SaveJournal(self.state).clear()     # the full update below repairs any lag
        else:       # caught up first: the update below looks at `changed` only
            self.index.journal.clear()
        report = GraphBuilder(self.root, self.config).build(changed=changed, progress=progress,
                                                            previous=self._graph)
        self._graph = report.graph
        embed_progress = (lambda done, total: progress("embed", done, total)) if progress else None
        if before is None:
            self._seed_synapses(report.graph, bootstrap)
            if "index" not in self.__dict__:    # not opened yet: no catch-up to pay twice
                self.__dict__["index"] = self._open_index(catch_up=False)
            self.index.update(report.graph, embed=False)
            if embed:
                coverage.embed_pending(report.graph, self.index, self.config, embed_progress)
            return report
        touched = set(report.reextracted) | set(report.removed)
        ids = {n.id for p in touched for g in (before, report.graph) for n in g.nodes_by_file(p)}
        if ids:
            self.index.update(report.graph, changed_node_ids=sorted(ids), embed=embed,
                              progress=embed_progress)
        return report

    def _seed_synapses(self, graph: Graph, bootstrap: Path | None) -> None:
        layer = self._synapses_or_none()
        if layer is None:
            return
        try:
            layer.seed_structural((e.source, e.target, e.count) for e in graph.edges
                                  if e.kind != "contains")
            layer.seed_cochange(self.root)
            if bootstrap is not None:
                layer.seed_bundle(bootstrap)
        except Exception as e:  # seeding is a prior, never a reason to fail a build
            log.warning("synapse seeding failed: %s", e)

    def resolve_path(self, path: str) -> str:
        """A client-supplied path as a repo-relative one; EngineError("invalid_path") for
        anything outside the root (see `engine.paths.confine`, the one rule)."""
        return confine(self.root, path)

    # --- retrieval -----------------------------------------------------------------------
    @functools.cached_property
    def index(self) -> SearchIndex:
        return self._open_index(catch_up=True)

    def _open_index(self, catch_up: bool) -> SearchIndex:
        """The index, caught up with the stored graph unless a full build writes both."""
        from neuralmind.index import generation  # (imported on first use, as below)
        from neuralmind.index.search_index import SearchIndex  # ~0.23 s (numpy, usearch)

        index = SearchIndex(self.state, root=self.root, threads=self.config.embed_threads)
        if catch_up:
            generation.catch_up(index, stored_token(self.state), lambda: self.graph)
        return index

    def ensure_built(self, progress: ProgressFn | None = None) -> None:
        """Build on first use, so `query` on a fresh folder just works."""
        if not self.graph.files and not graph_path(self.state).exists():
            self.build(progress=progress)

    @staticmethod
    def _check_question(question: str) -> str:
        q = (question or "").strip()
        if not q:
            raise InvalidArgument("the question is empty")
        if len(q) > MAX_QUESTION_CHARS:
            raise InvalidArgument(
                f"the question is {len(q):,} characters; the limit is {MAX_QUESTION_CHARS:,}")
        return q

    def search(self, question: str, k: int = 10) -> tuple[list[RankedHit], str, str]:
        """Ranked nodes for `question`, the mode that ran and any notice."""
        hits, _files, mode, notice = self._rank(question, k)
        return hits, mode, notice

    def _rank(self, question: str, k: int) -> tuple[list[RankedHit], list[RankedFile], str, str]:
        """Ranked symbols and files (`context/retrieve.py`), the mode and any notice."""
        q = self._check_question(question)
        if k < 1 or k > MAX_SEARCH_K:
            raise InvalidArgument(f"k must be between 1 and {MAX_SEARCH_K}")
        return rank(self.index, self.graph, q, k=k, synapses=self._synapses_or_none())

    def query(self, question: str, budget: int | None = None, explain: bool = False,
              include_wakeup: bool = True) -> ContextResult:
        """The context pack for `question` within `budget` tokens, with its file ranking."""
        budget = self._check_budget(budget)
        hits, files, mode, notice = self._rank(question, QUERY_HITS)
        result = assemble(self.root, self.graph, self._check_question(question), hits, mode,
                          budget=budget, include_wakeup=include_wakeup, explain=explain,
                          files=files)
        result.notice = notice
        return result

    def wakeup(self, budget: int | None = None) -> ContextResult:
        """L0 + L1, and what memory adds (directives, open loops, stale decisions on recently
        edited files, active hubs) within its share of the same budget."""
        budget = self._check_budget(budget,
                                    default=self.config.budget * WAKEUP_BUDGET // DEFAULT_BUDGET)
        mode = "keyword" if self.index.model_error or not self.index.vector_count else "hybrid"
        block = memory_ops.wakeup_block(self.memory, self.config, int(budget * WAKEUP_MEMORY_SHARE))
        result = assemble(self.root, self.graph, None, [], mode, budget=budget - block.tokens)
        return memory_ops.with_memory(result, block)

    def _check_budget(self, budget: int | None, default: int | None = None) -> int:
        b = budget if budget is not None else (default or self.config.budget)
        if not isinstance(b, int) or b < MIN_BUDGET or b > MAX_BUDGET:
            raise InvalidArgument(f"budget must be an integer between {MIN_BUDGET} and {MAX_BUDGET}")
        return b

    def _synapses_or_none(self) -> SynapseLayer | None:
        if not self.config.learning:
            return None
        try:
            return self.synapses
        except Exception as e:  # learning fails open
            log.warning("synapse layer unavailable: %s", e)
            return None

    # --- learned memory ------------------------------------------------------------------
    @functools.cached_property
    def learned(self) -> Path:
        """The folder of the learned stores: shared by every worktree of this repository
        (keyed by its identity, see repo/learned.py); `.neuralmind/` outside git."""
        return learned_dir(self.root)

    @functools.cached_property
    def synapses(self) -> SynapseLayer:
        from neuralmind.synapse.layer import SynapseLayer  # ~45 ms, on first use

        layer = SynapseLayer(self.state, self.root, db_dir=self.learned)
        # a replayed or editor session that names a question learns from that question's hits
        layer.hits_provider = lambda q: [h.node.id for h in self.search(q, k=5)[0]]
        layer.share = self.team_configured()
        return layer

    @functools.cached_property
    def memory(self) -> MemoryStore:
        from neuralmind.memory.store import MemoryStore  # ~0.12 s, on first use

        return self._team_memory(MemoryStore(self.root, directory=self.learned))

    @property
    def decisions(self) -> DecisionStore:
        """Decisions are memory: the same store, seen through its decision API."""
        return self.memory

    # --- learning ------------------------------------------------------------------------
    def editing_event(self, session: str, kind: str, file: str, query: str | None = None) -> None:
        """One editor/agent activity event (session_start, open, edit, save, session_end)."""
        layer = self._synapses_or_none()
        if layer is None:
            return
        rel = self.resolve_path(file) if file else ""
        try:
            layer.editing_event(session, kind, rel, query=query)
        except Exception as e:  # learning fails open
            log.warning("could not record %s event: %s", kind, e)

    def next_likely(self, file: str, k: int = 5) -> list[tuple[str, float]]:
        """Files most likely to be touched after `file`, with probabilities."""
        rel = self.resolve_path(file)
        if k < 1 or k > MAX_NEXT_K:
            raise InvalidArgument(f"k must be between 1 and {MAX_NEXT_K}")
        layer = self._synapses_or_none()
        if layer is None:
            return []
        try:
            return layer.next_likely_file(rel, k)
        except Exception as e:
            log.warning("next-likely failed: %s", e)
            return []

    def feedback(self, node_id: str, positive: bool,
                 context: list[str] | None = None) -> dict[str, Any]:
        """Explicit feedback on a retrieved node: reinforce it with its context, or weaken it.

        Learning fails open, so the answer says what really happened: `recorded` is False,
        with the `reason`, when learning is off or the store skipped the write (locked,
        read-only). Unknown node ids are refused (EngineError "not_found")."""
        together = list(context or []) if positive else []
        unknown = [n for n in [node_id, *together] if n not in self.graph.nodes]
        if unknown:
            raise NotFound(f"unknown node {unknown[0]!r} (not in the index: run `neuralmind build`?)")
        out: dict[str, Any] = {"node": node_id, "positive": positive, "context": together,
                               "recorded": False, "reason": None}
        if not self.config.learning:
            out["reason"] = "learning is off for this workspace (.neuralmind.toml)"
            return out
        layer = self._synapses_or_none()
        if layer is None:
            out["reason"] = "the synapse store cannot be opened (see the log)"
            return out
        layer.feedback(node_id, positive, together)
        out["reason"] = layer.last_skipped()
        out["recorded"] = out["reason"] is None
        return out

    # --- other writers -------------------------------------------------------------------
    def reload(self) -> None:
        """Forget the cached graph and re-read the index files: another process (the
        server's background build, the CLI) wrote a newer generation. The old graph is
        emptied piece by piece (Graph.release): nothing outside the engine holds it, and
        dropping a Django-sized graph at once held the GIL ~50-150 ms."""
        old, self._graph = self._graph, None
        if old is not None:
            old.release()
        if "index" in self.__dict__:
            self.index.reload_if_changed()

    def update_files(self, paths: list[str], texts: dict[str, str] | None = None,
                     ) -> tuple[BuildReport, list[str]]:
        """The per-save path: re-extract `paths` and re-index only the nodes of files that
        changed, keyword side only (searchable by name on return). Returns the report and
        the saved nodes whose embedded text changed (`save_plan`: their vectors follow).
        `texts`: unsaved buffers extracted instead of their files (see `set_buffer`); a
        path without a text is read from disk (a save: its buffer is the file again)."""
        from neuralmind.graph.build import GraphBuilder  # with the first save (see build)
        if stored_token(self.state) not in (None, self.graph.token):
            self.swap_in()  # another process wrote a generation: graph and index together
        self.index.journal.before_commit(paths, deferred=self.index.defer_writes)
        for p in paths:
            if not texts or p not in texts:
                self._buffers.pop(p, None)
        before = {n.id for p in paths for n in self.graph.nodes_by_file(p)}
        old = self._text_changes.hashes(self.index, self.graph, before)
        report = GraphBuilder(self.root, self.config).build(changed=paths, previous=self.graph,
                                                            texts=texts)
        self._graph = report.graph
        if touched := set(report.reextracted) | set(report.removed):
            ids = sorted(before | {n.id for p in touched for n in report.graph.nodes_by_file(p)})
            self.index.update(report.graph, changed_node_ids=ids, embed=False, before=old)
            self._text_changes.note(self.index, report.graph, old, ids)
        # a buffer's changes want vectors once saved (as extracted: same bytes, no new ones)
        return report, self._text_changes.take(p for p in paths if p not in (texts or {}))

    def validate(self) -> list[str]:
        """Violations of the IR contract in the stored graph (empty when it is valid)."""
        from neuralmind.graph.validate import validate_graph  # the extractor's helpers, rarely
        return validate_graph(self.graph, self.root)

    # --- serving: the EngineService's jobs on its engine thread -----------------------------
    @classmethod
    def open_for_serving(cls, root: Path, config: WorkspaceConfig) -> Workspace:
        """A Workspace with the stored graph and search index loaded now (off the event
        loop); index writes are deferred to `flush_index`, called when saves pause."""
        ws = cls(root, config)
        _ = ws.graph
        ws.index.defer_writes = True
        ws.index.follow_writers = False     # graph and index are reloaded together
        heap.settle_after_load()
        return ws

    def warm_up(self) -> None:
        """Before the first question and save, what they would pay otherwise, in order
        (`engine/warm_up.py`; a server runs the steps as separate engine jobs)."""
        for step in warm_up_steps(self):
            step.run()

    def swap_in(self) -> None:
        """Serve the generation another process (the background build) wrote: load it now,
        with the unsaved buffers extracted again on top (the build read the files). A build
        that changed nothing wrote no graph or keyword index: what is loaded, and prepared
        for saves, stays (the Linux kernel's graph and resolution state: ~40 s)."""
        if (self._graph is not None and stored_token(self.state) == self._graph.token
                and not self.index.written_elsewhere() - {"vectors.npz"}):
            self.index.reload_if_changed()
            return
        self.reload()
        _ = self.graph      # saves wait for the build to end; warm_up then prepares them
        if self._buffers:
            self.update_files(sorted(self._buffers), texts=dict(self._buffers))
        heap.settle_after_load()

    def serve_build(self) -> None:
        """The build child wrote its graph and keyword index and embeds now: serve them, and
        from here on apply saves to them here while its vectors are merged in as they land
        (index/vector_handoff.py): only the graph phase makes saves wait."""
        self.swap_in()
        self.index.handoff.start()

    def build_ended(self, complete: bool) -> None:
        """The build child ended (`complete`: it embedded all it meant to): its last vectors
        merged, the pending list settled; the next `flush_index` writes them."""
        self.index.take_back_vectors(complete)

    @property
    def index_unsaved(self) -> bool:
        """The loaded search index has changes not written yet."""
        return "index" in self.__dict__ and self.index.unsaved

    def flush_index(self) -> None:
        """Write the search index if it changed, then let the heap settle."""
        if "index" in self.__dict__:
            self.index.flush()              # (and numbers the new keyword base)
        heap.settle_after_saves()

    @staticmethod
    def close() -> None:
        """Stop the big-file worker process (shared by the process; stops a big extraction
        under way and reaps the worker)."""
        if (worker := sys.modules.get("neuralmind.graph.big_file_worker")) is not None:
            worker.shutdown()             # (never imported: no worker ever ran)

    # --- navigation (the editor's hover, workspace symbols, decision diagnostics) ---------------
    def node_at(self, rel: str, line: int) -> Node | None:
        """The innermost symbol of `rel` spanning 1-based `line`."""
        return navigation.node_at(self.graph, rel, line)

    def hover(self, rel: str, line: int, k: int = 5) -> dict[str, Any]:
        """The innermost symbol at 1-based `line`, the decisions governing it, its strongest
        associations."""
        out = navigation.hover(self.graph, self.decisions, self._synapses_or_none(), rel, line, k)
        out["memories"] = memory_ops.hover_memories(self.memory, out.get("symbol"))
        return out

    def symbols(self, query: str, limit: int) -> list[dict[str, Any]]:
        """Workspace symbols: name matches first (exact, prefix, substring), then search hits."""
        return navigation.symbols(self.graph, self.search, query, limit)

    def file_decisions(self, rel: str, statuses: tuple[str, ...] = ("STALE", "INVALIDATED"),
                       ) -> list[dict[str, Any]]:
        """Decisions of `statuses` governing `rel`, each with the 1-based line of its first
        governed symbol in the current graph (None when unknown)."""
        return navigation.file_decisions(self.decisions, rel, statuses)

    # --- review of the pending change -----------------------------------------------------------
    def review(self, base: str | None = None, buffers: Mapping[str, str | None] | None = None,
               min_confidence: float | None = None) -> Review:
        """The files that usually change with the pending change but were not touched, and the
        ACTIVE decisions it puts at risk. The change is the working tree against `base` (HEAD,
        or the merge base with a ref) plus `buffers`: unsaved editor buffers, path -> text
        (None: unsaved, text unknown; the disk is read). EngineError outside git."""
        # the review's modules load with the first review (~5 ms), not with every command
        from neuralmind.memory.git import Git
        from neuralmind.review.changes import change_set
        from neuralmind.review.cochange import CommitHistory, SessionHistory
        from neuralmind.review.report import review

        threshold = REVIEW_MIN_CONFIDENCE if min_confidence is None else min_confidence
        if not 0.0 <= threshold <= 1.0:
            raise InvalidArgument("min_confidence must be between 0 and 1")
        unsaved = {self.resolve_path(p): text for p, text in (buffers or {}).items()}
        changes = change_set(Git(self.root), base, unsaved)
        if self._history is None or self._history[0] != changes.base:
            self._history = (changes.base, CommitHistory.from_git(self.root, changes.base))
        sources: list[Any] = [self._history[1]]
        layer = self._synapses_or_none()
        if layer is not None:
            sources.append(SessionHistory(layer))
        return review(self.root, changes, sources, self.decisions, unsaved, threshold)

    # --- shared attention: the editor's state for agents -----------------------------------------
    def report_editor_state(self, raw: Any) -> dict[str, Any]:
        """Keep the editor's report (see engine/attention.py); InvalidArgument when malformed."""
        def symbol_at(rel: str, line: int) -> dict[str, Any] | None:
            node = self.node_at(rel, line)
            if node is None:
                return None
            return {"id": node.id, "name": node.qualname or node.name, "kind": node.kind,
                    "line": node.start_line, "end_line": node.end_line}

        return self.attention.report(raw, self.resolve_path, symbol_at)

    def editor_state(self) -> dict[str, Any]:
        """The editor's last reported state and the navigation trail, newest first."""
        return self.attention.to_json()

    def forget_editor_state(self) -> None:
        """Drop what the editor reported and the trail (the user stopped sharing them)."""
        self.attention = Attention()

    # --- status --------------------------------------------------------------------------------
    def counts(self) -> dict[str, Any]:
        """Sizes and model state, without loading anything that is not loaded yet."""
        index = self.index
        return {"files": len(self.graph.files), "nodes": len(self.graph.nodes),
                "indexed_nodes": index.node_count, "embedded_nodes": index.vector_count,
                "embeddings_pending": index.pending, "model_state": index.model_state,
                "model_error": index.model_error, **coverage.semantic_counts(index)}
