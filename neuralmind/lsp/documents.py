"""Document notifications: learning events, per-save re-indexing, watched files.

Notifications cannot answer errors, so documents outside the workspace or with
non-file URIs are logged and ignored. didChangeWatchedFiles is registered
dynamically once the workspace is open, when the client allows it.
"""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path

from neuralmind.lsp.server import Feature

log = logging.getLogger("neuralmind.lsp")

WATCH_GLOBS = ("**/*", "**/.git/HEAD")


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
            await server.require_service().did_open(rel, server.session)
            server.document_opened(uri)

        @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
        async def did_change(params: types.DidChangeTextDocumentParams) -> None:
            rel = server.open_documents.get(params.text_document.uri)
            if rel is not None:
                await server.require_service().did_change(rel, server.session)

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

