"""initialize / initialized / shutdown, and `$/progress` while indexing.

`initialize` only records the root and the settings: its answer must not wait
for the engine. `initialized` creates the EngineService, which opens the stored
index on its engine thread and starts the background build; requests that
arrive meanwhile wait for the open, then answer (with `partial` while the build
runs).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from neuralmind.config import load_workspace_config
from neuralmind.lsp.configuration import apply_settings, extract_settings
from neuralmind.lsp.server import Feature
from neuralmind.service import EngineService, IndexingState, ServiceListener

if TYPE_CHECKING:
    from neuralmind.lsp.server import NeuralMindServer
    from neuralmind.service.child_build import BuildOutcome

log = logging.getLogger("neuralmind.lsp")


def initialize_root(params: types.InitializeParams) -> Path:
    """The first workspace folder, else rootUri, else rootPath, else the current directory."""
    candidates: list[str | None] = []
    for folder in params.workspace_folders or []:
        candidates.append(to_fs_path(folder.uri))
    if params.root_uri:
        candidates.append(to_fs_path(params.root_uri))
    candidates.append(params.root_path)
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c).resolve()
    return Path.cwd().resolve()


class IndexProgress(ServiceListener):
    """Bridges the service's indexing events to one `$/progress` token per build."""

    def __init__(self, server: NeuralMindServer) -> None:
        self.server = server
        self.token: str | None = None
        self._created: asyncio.Task[bool] | None = None
        self._last: IndexingState | None = None

    @property
    def enabled(self) -> bool:
        return self.server.client_supports("window", "work_done_progress")

    # ServiceListener methods --------------------------------------------------------
    def indexing_started(self) -> None:
        if not self.enabled or self.token is not None:
            return
        self.token = f"neuralmind-index-{uuid.uuid4().hex[:8]}"
        self._created = asyncio.get_running_loop().create_task(self._create(self.token))

    async def _create(self, token: str) -> bool:
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception as e:
            log.info("client refused a progress token: %s", e)
            return False
        self.server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title="NeuralMind: indexing", cancellable=True, message="starting", percentage=0))
        if self._last is not None:
            self._send_report(token, self._last)
        return True

    def indexing_progress(self, state: IndexingState) -> None:
        self._last = state
        if self.token is not None and self._created is not None and self._created.done() \
                and self._created.result():
            self._send_report(self.token, state)

    def _send_report(self, token: str, state: IndexingState) -> None:
        pct = int(100 * state.done / state.total) if state.total else None
        message = f"{state.phase} {state.done}/{state.total}" if state.total else state.phase
        if state.semantic is not None:       # what the served index has, while embedding
            message += f" · semantic {state.semantic:.0%}"
        self.server.work_done_progress.report(
            token, types.WorkDoneProgressReport(message=message, percentage=pct, cancellable=True))

    def indexing_finished(self, outcome: BuildOutcome) -> None:
        token, created = self.token, self._created
        self.token, self._created, self._last = None, None, None
        if token is None or created is None:
            return
        if outcome.ok:
            message = f"{outcome.files} files, {outcome.nodes} symbols"
        elif outcome.cancelled:
            message = "cancelled"
        else:
            message = f"failed: {outcome.message}"

        def end(task: asyncio.Task[bool]) -> None:
            if not task.cancelled() and task.exception() is None and task.result():
                self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

        created.add_done_callback(end)

    def cancel(self, token: Any) -> bool:
        """True when `token` is ours (the client pressed cancel)."""
        return token is not None and token == self.token


async def close_server(server: NeuralMindServer) -> None:
    """Everything `shutdown`, `exit` and a bare EOF must stop; safe to call twice."""
    await server.close_features()
    if server.service is not None:
        await server.service.close()


class Lifecycle(Feature):
    """initialize, initialized (the service starts), progress, cancel, shutdown."""

    def __init__(self, server: NeuralMindServer) -> None:
        super().__init__(server)
        self.progress = IndexProgress(server)
        self._start: asyncio.Task[None] | None = None

    def register(self) -> None:
        server = self.server

        @server.feature(types.INITIALIZE)
        def on_initialize(params: types.InitializeParams) -> None:
            server.root = initialize_root(params)
            # the project's .neuralmind.toml first, the editor's settings over it: the
            # defaults alone (as before) were also handed to the build child over the toml
            # (`scale_bench.py lsp --max-embedded 1` embedded toward the default 100k)
            server.config = load_workspace_config(server.root)
            settings = extract_settings(params.initialization_options)
            server.init_problems = apply_settings(server.config, settings)
            server.initialize_features()
            log.info("workspace %s", server.root)

        @server.feature(types.INITIALIZED)
        def on_initialized(params: types.InitializedParams) -> None:
            # Synchronous on purpose: the service must exist before the next message (often
            # a didOpen) is dispatched; the slow part runs as a task.
            for problem in server.init_problems:
                server.warn_user(problem)
            assert server.root is not None
            service = EngineService(server.root, server.config, log_file=server.log_file)
            server.service = service
            service.subscribe(self.progress)
            for feature in server.features:
                service.subscribe(feature)
            self._start = asyncio.get_running_loop().create_task(self._started(service),
                                                                 name="start")

        @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
        def on_cancel(params: types.WorkDoneProgressCancelParams) -> None:
            if self.progress.cancel(params.token) and server.service is not None:
                server.service.cancel_indexing()

        @server.feature(types.SHUTDOWN)
        async def on_shutdown(params: Any) -> None:
            await close_server(server)

    async def _started(self, service: EngineService) -> None:
        try:
            await service.start()
        except Exception as e:
            log.exception("cannot open the workspace")
            self.server.warn_user(f"cannot open the workspace {self.server.root}: {e}")
            return
        await self.server.features_ready()

    async def close(self) -> None:
        if self._start is not None:
            self._start.cancel()
