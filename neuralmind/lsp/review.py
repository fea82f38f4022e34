"""The review of the pending change in the editor: the `neuralmind/review` request, and as
diagnostics of open files the files the change probably misses (Information, on the changed
file: "usually changes with `tests/test_x.py` (14 of 17 commits)", with a code action that
opens the partner) and the ACTIVE decisions it puts at risk (Hint, on the changed symbol,
with code actions to re-affirm, supersede or invalidate the decision).

The review is recomputed REVIEW_DEBOUNCE_SECONDS after saves, edits that make a buffer
unsaved, commits and decision changes; its diagnostics join the decision diagnostics
(`DecisionDiagnostics.add_source`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from neuralmind.config import REVIEW_DEBOUNCE_SECONDS
from neuralmind.lsp.diagnostics import (
    CMD_INVALIDATE,
    CMD_SHOW,
    SOURCE,
    DecisionDiagnostics,
    line_range,
)
from neuralmind.lsp.params import Params, translate_errors
from neuralmind.lsp.server import Feature

if TYPE_CHECKING:
    from neuralmind.lsp.server import NeuralMindServer
    from neuralmind.service.child_build import BuildOutcome

log = logging.getLogger("neuralmind.lsp")

METHOD = "neuralmind/review"
CMD_REVIEW = "neuralmind.review"
CMD_OPEN = "neuralmind.review.open"
CMD_REAFFIRM = "neuralmind.decision.reaffirm"
CMD_SUPERSEDE = "neuralmind.decision.supersede"
KIND_MISSING = "missing"
KIND_AT_RISK = "at_risk"
MAX_BUFFERS = 200
MAX_BUFFER_CHARS = 5_000_000


def because_text(b: dict[str, Any]) -> str:
    return f"({b['together']} of {b['of']} {b['source']})"


class ReviewDiagnostics(Feature):
    """`neuralmind/review`, its diagnostics, code actions and commands."""

    def __init__(self, server: NeuralMindServer) -> None:
        super().__init__(server)
        self.last: dict[str, Any] | None = None       # the last review of the workspace
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    # --- the review, kept fresh ------------------------------------------------------------
    def schedule(self) -> None:
        """Review again once things settle (saves, edits, commits come in bursts)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(REVIEW_DEBOUNCE_SECONDS, self._start)

    def _start(self) -> None:
        self._timer = None
        if self._task is not None and not self._task.done():
            self.schedule()            # one at a time; the next one sees everything
            return
        self._task = asyncio.get_running_loop().create_task(self.refresh())

    async def refresh(self) -> None:
        service = self.server.service
        if service is None:
            return
        try:
            review = await service.review()
        except Exception as e:   # outside git, or git failing: no review diagnostics
            log.info("no review: %s", e)
            review = None
        if review != self.last:
            self.last = review
            self.server.get_feature(DecisionDiagnostics).schedule_refresh()

    async def ready(self) -> None:
        self.schedule()

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None:
            self._task.cancel()

    def index_updated(self, paths: list[str]) -> None:
        self.schedule()

    def indexing_finished(self, outcome: BuildOutcome) -> None:
        self.schedule()

    def decisions_changed(self) -> None:
        self.schedule()

    def buffers_changed(self) -> None:
        self.schedule()

    # --- diagnostics and code actions -------------------------------------------------------
    async def diagnostics(self, uri: str, rel: str) -> list[types.Diagnostic]:
        review = self.last
        if not review:
            return []
        out = []
        for m in review["missing"]:
            best = m["because"][0]
            if best["changed_file"] != rel:
                continue
            out.append(types.Diagnostic(
                range=line_range(self.server, uri, 1),
                message=f"usually changes with `{m['file']}` {because_text(best)}",
                severity=types.DiagnosticSeverity.Information, source=SOURCE, code="missed-file",
                data={"kind": KIND_MISSING, "file": m["file"],
                      "uri": self.server.rel_to_uri(m["file"])}))
        for d in review["decisions_at_risk"]:
            if d["file"] != rel:
                continue
            out.append(types.Diagnostic(
                range=line_range(self.server, uri, int(d["line"])),
                message=f"governed by '{d['title']}': reconsider before committing ({d['reason']})",
                severity=types.DiagnosticSeverity.Hint, source=SOURCE, code="decision-at-risk",
                data={"kind": KIND_AT_RISK, "decision": d["id"], "title": d["title"]}))
        return out

    @staticmethod
    def missing_actions(diag: types.Diagnostic) -> list[types.CodeAction]:
        data = diag.data if isinstance(diag.data, dict) else {}
        if not isinstance(data.get("uri"), str):
            return []
        label = f"Open {data.get('file') or data['uri']}"
        return [types.CodeAction(title=label, kind=types.CodeActionKind.QuickFix,
                                 diagnostics=[diag],
                                 command=types.Command(title=label, command=CMD_OPEN,
                                                       arguments=[data["uri"]]))]

    @staticmethod
    def at_risk_actions(diag: types.Diagnostic) -> list[types.CodeAction]:
        data = diag.data if isinstance(diag.data, dict) else {}
        did, title = data.get("decision"), data.get("title") or ""
        if not isinstance(did, str):
            return []
        out = []
        for label, command, args in (
            (f"Re-affirm decision: {title}", CMD_REAFFIRM, [did]),
            (f"Supersede decision: {title}", CMD_SUPERSEDE, [did]),
            (f"Invalidate decision: {title}", CMD_INVALIDATE,
             [did, "invalidated from the editor: the pending change replaces it"]),
            (f"Show decision: {title}", CMD_SHOW, [did]),
        ):
            out.append(types.CodeAction(title=label, kind=types.CodeActionKind.QuickFix,
                                        diagnostics=[diag],
                                        command=types.Command(title=label, command=command,
                                                              arguments=args)))
        return out

    def initialize(self) -> None:
        diags = self.server.get_feature(DecisionDiagnostics)
        diags.add_source(self.diagnostics)
        diags.add_actions(KIND_MISSING, self.missing_actions)
        diags.add_actions(KIND_AT_RISK, self.at_risk_actions)

    # --- request and commands ---------------------------------------------------------------
    def register(self) -> None:
        server = self.server

        async def run_review(p: Params) -> dict[str, Any]:
            base = p.str("base", max_len=500)
            threshold = p.float("min_confidence", 0.0, 1.0)
            if threshold is None:
                threshold = p.float("minConfidence", 0.0, 1.0)
            buffers: dict[str, str] = {}
            raw = p.raw.get("buffers")
            if raw is not None:
                if not isinstance(raw, list) or len(raw) > MAX_BUFFERS:
                    raise JsonRpcInvalidParams(
                        message=f"{METHOD}: 'buffers' must be a list of at most {MAX_BUFFERS} "
                                "{uri, text} objects")
                for b in raw:
                    text = b.get("text") if isinstance(b, dict) else None
                    if not isinstance(text, str) or len(text) > MAX_BUFFER_CHARS:
                        raise JsonRpcInvalidParams(
                            message=f"{METHOD}: each buffer needs a uri and its text")
                    buffers[server.uri_to_rel(b.get("uri"))] = text
            service = await server.ready_service()
            out = await service.review(base, buffers, threshold)
            for item in (*out["missing"], *out["decisions_at_risk"]):
                item["uri"] = server.rel_to_uri(item["file"])
            return out

        @server.feature(METHOD)
        @translate_errors
        async def review_request(params: Any) -> dict[str, Any]:
            return await run_review(Params(params, METHOD))

        @server.command(CMD_REVIEW)
        @translate_errors
        async def review_command(*args: Any) -> dict[str, Any]:
            if len(args) > 1:
                raise JsonRpcInvalidParams(message=f"{CMD_REVIEW} takes one params object")
            return await run_review(Params(args[0] if args else None, CMD_REVIEW))

        @server.command(CMD_OPEN)
        @translate_errors
        async def open_partner(*args: Any) -> dict[str, Any]:
            if len(args) != 1:
                raise JsonRpcInvalidParams(message=f"{CMD_OPEN} takes [uri]")
            server.uri_to_rel(args[0])          # a file of the workspace, nothing else
            result = await server.window_show_document_async(
                types.ShowDocumentParams(uri=args[0], take_focus=True))
            return {"uri": args[0], "shown": bool(result and result.success)}

        @server.command(CMD_REAFFIRM)
        @translate_errors
        async def reaffirm(*args: Any) -> dict[str, Any]:
            if not 1 <= len(args) <= 2 or not isinstance(args[0], str) or not args[0].strip():
                raise JsonRpcInvalidParams(message=f"{CMD_REAFFIRM} takes [decision id, note?]")
            note = args[1] if len(args) == 2 and isinstance(args[1], str) else ""
            service = await server.ready_service()
            return await service.decisions_reaffirm(args[0].strip(), note)

        @server.command(CMD_SUPERSEDE)
        @translate_errors
        async def supersede(*args: Any) -> dict[str, Any]:
            if (len(args) != 3 or not all(isinstance(a, str) and a.strip() for a in args)):
                raise JsonRpcInvalidParams(
                    message=f"{CMD_SUPERSEDE} takes [decision id, title, rationale] (the editor "
                            "asks for the new decision's title and rationale)")
            service = await server.ready_service()
            return await service.decisions_supersede(args[0].strip(), args[1].strip(),
                                                     args[2].strip())
