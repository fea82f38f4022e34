"""NeuralMind's diagnostics of open files: stale and invalidated decisions and the memory
inbox here, with their code actions and commands, and what other features add (`add_source`,
`add_actions`: the review's missed files and decisions at risk).

One diagnostic per STALE or INVALIDATED decision governing an open file, on
the governed symbol's first line when the graph knows it, else on line 1; one
Information diagnostic per proposed memory about the file or one of its symbols, with
accept / reject actions (the `neuralmind.memory.accept` / `.reject` commands).
Clients that support pull diagnostics pull them (and are asked to refresh when
HEAD moves); the others get publishDiagnostics. A diagnostic another feature adds
carries `data.kind`; its code actions come from that feature.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from neuralmind.lsp.params import translate_errors
from neuralmind.lsp.server import Feature

if TYPE_CHECKING:
    from neuralmind.lsp.server import NeuralMindServer
    from neuralmind.service.child_build import BuildOutcome

log = logging.getLogger("neuralmind.lsp")

SOURCE = "neuralmind"
CMD_RESTORE = "neuralmind.decision.restore"
CMD_INVALIDATE = "neuralmind.decision.invalidate"
CMD_SHOW = "neuralmind.decision.show"
CMD_ACCEPT = "neuralmind.memory.accept"
CMD_REJECT = "neuralmind.memory.reject"
INBOX = "inbox"
SEVERITY = {"STALE": types.DiagnosticSeverity.Warning,
            "INVALIDATED": types.DiagnosticSeverity.Information}

Source = Callable[[str, str], Awaitable[list[types.Diagnostic]]]     # (uri, rel) -> diagnostics
Actions = Callable[[types.Diagnostic], list[types.CodeAction]]


def line_range(server: NeuralMindServer, uri: str, line: int) -> types.Range:
    """The whole of 1-based `line`: to its end in the text as opened, else to the start of the
    next line. The server keeps the text as opened (edits are not applied), so a line past it
    is a line the user added (a review's first changed line): it stays where it is, and the
    client clamps a line past its own end."""
    idx = max(0, line - 1)
    try:
        lines = server.workspace.get_text_document(uri).lines
    except Exception:
        lines = []
    if idx < len(lines):
        end = types.Position(line=idx, character=len(lines[idx].rstrip("\r\n")))
    else:
        end = types.Position(line=idx + 1, character=0)
    return types.Range(start=types.Position(line=idx, character=0), end=end)


def to_diagnostic(server: NeuralMindServer, uri: str, d: dict[str, Any]) -> types.Diagnostic:
    status = d["status"]
    reason = d.get("reason") or ""
    message = f"Decision {status.lower()}: {d['title']}"
    if d.get("symbol"):
        message += f" (governs {d['symbol']})"
    if reason:
        message += f" — {reason}"
    return types.Diagnostic(
        range=line_range(server, uri, int(d.get("line") or 1)),
        message=message,
        severity=SEVERITY.get(status, types.DiagnosticSeverity.Information),
        source=SOURCE,
        code=d["id"],
        data={"decision": d["id"], "status": status},
    )


def inbox_diagnostic(server: NeuralMindServer, uri: str, m: dict[str, Any]) -> types.Diagnostic:
    return types.Diagnostic(
        range=line_range(server, uri, int(m.get("line") or 1)),
        message=f"Proposed memory ({m['type']}): {m['label']} — accept or reject it",
        severity=types.DiagnosticSeverity.Information, source=SOURCE, code=m["id"],
        data={"memory": m["id"], "kind": INBOX})


class DecisionDiagnostics(Feature):
    """Keeps the diagnostics of open documents in line with the decision store; code
    actions and commands restore, invalidate or show the decision."""

    def __init__(self, server: NeuralMindServer) -> None:
        super().__init__(server)
        self._pending: asyncio.Task[None] | None = None
        self._sources: list[Source] = []
        self.actions: dict[str, Actions] = {INBOX: _inbox_actions}   # data.kind -> its actions

    def add_source(self, source: Source) -> None:
        """Another feature's diagnostics, shown with these (refresh with `schedule_refresh`)."""
        self._sources.append(source)

    def add_actions(self, kind: str, actions: Actions) -> None:
        """Code actions for the diagnostics whose `data.kind` is `kind`."""
        self.actions[kind] = actions

    @property
    def pull(self) -> bool:
        """Pull only when the client can also be told to re-pull after a commit; otherwise
        push, and do not advertise pull at all (a client doing both would show each twice)."""
        return (self.server.client_supports("text_document", "diagnostic")
                and self.server.client_supports("workspace", "diagnostics", "refresh_support"))

    async def for_uri(self, uri: str) -> list[types.Diagnostic]:
        rel = self.server.open_documents.get(uri)
        if rel is None:
            rel = self.server.uri_to_rel(uri)
        service = await self.server.ready_service()
        found = await service.decision_diagnostics(rel)
        inbox = await service.inbox_diagnostics(rel)
        out = ([to_diagnostic(self.server, uri, d) for d in found]
               + [inbox_diagnostic(self.server, uri, m) for m in inbox])
        for source in self._sources:
            try:
                out += await source(uri, rel)
            except Exception as e:
                log.info("no %s diagnostics for %s: %s", getattr(source, "__name__", "other"),
                         uri, e)
        return out

    async def publish(self, uri: str) -> None:
        try:
            diagnostics = await self.for_uri(uri)
        except Exception as e:
            log.info("no decision diagnostics for %s: %s", uri, e)
            return
        if uri in self.server.open_documents:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    async def refresh_all(self) -> None:
        if self.pull:
            try:
                await self.server.workspace_diagnostic_refresh_async(None)
            except Exception as e:
                log.info("diagnostic refresh refused: %s", e)
            return
        for uri in list(self.server.open_documents):
            await self.publish(uri)

    def schedule_refresh(self) -> None:
        if self._pending is None or self._pending.done():
            self._pending = asyncio.get_running_loop().create_task(self.refresh_all())

    # document hooks ----------------------------------------------------------------------
    def document_opened(self, uri: str) -> None:
        if not self.pull:
            asyncio.get_running_loop().create_task(self.publish(uri))

    def document_closed(self, uri: str) -> None:
        if not self.pull:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # ServiceListener ---------------------------------------------------------------------
    def decisions_changed(self) -> None:
        self.schedule_refresh()

    def indexing_finished(self, outcome: BuildOutcome) -> None:
        self.schedule_refresh()   # symbol ranges may have moved

    def index_updated(self, paths: list[str]) -> None:
        if any(rel in paths for rel in self.server.open_documents.values()):
            self.schedule_refresh()

    def register(self) -> None:
        _register(self.server, self)

    def initialize(self) -> None:
        """Offer pull diagnostics only to a client that can also be told to re-pull."""
        if not self.pull:
            return

        @translate_errors
        async def pull(params: types.DocumentDiagnosticParams
                       ) -> types.FullDocumentDiagnosticReport:
            items = await self.for_uri(params.text_document.uri)
            return types.FullDocumentDiagnosticReport(items=items)

        self.server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
            identifier=SOURCE, inter_file_dependencies=False, workspace_diagnostics=False))(pull)


def _decision_id(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise JsonRpcInvalidParams(message="the first argument must be a decision id")
    return value.strip()


def _register(server: NeuralMindServer, diags: DecisionDiagnostics) -> None:
    """Code actions on our diagnostics and the decision commands they run."""

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_actions(params: types.CodeActionParams) -> list[types.CodeAction]:
        actions: list[types.CodeAction] = []
        for diag in params.context.diagnostics:
            if diag.source != SOURCE:
                continue
            kind = diag.data.get("kind") if isinstance(diag.data, dict) else None
            if kind is not None:
                if kind in diags.actions:
                    actions += diags.actions[kind](diag)
                continue
            if not isinstance(diag.code, str):
                continue
            did = diag.code
            title = diag.message.split(": ", 1)[-1].split(" — ", 1)[0]
            status = (diag.data or {}).get("status") if isinstance(diag.data, dict) else None
            reason = f"invalidated from the editor after it went {(status or 'stale').lower()}"
            for label, command, args in (
                (f"Restore decision: {title}", CMD_RESTORE, [did]),
                (f"Invalidate decision: {title}", CMD_INVALIDATE, [did, reason]),
                (f"Show decision: {title}", CMD_SHOW, [did]),
            ):
                actions.append(types.CodeAction(
                    title=label, kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                    command=types.Command(title=label, command=command, arguments=args)))
        return actions

    @server.command(CMD_RESTORE)
    @translate_errors
    async def restore(*args: Any) -> dict[str, Any]:
        if len(args) != 1:
            raise JsonRpcInvalidParams(message=f"{CMD_RESTORE} takes [decision id]")
        service = await server.ready_service()
        record = await service.decisions_restore(_decision_id(args[0]))
        await diags.refresh_all()
        return record

    @server.command(CMD_INVALIDATE)
    @translate_errors
    async def invalidate(*args: Any) -> dict[str, Any]:
        if len(args) != 2 or not isinstance(args[1], str) or not args[1].strip():
            raise JsonRpcInvalidParams(
                message=f"{CMD_INVALIDATE} takes [decision id, reason] with a non-empty reason")
        service = await server.ready_service()
        record = await service.decisions_invalidate(_decision_id(args[0]), args[1].strip())
        await diags.refresh_all()
        return record

    @server.command(CMD_SHOW)
    @translate_errors
    async def show(*args: Any) -> dict[str, Any]:
        if len(args) != 1:
            raise JsonRpcInvalidParams(message=f"{CMD_SHOW} takes [decision id]")
        service = await server.ready_service()
        record = await service.decisions_get(_decision_id(args[0]))
        server.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Info,
            message=f"{record['title']} [{record['status']}]\n\n{record['rationale']}"))
        return record


def _inbox_actions(diag: types.Diagnostic) -> list[types.CodeAction]:
    label = diag.message.split(": ", 1)[-1].split(" — ", 1)[0]
    out = []
    for title, command in ((f"Accept memory: {label}", CMD_ACCEPT),
                           (f"Reject memory: {label}", CMD_REJECT)):
        out.append(types.CodeAction(
            title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
            command=types.Command(title=title, command=command, arguments=[{"id": diag.code}])))
    return out
