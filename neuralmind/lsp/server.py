"""The pygls server object, and `Feature`, the base of every LSP feature group.

A feature group is a small class (esbonio's pattern): `register()` declares its
handlers (closures over the server, so pygls's first-argument injection rules never
matter), and it overrides the lifecycle hooks it needs (`initialize`, `ready`,
`document_opened`/`document_closed`, `close`) and the service notifications (it is
a ServiceListener). `setup.create_server` lists the groups. The server holds the
EngineService (created at `initialized`, not before: the answer to `initialize`
must not wait for the engine) and the LSP-side state: the editor session, open
documents, client capabilities of interest.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)
from pygls.protocol.language_server import lsp_method
from pygls.uris import from_fs_path, to_fs_path

from neuralmind import __version__
from neuralmind.config import WorkspaceConfig
from neuralmind.errors import EngineError
from neuralmind.events import bus, publish
from neuralmind.service import EngineService, ServiceListener

if TYPE_CHECKING:
    from neuralmind.service.endpoint import EndpointLoader

log = logging.getLogger("neuralmind.lsp")

F = TypeVar("F", bound="Feature")


def plain_params_converter() -> Any:
    """pygls's converter, except that untyped params stay plain dicts/lists.

    pygls turns the params of methods it has no type for (all of `neuralmind/*`) into
    namedtuples, renaming keys that are not identifiers; custom requests want JSON.
    """
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, lambda obj, c: c(**obj))
    return converter


class NeuralMindProtocol(LanguageServerProtocol):
    """pygls 2.1.1 files every notification handler's future in `_request_futures` under
    a fresh id and never removes it: one finished Task (~3 KB) per didChange, a leak of
    ~3 MB per 1,000 edits (benchmarks/stress/soak.py). didOpen/didChange/didSave run our
    handler as a second future under the same id (pygls' builtin generator handler), so
    every future registered here is dropped once it is done, if it is still the one filed
    (tests/lsp/test_lsp_notification_leak.py counts them)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._started: dict[Any, tuple[str, float]] = {}   # request id -> (method, start)

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        """Requests are timed for the Debug trace (`request` events) while anyone listens."""
        if bus.active:
            self._started[msg_id] = (method_name, time.perf_counter())
        super()._handle_request(msg_id, method_name, params)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        super()._send_response(msg_id, result, error)
        started = self._started.pop(msg_id, None)
        if started is not None:
            publish("request", channel="lsp", method=started[0],
                    ms=round((time.perf_counter() - started[1]) * 1000, 2), ok=error is None)

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any,
                         args: Any = None, kwargs: Any = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(lambda done, key=msg_id: self._forget(key, done))

    def _forget(self, key: Any, future: Any) -> None:
        if self._request_futures.get(key) is future:
            self._request_futures.pop(key, None)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        """An edit is a learning signal only: nothing reads a document's text after it was
        opened (diagnostic ranges use the text as opened, saves re-read the file), so the
        change is not applied. pygls re-splits the whole document for every change, on the
        event loop: ~30 ms per keystroke in a 370 KB file."""
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None


class Feature(ServiceListener):
    """One LSP feature group. Override what you need; every hook is a no-op here."""

    def __init__(self, server: NeuralMindServer) -> None:
        self.server = server

    def register(self) -> None:
        """Declare the handlers (`@self.server.feature(...)`, `@self.server.command(...)`)."""

    def initialize(self) -> None:
        """`initialize` was answered: the client's capabilities are known."""

    async def ready(self) -> None:
        """The workspace is open (the service started)."""

    def document_opened(self, uri: str) -> None: ...

    def document_closed(self, uri: str) -> None: ...

    async def close(self) -> None:
        """The server stops (shutdown, exit or EOF); called newest feature first."""


class NeuralMindServer(LanguageServer):
    """LSP adapter over one EngineService."""

    def __init__(self, log_file: str | None = None,
                 agent_endpoint: EndpointLoader | None = None) -> None:
        super().__init__("neuralmind", __version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=NeuralMindProtocol,
                         converter_factory=plain_params_converter)
        self.log_file = log_file
        self.agent_endpoint = agent_endpoint    # serves MCP beside the LSP (set by the entry)
        self.root: Path | None = None
        self.config = WorkspaceConfig()
        self.service: EngineService | None = None
        self.session = f"lsp-{os.getpid()}"
        self.open_documents: dict[str, str] = {}     # uri -> repo-relative path
        self.features: list[Feature] = []
        self.init_problems: list[str] = []           # settings warnings, shown at initialized

    # --- features -----------------------------------------------------------------------
    def add_feature(self, feature: Feature) -> None:
        self.features.append(feature)
        feature.register()

    def get_feature(self, cls: type[F]) -> F:
        """The registered feature group of class `cls`."""
        for f in self.features:
            if isinstance(f, cls):
                return f
        raise LookupError(f"no {cls.__name__} feature")

    def initialize_features(self) -> None:
        for f in self.features:
            f.initialize()

    async def features_ready(self) -> None:
        for f in self.features:
            try:
                await f.ready()
            except Exception:
                log.exception("start-up of %s failed", type(f).__name__)

    def document_opened(self, uri: str) -> None:
        for f in self.features:
            f.document_opened(uri)

    def document_closed(self, uri: str) -> None:
        for f in self.features:
            f.document_closed(uri)

    async def close_features(self) -> None:
        for f in reversed(self.features):
            with contextlib.suppress(Exception):
                result = f.close()
                if inspect.isawaitable(result):
                    await result

    # --- paths --------------------------------------------------------------------------
    def uri_to_rel(self, uri: Any) -> str:
        """A client URI as a repo-relative path; InvalidParams for anything else."""
        if not isinstance(uri, str) or not uri:
            raise JsonRpcInvalidParams(message="a document uri is required")
        path = to_fs_path(uri) if "://" in uri or uri.startswith("file:") else None
        if path is None:
            raise JsonRpcInvalidParams(message=f"not a file uri: {uri}")
        service = self.require_service()
        try:
            return service.resolve(path)
        except EngineError as e:
            raise JsonRpcInvalidParams(message=e.message) from None

    def rel_to_uri(self, rel: str) -> str:
        assert self.root is not None
        return from_fs_path(str(self.root / rel)) or f"file://{self.root / rel}"

    def require_service(self) -> EngineService:
        if self.service is None:
            raise JsonRpcException(code=-32002, message="the server is not initialized yet")
        return self.service

    async def ready_service(self) -> EngineService:
        """The service once its workspace is open (requests wait for it, they never fail)."""
        service = self.require_service()
        await service.workspace()
        return service

    # --- client capabilities ------------------------------------------------------------
    def client_supports(self, *path: str) -> bool:
        """True when the client capability at `path` is present and truthy."""
        node: Any = getattr(self.protocol, "client_capabilities", None)
        for name in path:
            if node is None:
                return False
            node = getattr(node, name, None)
        return bool(node)

    def warn_user(self, message: str) -> None:
        log.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                         message=f"NeuralMind: {message}"))


# What the server sends besides answers: their converter code is prepared with the rest
SENT_METHODS = (types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, types.WORKSPACE_DIAGNOSTIC_REFRESH,
                types.WINDOW_SHOW_MESSAGE, types.WINDOW_SHOW_DOCUMENT, types.CLIENT_REGISTER_CAPABILITY,
                types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.PROGRESS, types.EXIT)


def prepare_converter(server: NeuralMindServer) -> None:
    """Build the (un)structuring code of every message the server handles or sends now,
    before it serves. cattrs compiles a type's code the first time it meets the type, on
    the event loop: the session's first didOpen/didChange stalled it 22 ms on whole Django.
    ~80 ms here (plus what `initialize` would have cost anyway)."""
    converter = server.protocol._converter
    for method in (*server.protocol.fm.features, *SENT_METHODS):
        for typ in types.METHOD_TO_TYPES.get(method, ()):
            if typ is None:
                continue
            with contextlib.suppress(Exception):   # a type cattrs cannot handle is unused
                converter.get_structure_hook(typ)
                converter.get_unstructure_hook(typ)
