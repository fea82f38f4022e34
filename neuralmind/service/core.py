"""EngineService: the async single-writer front of one Workspace.

The LSP server and the MCP server of one process share one EngineService.
Ownership rules:
- service state (what is pending, indexing progress, timestamps, the Workspace
  reference itself) is read and written on the event loop only;
- every engine call runs on one dedicated engine thread, in submission order,
  so the engine never sees two callers at once (the single writer) and the loop
  never waits on engine work;
- the full build runs in a child process (see `build_worker`), because
  tree-sitter holds the GIL while parsing; when it has written a new generation
  the engine thread picks it up.
Results are plain JSON-shaped dicts, the same shapes as the CLI's `--json`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from neuralmind import heap
from neuralmind.config import WorkspaceConfig, load_workspace_config
from neuralmind.errors import EngineError
from neuralmind.service.editing import EditDebouncer
from neuralmind.service.git_watch import HeadWatcher
from neuralmind.service.indexer import BuildOutcome, ChildBuild
from neuralmind.service.loop_monitor import LoopMonitor

if TYPE_CHECKING:
    from neuralmind.engine import Workspace

log = logging.getLogger("neuralmind.service")

T = TypeVar("T")

MAX_SCAN_COMMITS = 50          # commits scanned for one HEAD move (a long pull scans its tip)
CLOSE_TIMEOUT_SECONDS = 1.2     # shutdown must finish within the 2 s the LSP client waits
IGNORED_DIRS = (".git/", ".neuralmind/")
# The search index is written to disk once saves pause this long (not on every save:
# ~20 MB of JSON on Django); other processes see the change then.
FLUSH_IDLE_SECONDS = 2.0
# Saved files' nodes are embedded once saves pause this long: an embedding (~0.1-0.5 s
# on the engine thread) started between two quick saves made the second one wait for it.
EMBED_IDLE_SECONDS = 0.3
BATCH_END = ""       # a queued learning event that closes the session's co-activation batch


@dataclasses.dataclass
class IndexingState:
    phase: str
    done: int
    total: int

    def to_json(self) -> dict[str, Any]:
        return {"phase": self.phase, "done": self.done, "total": self.total}


class ServiceListener:
    """Notifications from the service, called on the event loop. Override what you need."""

    def indexing_started(self) -> None: ...

    def indexing_progress(self, state: IndexingState) -> None: ...

    def indexing_finished(self, outcome: BuildOutcome) -> None: ...

    def index_updated(self, paths: list[str]) -> None: ...

    def decisions_changed(self) -> None: ...


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else None


class EngineService:
    """One workspace served asynchronously; see the module docstring for the rules."""

    def __init__(self, root: Path, config: WorkspaceConfig | None = None, *,
                 log_file: str | None = None) -> None:
        self.root = Path(root).resolve()
        self.config = config or load_workspace_config(self.root)
        self.log_file = log_file
        self.mcp_endpoint: str | None = None
        self.indexing: IndexingState | None = None
        self.last_full_build: float | None = None
        self.last_incremental_update: float | None = None
        self.last_error: str | None = None
        self._ws: Workspace | None = None
        self._opened: asyncio.Future[None] | None = None
        self._engine = ThreadPoolExecutor(max_workers=1, thread_name_prefix="neuralmind-engine")
        self._listeners: list[ServiceListener] = []
        self._build: ChildBuild | None = None
        self._build_task: asyncio.Task[None] | None = None
        self._rebuild_requested = False
        self._pending: set[str] = set()
        self._drain_task: asyncio.Task[None] | None = None
        self._flush_timer: asyncio.TimerHandle | None = None
        self._embed_timer: asyncio.TimerHandle | None = None
        self._to_embed: set[str] = set()     # node ids of saved files, not embedded yet
        self._debouncers: dict[str, EditDebouncer] = {}
        self._head: HeadWatcher | None = None
        self._last_head: str | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._learning: list[tuple[str, str, str]] = []   # (session, kind, file) not applied yet
        self._learning_task: asyncio.Task[None] | None = None
        self._closed = False
        self.learning_events = 0
        self.learned_batches = 0
        self.loop_monitor = LoopMonitor() if LoopMonitor.wanted() else None

    # --- plumbing -----------------------------------------------------------------------
    def subscribe(self, listener: ServiceListener) -> None:
        self._listeners.append(listener)

    def _notify(self, method: str, *args: Any) -> None:
        for listener in list(self._listeners):
            try:
                getattr(listener, method)(*args)
            except Exception:
                log.exception("listener %s.%s failed", type(listener).__name__, method)

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn` on the engine thread (after everything submitted before it)."""
        if self._closed:
            raise EngineError("shutting_down", "the server is shutting down")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._engine, functools.partial(fn, *args, **kwargs))

    async def run_serialised(self, fn: Callable[[], T]) -> T:
        """Run a blocking job (e.g. a heavy import) on the engine thread, after the engine
        work queued before it: one GIL-hungry thread at a time keeps the loop responsive."""
        return await self._run(fn)

    def _spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    def _open_future(self) -> asyncio.Future[None]:
        if self._opened is None:
            self._opened = asyncio.get_running_loop().create_future()
        return self._opened

    async def workspace(self) -> Workspace:
        """The open Workspace, waiting for `start` to have opened it."""
        await asyncio.shield(self._open_future())
        assert self._ws is not None
        return self._ws

    # --- lifecycle ----------------------------------------------------------------------
    async def start(self, index: bool = True, watch_head: bool = True) -> None:
        """Open what is on disk at once; then (optionally) build in the background."""
        if self.loop_monitor is not None:
            self.loop_monitor.start()
        opened = self._open_future()
        try:
            self._ws = await self._run(self._open_workspace, self.root, self.config)
        except BaseException as e:
            opened.set_exception(e)
            raise
        opened.set_result(None)
        graph_built = await self._run(lambda ws: ws.graph.built_at, self._ws)
        self.last_full_build = graph_built or None
        if watch_head:
            self._head = HeadWatcher(self.root, self._on_head_move)
            self._head.start()
        self._spawn(self._run(self._warm_up, self._ws), "warm-up")
        self._spawn(self._scan_decisions(), "decision-scan")
        if index:
            self.reindex()

    @staticmethod
    def _open_workspace(root: Path, config: WorkspaceConfig) -> Workspace:
        from neuralmind.engine import Workspace

        ws = Workspace(root, config)
        _ = ws.graph        # load the stored graph now, off the loop
        ws.index.defer_writes = True    # and the stored search index; written when idle
        heap.settle_after_load()
        return ws

    @staticmethod
    def _warm_up(ws: Workspace) -> None:
        """Load the embedding model and the budget tokenizer before the first question, and
        the resolution state saves patch before the first save (~1.5 s on Django)."""
        from neuralmind.graph.build import prepare_incremental

        prepare_incremental(ws.graph)
        try:
            from neuralmind.context.tokens import count_tokens

            count_tokens("warm up")
            if ws.index.vector_count:
                ws.index.embedder()
        except Exception as e:  # a missing model degrades to keyword search, never fails start
            log.info("warm-up skipped: %s", e)
        heap.settle_after_load()

    async def close(self) -> None:
        """Stop everything within CLOSE_TIMEOUT_SECONDS: builds, watchers, pending learning."""
        if self._closed:
            return
        deadline = time.monotonic() + CLOSE_TIMEOUT_SECONDS
        last_edits = {s: deb.take_pending() for s, deb in self._debouncers.items()}
        queued, self._learning = self._learning, []
        if self._head is not None:
            await self._head.stop()
        if self.loop_monitor is not None:
            await self.loop_monitor.stop()
        if self._build is not None:
            await self._build.stop()
        for task in list(self._tasks) + [t for t in (self._build_task, self._drain_task) if t]:
            task.cancel()
        for timer in (self._flush_timer, self._embed_timer):
            if timer is not None:
                timer.cancel()
        ws = self._ws
        if ws is not None:     # what is not written in time, the next build recomputes
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._run(self._flush, ws),
                                       timeout=max(0.05, deadline - time.monotonic()))
        if ws is not None and self.config.learning:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._run(self._end_sessions, ws, queued, last_edits),
                                       timeout=max(0.05, deadline - time.monotonic()))
        self._closed = True
        self._engine.shutdown(wait=False, cancel_futures=True)
        from neuralmind.graph import big_file_worker

        big_file_worker.shutdown()     # stops a big extraction under way and reaps the worker

    @classmethod
    def _end_sessions(cls, ws: Workspace, queued: list[tuple[str, str, str]],
                      last_edits: dict[str, str | None]) -> None:
        """Apply what is still queued, send the last unsent edits and end the sessions,
        which learns their batches."""
        cls._apply_learning(ws, queued)
        for session, path in last_edits.items():
            if path is not None:
                ws.editing_event(session, "edit", path)
            ws.editing_event(session, "session_end", "")

    # --- configuration ------------------------------------------------------------------
    def update_config(self, values: dict[str, Any]) -> tuple[list[str], set[str]]:
        """Apply editor settings; returns (problems, names of settings that changed)."""
        before = dataclasses.asdict(self.config)
        problems = self.config.update(values)
        after = dataclasses.asdict(self.config)
        changed = {k for k in after if after[k] != before[k]}
        if "debounce_seconds" in changed:
            for deb in self._debouncers.values():
                deb.window = self.config.debounce_seconds
        if changed & {"exclude", "languages", "max_file_bytes"} and self._ws is not None:
            self.reindex()
        return problems, changed

    def config_values(self) -> dict[str, Any]:
        return dataclasses.asdict(self.config)

    # --- background indexing ------------------------------------------------------------
    def reindex(self) -> None:
        """Bring everything up to date in the background (unchanged files are skipped by
        hash); while a build runs, another one is queued to follow it."""
        if self._build_task is not None and not self._build_task.done():
            self._rebuild_requested = True
            return
        self._build_task = self._spawn(self._full_build(), "full-build")

    def cancel_indexing(self) -> None:
        self._rebuild_requested = False
        if self._build is not None:
            self._spawn(self._build.stop(), "cancel-build")

    async def _full_build(self) -> None:
        ws = await self.workspace()
        while True:
            self._rebuild_requested = False
            self.indexing = IndexingState("starting", 0, 0)
            self._notify("indexing_started")
            if "index" in ws.__dict__ and ws.index.unsaved:   # the child starts from it
                await self._run(self._flush, ws)
            self._build = ChildBuild(self.root, self.config_values(), log_file=self.log_file)
            try:
                outcome = await self._build.run(self._on_build_progress, self._on_graph_ready)
            finally:
                self._build = None
            if outcome.ok:
                await self._run(self._refresh, ws)
                self._spawn(self._run(self._warm_up, ws), "warm-up")
                self.last_full_build = time.time()
                self.last_error = None
            elif not outcome.cancelled:
                self.last_error = outcome.message
                log.warning("background build failed: %s", outcome.message)
            self.indexing = None
            self._notify("indexing_finished", outcome)
            if not self._rebuild_requested:
                break
        if self._pending:
            self._schedule_drain()
        self._spawn(self._scan_decisions(), "decision-scan")

    def _on_build_progress(self, phase: str, done: int, total: int) -> None:
        self.indexing = IndexingState(phase, done, total)
        self._notify("indexing_progress", self.indexing)

    async def _on_graph_ready(self, event: dict[str, Any]) -> None:
        """The child wrote the graph and keyword index: serve them while it embeds."""
        ws = await self.workspace()
        await self._run(self._refresh, ws)

    @staticmethod
    def _refresh(ws: Workspace) -> None:
        """Swap in the generation the child wrote (loads it here, on the engine thread)."""
        ws.reload()
        _ = ws.graph      # saves wait for the build to end; _warm_up then prepares them
        heap.settle_after_load()

    # --- per-save updates ---------------------------------------------------------------
    def _schedule_update(self, rels: Iterable[str]) -> None:
        self._pending.update(r for r in rels if not r.startswith(IGNORED_DIRS))
        if not self._pending or self.indexing is not None:
            return          # applied after the running build swaps in
        self._schedule_drain()

    def _schedule_drain(self) -> None:
        if self._drain_task is None or self._drain_task.done():
            self._drain_task = self._spawn(self._drain(), "incremental-update")

    async def _drain(self) -> None:
        ws = await self.workspace()
        while self._pending and self.indexing is None:
            batch = sorted(self._pending)
            self._pending.clear()
            try:
                _, changed_ids = await self._run(self._update_keyword, ws, batch)
            except EngineError as e:
                log.warning("update of %s refused: %s", ", ".join(batch), e.message)
                continue
            except Exception as e:
                if (cause := _write_problem(e)) is None:
                    log.exception("incremental update of %s failed", ", ".join(batch))
                else:
                    log.warning("update of %s not written: %s; queries use what is loaded",
                                ", ".join(batch), cause)
                continue
            self.last_incremental_update = time.time()
            self._notify("index_updated", batch)
            self._to_embed.update(changed_ids)
        self._embed_timer = self._restart_timer(self._embed_timer, EMBED_IDLE_SECONDS,
                                                self._embed_when_idle)
        self._flush_timer = self._restart_timer(self._flush_timer, FLUSH_IDLE_SECONDS,
                                                self._flush_when_idle)

    def _restart_timer(self, timer: asyncio.TimerHandle | None, delay: float,
                       fn: Callable[[], None]) -> asyncio.TimerHandle | None:
        if timer is not None:
            timer.cancel()
        return None if self._closed else asyncio.get_running_loop().call_later(delay, fn)

    def _draining(self) -> bool:
        return bool(self._pending) or (self._drain_task is not None
                                       and not self._drain_task.done())

    def _embed_when_idle(self) -> None:
        self._embed_timer = None
        if self._to_embed and not self._draining():   # else the drain restarts the timer
            self._spawn(self._embed_saved(), "embed-saved")

    async def _embed_saved(self) -> None:
        ws = await self.workspace()
        ids = sorted(self._to_embed)
        self._to_embed.clear()
        try:
            await self._run(self._update_vectors, ws, ids)
        except EngineError:
            return          # shutting down; the next build embeds them
        except Exception as e:
            if (cause := _write_problem(e)) is None:
                log.exception("embedding %d saved nodes failed", len(ids))
            else:
                log.warning("embeddings of %d saved nodes not written: %s", len(ids), cause)
        self._flush_timer = self._restart_timer(self._flush_timer, FLUSH_IDLE_SECONDS,
                                                self._flush_when_idle)

    def _flush_when_idle(self) -> None:
        self._flush_timer = None
        if not self._draining():        # else the drain restarts the timer when it ends
            self._spawn(self._flush_index(), "index-flush")

    async def _flush_index(self) -> None:
        ws = await self.workspace()
        try:
            await self._run(self._flush, ws)
        except EngineError:
            pass            # shutting down: close() flushes
        except Exception as e:
            if (cause := _write_problem(e)) is None:
                log.exception("writing the search index failed")
            else:
                log.warning("search index not written: %s", cause)

    @staticmethod
    def _flush(ws: Workspace) -> None:
        if "index" in ws.__dict__:
            ws.index.flush()
        heap.settle_after_saves()

    @staticmethod
    def _update_keyword(ws: Workspace, batch: list[str]) -> tuple[Any, list[str]]:
        """Re-extract the saved files; their symbols are searchable by name when this returns.
        Embedding (the slow part) is a later engine step, so a save is findable sooner."""
        report, ids = ws.update_files(batch)
        return report.graph, ids

    @staticmethod
    def _update_vectors(ws: Workspace, changed_ids: list[str]) -> None:
        ws.index.update(ws.graph, changed_node_ids=changed_ids, embed=True)
        heap.return_freed_memory()

    # --- documents and learning -----------------------------------------------------------
    def resolve(self, path: str) -> str:
        """A client path (absolute or repo-relative) as a repo-relative one, or EngineError."""
        if not isinstance(path, str) or not path or "\x00" in path:
            raise EngineError("invalid_path", "empty or malformed path")
        p = Path(path)
        full = Path(os.path.normpath(p if p.is_absolute() else self.root / p))
        try:
            rel = full.relative_to(self.root).as_posix()
        except ValueError:
            try:
                rel = full.resolve().relative_to(self.root).as_posix()
            except ValueError:
                raise EngineError("invalid_path",
                                  f"{path}: outside the workspace {self.root}") from None
        if rel in ("", "."):
            raise EngineError("invalid_path", f"{path}: the workspace root is not a file")
        return rel

    def _debouncer(self, session: str) -> EditDebouncer:
        deb = self._debouncers.get(session)
        if deb is None:
            deb = EditDebouncer(functools.partial(self._learn_event, session),
                                self.config.debounce_seconds,
                                functools.partial(self._batch_done, session))
            self._debouncers[session] = deb
            self._learn_event(session, "session_start", "")
        return deb

    def _learn_event(self, session: str, kind: str, rel: str) -> None:
        if not self.config.learning or self._closed:
            return
        self.learning_events += 1
        self._queue_learning(session, kind, rel)

    def _batch_done(self, session: str) -> None:
        """A window of quiet: what the session touched is learned as one batch."""
        if not self.config.learning or self._closed:
            return
        self._queue_learning(session, BATCH_END, "")

    def _queue_learning(self, session: str, kind: str, rel: str) -> None:
        """Learning events wait in one ordered list, drained by one task: a burst costs one
        hop to the engine thread, and a backlog is a list of tuples, not a pending task per
        event (~4.5 KB each: RSS +60 MB after 14,000 fast file switches)."""
        self._learning.append((session, kind, rel))
        if self._learning_task is None or self._learning_task.done():
            self._learning_task = self._spawn(self._drain_learning(), "learning")

    async def _drain_learning(self) -> None:
        ws = await self.workspace()
        while self._learning:
            events, self._learning = self._learning, []
            await self._run(self._apply_learning, ws, events)
            self.learned_batches += sum(1 for _, kind, _ in events if kind == BATCH_END)

    @classmethod
    def _apply_learning(cls, ws: Workspace, events: list[tuple[str, str, str]]) -> None:
        for session, kind, rel in events:
            if kind == BATCH_END:
                cls._flush_session(ws, session)
            else:
                ws.editing_event(session, kind, rel)

    @staticmethod
    def _flush_session(ws: Workspace, session: str) -> None:
        try:
            ws.synapses.flush(session)
        except Exception as e:  # learning fails open
            log.warning("could not learn the editing batch: %s", e)

    async def did_open(self, path: str, session: str = "editor") -> str:
        rel = self.resolve(path)
        self._debouncer(session).event("open", rel)
        return rel

    async def did_change(self, path: str, session: str = "editor") -> str:
        rel = self.resolve(path)
        self._debouncer(session).edit(rel)
        return rel

    async def did_save(self, path: str, session: str = "editor") -> str:
        rel = self.resolve(path)
        self._schedule_update([rel])      # queued first: freshness before learning
        self._debouncer(session).event("save", rel)
        return rel

    async def did_close(self, path: str, session: str = "editor") -> str:
        rel = self.resolve(path)
        deb = self._debouncers.get(session)
        if deb is not None:
            deb.flush_edit()
        return rel

    async def files_changed(self, paths: Iterable[str]) -> list[str]:
        """Files changed outside the editor (watched files, git checkout, generators)."""
        rels: list[str] = []
        head_touched = False
        for p in paths:
            try:
                rel = self.resolve(p)
            except EngineError:
                continue
            if rel.startswith(".git/"):
                head_touched = head_touched or rel in (".git/HEAD",) or rel.startswith(".git/refs/")
                continue
            rels.append(rel)
        self._schedule_update(rels)
        if head_touched and self._head is not None:
            await self._head.check()
        return rels

    # --- retrieval ----------------------------------------------------------------------
    def _partial(self, out: dict[str, Any]) -> dict[str, Any]:
        if self.indexing is not None:
            out["partial"] = True
            out["indexing"] = self.indexing.to_json()
        return out

    async def query(self, question: str, budget: int | None = None, *, session: str | None = None,
                    explain: bool = False, include_wakeup: bool = True) -> dict[str, Any]:
        ws = await self.workspace()
        result = await self._run(ws.query, question, budget, explain, include_wakeup)
        if session and self.config.learning:
            ids = [h.node.id for h in result.hits]
            self._spawn(self._run(self._record_query, ws, session, question, ids), "learn-query")
        out = result.to_json()
        out.setdefault("partial", False)
        return self._partial(out)

    @staticmethod
    def _record_query(ws: Workspace, session: str, question: str, ids: list[str]) -> None:
        try:
            ws.synapses.record_query(session, question, ids)
        except Exception as e:  # learning fails open
            log.warning("could not record the question: %s", e)

    async def wakeup(self, budget: int | None = None) -> dict[str, Any]:
        ws = await self.workspace()
        result = await self._run(ws.wakeup, budget)
        out = result.to_json()
        out.setdefault("partial", False)
        return self._partial(out)

    async def search(self, question: str, k: int = 10) -> dict[str, Any]:
        ws = await self.workspace()
        hits, mode, notice = await self._run(ws.search, question, k)
        out: dict[str, Any] = {"mode": mode, "hits": [h.to_json() for h in hits], "partial": False}
        if notice:
            out["notice"] = notice
        return self._partial(out)

    async def next_likely(self, path: str, k: int = 5) -> list[dict[str, Any]]:
        rel = self.resolve(path)
        ws = await self.workspace()
        pairs = await self._run(ws.next_likely, rel, k)
        return [{"file": f, "probability": round(float(p), 6)} for f, p in pairs]

    async def feedback(self, node_id: str, positive: bool,
                       context: list[str] | None = None) -> dict[str, Any]:
        ws = await self.workspace()
        return await self._run(ws.feedback, node_id, positive, context)

    # --- status -------------------------------------------------------------------------
    async def status(self) -> dict[str, Any]:
        ws = await self.workspace()
        counts = await self._run(self._counts, ws)
        extra: dict[str, Any] = {}
        if self.loop_monitor is not None:
            extra["event_loop"] = self.loop_monitor.to_json()
        return {
            "root": str(self.root),
            "last_full_build": _iso(self.last_full_build),
            "last_incremental_update": _iso(self.last_incremental_update),
            "files_pending": len(self._pending),
            **counts,
            "mcp_endpoint": self.mcp_endpoint,
            "indexing": self.indexing.to_json() if self.indexing else None,
            "learning": {"enabled": self.config.learning, "events": self.learning_events,
                         "batches": self.learned_batches},
            "last_error": self.last_error,
            **extra,
        }

    @staticmethod
    def _counts(ws: Workspace) -> dict[str, Any]:
        index = ws.index
        if index.model_error:
            model_state = "unavailable"
        elif index._embedder is not None:  # noqa: SLF001 - loaded or not, without loading it
            model_state = "loaded"
        else:
            model_state = "not_loaded"
        return {"files": len(ws.graph.files), "nodes": len(ws.graph.nodes),
                "indexed_nodes": index.node_count, "embedded_nodes": index.vector_count,
                "embeddings_pending": index.pending, "model_state": model_state,
                "model_error": index.model_error}

    # --- decisions ----------------------------------------------------------------------
    async def _scan_decisions(self) -> None:
        ws = await self.workspace()
        try:
            self._last_head = await self._run(self._scan, ws, self._last_head)
        except Exception as e:
            log.warning("decision scan failed: %s", e)
            return
        self._notify("decisions_changed")

    @staticmethod
    def _scan(ws: Workspace, previous: str | None) -> str | None:
        """Scan every commit HEAD moved over since `previous` (a pull brings several), oldest
        first and at most MAX_SCAN_COMMITS; returns the new HEAD (None outside git)."""
        from neuralmind.decisions.git import GitError

        git = ws.decisions.git()
        try:
            head = git.head()
            commits = [head]
            if previous and previous != head:
                listed = git.out("rev-list", "--reverse", f"--max-count={MAX_SCAN_COMMITS}",
                                 f"{previous}..{head}").split()
                commits = listed or [head]
        except GitError as e:
            log.debug("no decision scan: %s", e)
            return None
        for commit in commits:
            ws.decisions.scan(commit)
        return head

    async def _on_head_move(self) -> None:
        await self._scan_decisions()

    # --- decisions: records -------------------------------------------------------------------
    async def decisions_record(self, title: str, rationale: str, **fields: Any) -> dict[str, Any]:
        ws = await self.workspace()
        record = await self._run(_call_store, ws, "record", title, rationale, **fields)
        self._notify("decisions_changed")
        return record.to_json()

    async def decisions_query(self, question: str, mode: str | None = None,
                              status: str = "ACTIVE", limit: int = 10) -> dict[str, Any]:
        ws = await self.workspace()
        result = await self._run(_call_store, ws, "search", question, mode=mode,
                                 status=status, limit=limit)
        return result.to_json()

    async def decisions_get(self, decision_id: str) -> dict[str, Any]:
        ws = await self.workspace()
        record = await self._run(_call_store, ws, "get", decision_id)
        return record.to_json()

    async def decisions_audit(self, stale: bool = False,
                              orphaned: bool = False) -> list[dict[str, Any]]:
        ws = await self.workspace()
        report = await self._run(_call_store, ws, "audit", stale=stale, orphaned=orphaned)
        return report.to_json()

    async def decisions_restore(self, decision_id: str) -> dict[str, Any]:
        ws = await self.workspace()
        record = await self._run(_call_store, ws, "restore", decision_id)
        self._notify("decisions_changed")
        return record.to_json()

    async def decisions_invalidate(self, decision_id: str, reason: str) -> dict[str, Any]:
        ws = await self.workspace()
        record = await self._run(_call_store, ws, "invalidate", decision_id, reason)
        self._notify("decisions_changed")
        return record.to_json()

    # --- decisions: per file, for diagnostics and hover ---------------------------------------
    async def decision_diagnostics(self, path: str) -> list[dict[str, Any]]:
        """STALE and INVALIDATED decisions governing `path`, each with the 1-based line of
        its first governed symbol in the current graph (None when unknown)."""
        rel = self.resolve(path)
        ws = await self.workspace()
        return await self._run(_file_decisions, ws, rel, ("STALE", "INVALIDATED"))

    async def hover(self, path: str, line: int, k: int = 5) -> dict[str, Any]:
        """The innermost symbol at 1-based `line`, the decisions governing it, its strongest
        associations."""
        rel = self.resolve(path)
        ws = await self.workspace()
        return await self._run(_hover, ws, rel, line, k, self.config.learning)

    async def symbols(self, query: str, limit: int = 100) -> list[dict[str, Any]]:
        """Workspace symbols: name matches first (exact, prefix, substring), then search hits."""
        ws = await self.workspace()
        return await self._run(_symbols, ws, query, limit)

    # --- decisions: progressive retrieval for agents (search -> timeline -> get) ---------------
    async def memory_search(self, query: str, limit: int = 10, status: str = "ACTIVE",
                            mode: str | None = None) -> dict[str, Any]:
        ws = await self.workspace()
        return await self._run(_call_store, ws, "memory_search", query, limit=limit,
                               status=status, mode=mode)

    async def memory_timeline(self, decision_id: str | None = None, query: str | None = None,
                              before: int = 3, after: int = 3,
                              mode: str | None = None) -> dict[str, Any]:
        ws = await self.workspace()
        return await self._run(_call_store, ws, "memory_timeline", decision_id, query,
                               before=before, after=after, mode=mode)

    async def memory_get(self, ids: list[str]) -> dict[str, Any]:
        ws = await self.workspace()
        return await self._run(_call_store, ws, "memory_get", ids)


def _write_problem(e: BaseException) -> str | None:
    """A one-line cause when `e` is the disk refusing a write (read-only or full
    `.neuralmind/`, a locked database): expected in the field, so no traceback."""
    if isinstance(e, OSError):
        return f"{e.strerror or e} ({e.filename})" if e.filename else str(e)
    if isinstance(e, sqlite3.OperationalError):
        return str(e)
    return None


def _call_store(ws: Workspace, method: str, *args: Any, **kwargs: Any) -> Any:
    """`ws.decisions.<method>(...)` on the engine thread, which is also where the store is
    first opened; its errors (ValueError, not found, unopenable) as EngineErrors."""
    from neuralmind.decisions.schema import ReadOnlyStore, StoreError
    from neuralmind.decisions.search import SemanticUnavailable
    from neuralmind.decisions.store import DecisionNotFound

    try:
        return getattr(ws.decisions, method)(*args, **kwargs)
    except EngineError:
        raise
    except ReadOnlyStore as e:
        raise EngineError("read_only", str(e)) from None
    except StoreError as e:
        raise EngineError("store_unavailable", str(e)) from None
    except DecisionNotFound as e:
        raise EngineError("not_found", str(e)) from None
    except SemanticUnavailable as e:
        raise EngineError("model_unavailable", str(e)) from None
    except ValueError as e:
        raise EngineError("invalid_argument", str(e)) from None


STATUS_EVIDENCE = ("Marked STALE", "Invalidated:")


def _status_reason(evidence: list[str]) -> str:
    """The newest evidence line that explains a status change ("" when none does)."""
    for line in reversed(evidence or []):
        if line.startswith(STATUS_EVIDENCE):
            return line
    return ""


def _file_decisions(ws: Workspace, rel: str, statuses: tuple[str, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry in ws.decisions.governing(rel):
        d = entry["decision"]
        if d["status"] not in statuses:
            continue
        symbols = entry["symbols"]
        located = [s for s in symbols if s.get("start_line")]
        first = located[0] if located else (symbols[0] if symbols else None)
        out.append({"id": d["id"], "title": d["title"], "status": d["status"],
                    "reason": _status_reason(d.get("evidence", [])),
                    "symbol": first["qualname"] if first else None,
                    "line": first.get("start_line") if first else None,
                    "symbols": [s["qualname"] for s in symbols]})
    return out


def _node_at(ws: Workspace, rel: str, line: int) -> Any:
    best = None
    for n in ws.graph.nodes_by_file(rel):
        if n.kind == "file" or not n.start_line <= line <= n.end_line:
            continue
        if best is None or (n.end_line - n.start_line) < (best.end_line - best.start_line):
            best = n
    return best


def _hover(ws: Workspace, rel: str, line: int, k: int, learning: bool) -> dict[str, Any]:
    node = _node_at(ws, rel, line)
    out: dict[str, Any] = {"file": rel, "symbol": None, "decisions": [], "associations": []}
    if node is None:
        return out
    out["symbol"] = {"id": node.id, "name": node.qualname or node.name, "kind": node.kind,
                     "line": node.start_line, "end_line": node.end_line,
                     "signature": node.signature}
    qual = node.qualname
    statuses = ("ACTIVE", "STALE", "INVALIDATED")
    for d in _file_decisions(ws, rel, statuses):
        governed = d["symbols"]
        if not governed or any(qual == s or qual.startswith(s + ".") for s in governed):
            out["decisions"].append({k2: d[k2] for k2 in ("id", "title", "status", "reason")})
    if learning:
        try:
            neighbours = ws.synapses.neighbors(node.id, k) or ws.synapses.neighbors(rel, k)
        except Exception as e:  # learning fails open
            log.info("no associations for %s: %s", node.id, e)
            neighbours = []
        out["associations"] = [{"id": i, "weight": round(float(w), 4)} for i, w in neighbours]
    return out


def _symbols(ws: Workspace, query: str, limit: int) -> list[dict[str, Any]]:
    q = (query or "").strip().lower()
    graph = ws.graph
    ranked: list[tuple[int, str, Any]] = []
    for n in graph.nodes.values():
        if n.kind == "file":
            continue
        name = n.name.lower()
        if not q:
            rank = 3
        elif name == q:
            rank = 0
        elif name.startswith(q):
            rank = 1
        elif q in name or q in n.qualname.lower():
            rank = 2
        else:
            continue
        ranked.append((rank, n.id, n))
    ranked.sort(key=lambda t: (t[0], len(t[2].name), t[1]))
    seen: set[str] = set()
    out: list[dict[str, Any]] = []

    def add(n: Any, how: str) -> None:
        if n.id in seen or len(out) >= limit:
            return
        seen.add(n.id)
        out.append({"id": n.id, "name": n.qualname or n.name, "kind": n.kind, "file": n.file,
                    "line": n.start_line, "end_line": n.end_line, "match": how})

    for _, _, n in ranked[:limit]:
        add(n, "name")
    if q and len(out) < limit and len(q) >= 3:
        try:
            hits, _, _ = ws.search(query, k=min(50, limit))
        except EngineError:
            hits = []
        for h in hits:
            if h.node.kind != "file":
                add(h.node, "semantic")
    return out
