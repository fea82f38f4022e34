"""EngineService: the async single-writer front of one Workspace: lifecycle and requests.

The LSP server and the MCP server of one process share one EngineService.
Ownership rules:
- service state (what is pending, indexing progress, timestamps, the Workspace
  reference itself) is read and written on the event loop only;
- every engine call runs on the one engine thread (`engine_thread`), in
  submission order, so the engine never sees two callers at once and the loop
  never waits on engine work;
- the jobs are split by what they keep fresh: `indexing` (full builds in a child
  process), `freshness` (saves -> searchable), `learning` (events -> synapses),
  `scans` (HEAD moves -> decision staleness), `worktree` (HEAD, the change set, and
  checkouts -> re-indexing what differs), `team` (the team store's sync, on a thread of
  its own).
Requests are one engine call each; results are plain JSON-shaped dicts, the same
shapes as the CLI's `--json`. Every answer carries its freshness stamp, made in the
same engine call that computed it (engine/freshness.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from neuralmind.config import (
    CLOSE_TIMEOUT_SECONDS,
    SAVES_PAUSE_SECONDS,
    WorkspaceConfig,
    load_workspace_config,
)
from neuralmind.engine import activity, coverage
from neuralmind.engine.freshness import stamp
from neuralmind.engine.paths import confine
from neuralmind.errors import EngineError
from neuralmind.events import bus, publish
from neuralmind.events.log import enable_event_log, flush_event_log
from neuralmind.service.agent_hooks import AgentHookRequests
from neuralmind.service.attention import AttentionRequests, EditorLink
from neuralmind.service.buffers import Buffers
from neuralmind.service.decision_requests import DecisionRequests
from neuralmind.service.dreaming import IdleDreams
from neuralmind.service.engine_thread import EngineThread
from neuralmind.service.events import ServiceListener
from neuralmind.service.focus import Focus
from neuralmind.service.freshness import Freshness
from neuralmind.service.indexing import BackgroundIndexing
from neuralmind.service.learning import Learning, record_query
from neuralmind.service.loop_monitor import LoopMonitor
from neuralmind.service.memory_requests import MemoryRequests
from neuralmind.service.observatory_requests import ObservatoryRequests
from neuralmind.service.observe import IndexEvents
from neuralmind.service.scans import DecisionScans
from neuralmind.service.team_sync import TeamSyncJob
from neuralmind.service.use import UseTracking
from neuralmind.service.warming import warm_up
from neuralmind.service.worktree import WorkTree

if TYPE_CHECKING:
    from neuralmind.context.pack import ContextResult
    from neuralmind.engine import Workspace
    from neuralmind.engine.edits import TextChange

log = logging.getLogger("neuralmind.service")

T = TypeVar("T")


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else None


def _open_workspace(root: Path, config: WorkspaceConfig) -> Workspace:
    # Imported here, on the engine thread: the engine and its components take ~50 ms to
    # import, which on the event loop (at `initialized`) would stall the editor.
    from neuralmind.engine import Workspace

    return Workspace.open_for_serving(root, config)


def _published_query(ws: Workspace, question: str, budget: int | None, explain: bool,
                     include_wakeup: bool, source: str) -> ContextResult:
    """A query on the engine thread, told to the event bus with what it served."""
    result = ws.query(question, budget, explain, include_wakeup)
    activity.publish_query(ws.graph, question, result, source)
    return result


class EngineService(DecisionRequests, MemoryRequests, AttentionRequests, AgentHookRequests,
                    ObservatoryRequests):
    """One workspace served asynchronously; see the module docstring for the rules."""

    def __init__(self, root: Path, config: WorkspaceConfig | None = None, *,
                 log_file: str | None = None) -> None:
        self.root = Path(root).resolve()
        self.config = config or load_workspace_config(self.root)
        self.log_file = log_file
        self.mcp_endpoint: str | None = None
        self._ws: Workspace | None = None
        self._opened: asyncio.Future[None] | None = None
        self._listeners: list[ServiceListener] = []
        self.agent_turns: dict[str, dict[str, None]] = {}   # agent session -> files its turn edited
        self._thread = EngineThread()
        self.indexing = BackgroundIndexing(self.root, self._thread, self.workspace,
                                           self.config_values, log_file, self._notify,
                                           self._after_build, lambda: self.freshness.resume(),
                                           lambda: self.freshness.write_when_quiet())
        self.freshness = Freshness(self._thread, self.workspace,
                                   lambda: self.indexing.graph_phase, self._index_updated)
        self.learning = Learning(self._thread, self.workspace, self.config)
        self.scans = DecisionScans(self._thread, self.workspace,
                                   lambda: self._notify("decisions_changed"))
        self.buffers = Buffers(self._thread, self.workspace, self._index_updated)
        self.use = UseTracking(self.root, self._thread, self.workspace,
                               lambda: self.freshness.saves_paused(SAVES_PAUSE_SECONDS))
        self.worktree = WorkTree(self.root, self._thread, self.workspace, self.freshness.schedule,
                                 self.indexing.request, self._head_moved)
        self.focus = Focus(self.indexing.attend)
        self._near_wanted: list[str] = []     # first edits whose near files are not found yet
        self.dreams = IdleDreams(self._thread, self.workspace, self.config)
        self.team = TeamSyncJob(self._thread, self.workspace,
                                lambda n: self._notify("decisions_changed"))
        self.loop_monitor = LoopMonitor() if LoopMonitor.wanted() else None
        self._active_file: dict[str, str] = {}       # session -> the file it works in
        enable_event_log(self.root)        # this process's events reach the others' pages
        self.subscribe(IndexEvents())
        self.editor_link: EditorLink | None = None     # the editor's server, when one is attached
        self.unsaved: dict[str, str | None] = {}        # buffers with unsaved changes -> text

    # --- plumbing -----------------------------------------------------------------------
    def subscribe(self, listener: ServiceListener) -> None:
        self._listeners.append(listener)

    def _notify(self, method: str, *args: Any) -> None:
        for listener in list(self._listeners):
            try:
                getattr(listener, method)(*args)
            except Exception:
                log.exception("listener %s.%s failed", type(listener).__name__, method)

    async def run_serialised(self, fn: Callable[[], T]) -> T:
        """Run a blocking job (e.g. a heavy import) on the engine thread, after the engine
        work queued before it: one GIL-hungry thread at a time keeps the loop responsive."""
        return await self._thread.run(fn)

    async def _call(self, fn: Callable[[Workspace], T], *, read: bool = False) -> T:
        """`fn(workspace)` on the engine thread, once the workspace is open (`read`: it changes
        no engine state, so it is served while a warm-up step runs aside, EngineThread.read)."""
        self.dreams.touch()
        ws = await self.workspace()
        return await (self._thread.read if read else self._thread.run)(fn, ws)

    def _open_future(self) -> asyncio.Future[None]:
        if self._opened is None:
            self._opened = asyncio.get_running_loop().create_future()
        return self._opened

    async def workspace(self) -> Workspace:
        """The open Workspace, waiting for `start` to have opened it."""
        await asyncio.shield(self._open_future())
        assert self._ws is not None
        return self._ws

    def resolve(self, path: str) -> str:
        """A client path (absolute or repo-relative) as a repo-relative one, or EngineError
        (the engine's one rule, `Workspace.resolve_path`; applied here before it is open)."""
        return confine(self.root, path)

    # --- lifecycle ----------------------------------------------------------------------
    async def start(self, index: bool = True, watch_head: bool = True) -> None:
        """Open what is on disk at once; then (optionally) build in the background."""
        if self.loop_monitor is not None:
            self.loop_monitor.start()
        opened = self._open_future()
        try:
            self._ws = await self._thread.run(_open_workspace, self.root, self.config)
        except BaseException as e:
            opened.set_exception(e)
            raise
        opened.set_result(None)
        ws = self._ws
        graph_built = await self._thread.run(lambda: ws.graph.built_at)
        self.indexing.last_full_build = graph_built or None
        await self.worktree.start(watch_head)
        self.use.start()
        self._thread.spawn(warm_up(self._thread, ws), "warm-up")
        self.scans.spawn()
        self.dreams.start()
        self._thread.spawn(self.team.start(), "team-sync")
        if index:
            self.reindex()

    async def close(self) -> None:
        """Stop everything within CLOSE_TIMEOUT_SECONDS: builds, watchers, pending learning."""
        if self._thread.closed:
            return
        deadline = time.monotonic() + CLOSE_TIMEOUT_SECONDS
        queued, last_edits = self.learning.take_unsent()
        await self.worktree.stop()
        self.dreams.stop()
        if self.loop_monitor is not None:
            await self.loop_monitor.stop()
        await self.indexing.stop()
        self.freshness.stop()
        self.buffers.stop()
        with contextlib.suppress(Exception):     # the answers waiting for an idle engine
            await asyncio.wait_for(self.use.flush(),
                                   timeout=max(0.05, deadline - time.monotonic()))
        self.use.stop()
        with contextlib.suppress(Exception):
            await self.team.stop(max(0.05, deadline - time.monotonic()))
        ws = self._ws
        if ws is not None:     # what is not written in time, the next build recomputes
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._thread.run(ws.flush_index),
                                       timeout=max(0.05, deadline - time.monotonic()))
        if ws is not None and self.config.learning:
            with contextlib.suppress(Exception):
                await self.learning.end_sessions(ws, queued, last_edits,
                                                 max(0.05, deadline - time.monotonic()))
        self._thread.shutdown()
        if ws is not None:
            ws.close()
        flush_event_log()       # servers leave with os._exit: no exit handler writes it

    # --- configuration ------------------------------------------------------------------
    def update_config(self, values: dict[str, Any]) -> tuple[list[str], set[str]]:
        """Apply editor settings; returns (problems, names of settings that changed)."""
        before = dataclasses.asdict(self.config)
        problems = self.config.update(values)
        after = dataclasses.asdict(self.config)
        changed = {k for k in after if after[k] != before[k]}
        if "debounce_seconds" in changed:
            self.learning.set_window(self.config.debounce_seconds)
        if "editor_state" in changed and not self.config.editor_state and self._ws is not None:
            ws = self._ws
            self._thread.spawn(self._thread.run(ws.forget_editor_state), "forget-editor-state")
        if changed & {"exclude", "languages", "max_file_bytes"} and self._ws is not None:
            self.reindex()
        return problems, changed

    def config_values(self) -> dict[str, Any]:
        return dataclasses.asdict(self.config)

    # --- background indexing ------------------------------------------------------------
    def reindex(self) -> None:
        """Bring everything up to date in the background (see BackgroundIndexing.request)."""
        self.indexing.request()

    def cancel_indexing(self) -> None:
        self.indexing.cancel()

    def _after_build(self) -> None:
        if self.indexing.last_ok:
            self.worktree.all_indexed()
        self.freshness.resume()
        self.scans.spawn()

    async def _head_moved(self, old: str | None, new: str | None) -> None:
        await self.use.head_moved(old, new)
        await self.scans.scan()

    def _index_updated(self, paths: list[str]) -> None:
        self.worktree.indexed(paths)
        self._notify("index_updated", paths)

    # --- documents ----------------------------------------------------------------------
    async def did_open(self, path: str, session: str = "editor", text: str | None = None) -> str:
        """`text`: the editor's buffer (it may hold changes the file does not)."""
        rel = self.resolve(path)
        if text is not None:
            self.buffers.opened(rel, text)
        self.use.used("open", rel)
        self.dreams.touch()
        self._activate(session, rel)
        self.learning.debouncer(session).event("open", rel)
        self.focus.opened(rel)
        return rel

    async def did_change(self, path: str, session: str = "editor",
                         edits: list[TextChange] | None = None) -> str:
        """`edits`: the buffer's changes, applied and extracted once typing pauses."""
        rel = self.resolve(path)
        if edits:
            self.buffers.changed(rel, edits)
        self.use.used("edit", rel)
        self.dreams.touch()
        self._activate(session, rel)
        self.learning.debouncer(session).edit(rel)
        self.buffer_changed(rel)
        self._focus_edit(rel)
        return rel

    def _activate(self, session: str, rel: str) -> None:
        """The session now works in `rel`: an `editor` event when that changed."""
        if self._active_file.get(session) != rel:
            self._active_file[session] = rel
            if bus.active:
                publish("editor", session=session, file=rel)

    async def did_save(self, path: str, session: str = "editor") -> str:
        rel = self.resolve(path)
        self.dreams.touch()
        self.freshness.schedule([rel])      # queued first: freshness before learning
        self.buffers.saved(rel)
        self.use.used("edit", rel)
        self.worktree.touched()
        self.learning.debouncer(session).event("save", rel)
        self.buffer_clean(rel)
        self._focus_edit(rel)
        return rel

    async def did_close(self, path: str, session: str = "editor") -> str:
        rel = self.resolve(path)
        self.buffers.closed(rel)
        self.learning.flush_edit(session)
        self.buffer_clean(rel)
        self.focus.closed(rel)
        return rel

    def _focus_edit(self, rel: str) -> None:
        """The first edit of a file brings it to the build's front at once, and the files near
        it once saves pause, found with those of the files first edited meanwhile (a pass over
        the graph's edges for all: not in front of a save's answers, nor one per file)."""
        if self.focus.is_edited(rel) or self._ws is None:
            return
        self.focus.edited(rel)
        self._near_wanted.append(rel)
        if len(self._near_wanted) == 1:      # else the task waiting takes it too
            self._thread.spawn(self._find_near(self._ws), "attention")

    async def _find_near(self, ws: Workspace) -> None:
        await self.freshness.saves_paused(SAVES_PAUSE_SECONDS)
        rels, self._near_wanted = self._near_wanted, []
        try:
            near = await self._thread.run(lambda: coverage.files_near(ws.graph, rels))
        except EngineError:
            return          # shutting down
        for rel in rels:
            self.focus.edited(rel, near[rel])

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
        self.freshness.schedule(rels)
        for rel in rels:
            self.use.used("edit", rel)
        if rels:
            self.worktree.touched()
        if head_touched:
            await self.worktree.check_head()
        return rels

    # --- retrieval ----------------------------------------------------------------------
    def _partial(self, out: dict[str, Any]) -> dict[str, Any]:
        out.setdefault("partial", False)
        if self.indexing.state is not None:
            out["partial"] = True
            out["indexing"] = self.indexing.state.to_json()
        elif self.worktree.checkout_pending:
            out["partial"] = True
        return out

    def _stamp_args(self) -> dict[str, Any]:
        """The stamp's view of the work tree, as last read (on the loop, before the call)."""
        not_indexed = self.buffers.not_indexed
        pending = self.freshness.pending | self.worktree.checkout_pending | not_indexed
        return {"head": self.worktree.head, "dirty": self.worktree.dirty,
                "unsaved": sorted(self.buffers.unsaved), "pending": sorted(pending),
                "not_indexed": sorted(not_indexed)}

    async def _answer(self, compute: Callable[[Workspace], dict[str, Any]]) -> dict[str, Any]:
        """`compute(workspace)` and its stamp in one engine call: one generation."""
        self.use.asked()
        ws = await self.workspace()
        view = self._stamp_args()
        # a read: served while the warm-up prepares for saves aside (engine_thread.py)
        out = await self._thread.read(lambda: ws.stamp_answer(compute(ws), **view))
        return self._partial(out)

    async def query(self, question: str, budget: int | None = None, *, session: str | None = None,
                    explain: bool = False, include_wakeup: bool = True,
                    source: str | None = None) -> dict[str, Any]:
        """`session` learns from the question; `source` (default: the session) names the
        asker in the `query` event."""
        ids: list[str] = []
        files: list[str] = []
        asker = source or session or "service"
        self.dreams.touch()

        def compute(ws: Workspace) -> dict[str, Any]:
            result = _published_query(ws, question, budget, explain, include_wakeup, asker)
            ids.extend(h.node.id for h in result.hits)
            files.extend(f.file for f in result.files)
            return result.to_json()

        out = await self._answer(compute)
        self.focus.asked(files)
        self.use.answered("context", session, question, out)
        if session and self.config.learning:
            ws = await self.workspace()
            self._thread.spawn(self._thread.run(record_query, ws, session, question, ids),
                               "learn-query")
        return out

    async def wakeup(self, budget: int | None = None) -> dict[str, Any]:
        return await self._answer(lambda ws: ws.wakeup(budget).to_json())

    async def search(self, question: str, k: int = 10) -> dict[str, Any]:
        files: list[str] = []

        def compute(ws: Workspace) -> dict[str, Any]:
            hits, mode, notice = ws.search(question, k)
            files.extend(h.node.file for h in hits)
            out: dict[str, Any] = {"mode": mode, "hits": [h.to_json() for h in hits]}
            if notice:
                out["notice"] = notice
            return out

        out = await self._answer(compute)
        self.focus.asked(files)
        self.use.answered("search", None, question, out)
        return out

    async def next_likely(self, path: str, k: int = 5) -> list[dict[str, Any]]:
        rel = self.resolve(path)
        pairs = await self._call(lambda ws: ws.next_likely(rel, k))
        return [{"file": f, "probability": round(float(p), 6)} for f, p in pairs]

    async def feedback(self, node_id: str, positive: bool,
                       context: list[str] | None = None) -> dict[str, Any]:
        return await self._call(lambda ws: ws.feedback(node_id, positive, context))

    async def hover(self, path: str, line: int, k: int = 5) -> dict[str, Any]:
        """The innermost symbol at 1-based `line`, the decisions governing it, its strongest
        associations."""
        rel = self.resolve(path)
        return await self._call(lambda ws: ws.hover(rel, line, k))

    async def symbols(self, query: str, limit: int = 100) -> list[dict[str, Any]]:
        """Workspace symbols: name matches first (exact, prefix, substring), then search hits."""
        return await self._call(lambda ws: ws.symbols(query, limit))

    async def savings(self, count: bool = True) -> dict[str, Any]:
        """The savings report (`count`: count the codebase's tokens first if they are not:
        seconds on a large workspace, once); the status shows its latest summary. The one
        savings report: the CLI, the status and the observatory's Savings page read it."""
        await self.use.flush()
        report = await self._call(lambda ws: ws.savings(count))
        self.use.keep(report)
        return report

    # --- status -------------------------------------------------------------------------
    async def status(self) -> dict[str, Any]:
        focus = self.focus.files()
        counts, semantic, generation = await self._call(lambda ws: (
            ws.counts(), coverage.semantic_files(ws.graph, ws.index, focus), ws.graph.generation),
            read=True)
        counts["attention"] = {"files": len(focus), "semantic": semantic}
        extra: dict[str, Any] = {}
        if self.loop_monitor is not None:
            extra["event_loop"] = self.loop_monitor.to_json()
        state = self.indexing.state
        view = self._stamp_args()
        return {
            "root": str(self.root),
            "freshness": stamp(generation, view["head"], view["dirty"], view["unsaved"],
                               view["pending"]),
            "last_full_build": _iso(self.indexing.last_full_build),
            "last_incremental_update": _iso(self.freshness.last_update),
            "files_pending": len(self.freshness.pending),
            **counts,
            "mcp_endpoint": self.mcp_endpoint,
            "indexing": state.to_json() if state else None,
            "warming_up": self._thread.warming_up > 0,     # a save waits for it (warming.py)
            "learning": {"enabled": self.config.learning, "events": self.learning.events,
                         "batches": self.learning.batches},
            "savings": self.use.summary,
            "last_error": self.indexing.last_error,
            "team": self.team.status(),
            **extra,
        }


