"""Document notifications: learning events, unsaved buffers, per-save re-indexing, watched files.

Notifications cannot answer errors, so documents outside the workspace or with
non-file URIs are logged and ignored. didChangeWatchedFiles is registered
dynamically once the workspace is open, when the client allows it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path

from neuralmind.lsp.server import Feature

if TYPE_CHECKING:
    from neuralmind.engine.edits import TextChange

log = logging.getLogger("neuralmind.lsp")

WATCH_GLOBS = ("**/*", "**/.git/HEAD")


def _edit(change: Any) -> TextChange:
    """An LSP content change as the engine's (range or None, text): no text is touched."""
    rng = getattr(change, "range", None)
    if rng is None:
        return None, change.text
    return (rng.start.line, rng.start.character, rng.end.line, rng.end.character), change.text


class Documents(Feature):
    """didOpen/didChange/didSave/didClose and watched files: learning and re-indexing."""

    def register(self) -> None:
        server = self.server

        def rel_or_none(uri: str) -> str | None:
            try:
                return server.uri_to_rel(uri)
            except JsonRpcException as e:
                log.info("ignoring %s: %s", uri, e.message)
                return None

        @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
        async def did_open(params: types.DidOpenTextDocumentParams) -> None:
            uri = params.text_document.uri
            rel = rel_or_none(uri)
            if rel is None:
                return
            server.open_documents[uri] = rel
            await server.require_service().did_open(rel, server.session,
                                                    text=params.text_document.text)
            server.document_opened(uri)

        @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
        async def did_change(params: types.DidChangeTextDocumentParams) -> None:
            rel = server.open_documents.get(params.text_document.uri)
            if rel is not None:
                await server.require_service().did_change(
                    rel, server.session, edits=[_edit(c) for c in params.content_changes])

        @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
        async def did_save(params: types.DidSaveTextDocumentParams) -> None:
            uri = params.text_document.uri
            rel = server.open_documents.get(uri) or rel_or_none(uri)
            if rel is not None:
                await server.require_service().did_save(rel, server.session)

        @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
        async def did_close(params: types.DidCloseTextDocumentParams) -> None:
            uri = params.text_document.uri
            rel = server.open_documents.pop(uri, None)
            if rel is not None:
                await server.require_service().did_close(rel, server.session)
                server.document_closed(uri)

        @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
        async def watched(params: types.DidChangeWatchedFilesParams) -> None:
            service = server.require_service()
            paths = [p for p in (to_fs_path(c.uri) for c in params.changes) if p]
            await service.files_changed(paths)

    async def ready(self) -> None:
        """Ask the client to watch files, when it allows dynamic registration."""
        server = self.server
        server.require_service().buffers.encoding = str(
            server.workspace.position_encoding or "utf-16")
        if not server.client_supports("workspace", "did_change_watched_files",
                                      "dynamic_registration"):
            return
        watchers = [types.FileSystemWatcher(glob_pattern=g) for g in WATCH_GLOBS]
        try:
            await server.client_register_capability_async(types.RegistrationParams(registrations=[
                types.Registration(
                    id="neuralmind-watched-files",
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(
                        watchers=watchers))]))
        except Exception as e:
            log.info("client did not register file watchers: %s", e)

