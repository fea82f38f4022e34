"""Agent hook events served by the warm engine: the answer, and the learning they carry.

A mixin of EngineService (one job per file). The answer is the engine's
(`engine/agent_context.py`, on the engine thread); the learning is the editor's own
path: an agent's edit is a save in the agent's session (re-indexed, then learned),
its prompt is that session's question with its hits, so the edits that follow are
learned as what the prompt led to. A prompt's or a search's push is an answer like
the editor's: stamped with the server's view of the work tree, and scored by use. The files a turn changed are remembered per
session until the turn's Stop asks for their review.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from neuralmind.errors import EngineError
from neuralmind.hookwire import EDIT, PROMPT, SEARCH, STOP, HookRequest
from neuralmind.service.learning import record_query

if TYPE_CHECKING:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.engine import Workspace
    from neuralmind.engine.agent_context import Pushed
    from neuralmind.service.engine_thread import EngineThread
    from neuralmind.service.use import UseTracking

log = logging.getLogger("neuralmind.service")

MAX_SESSION_CHARS = 80


def _answer(ws: Workspace, req: HookRequest) -> str:
    # the engine's hook answers, imported on the engine thread like the engine itself
    from neuralmind.engine import agent_context

    return agent_context.answer(ws, req)


def _pushed(ws: Workspace, req: HookRequest, view: dict[str, Any]) -> Pushed:
    from neuralmind.engine import activity, agent_context  # on the engine thread, as above

    if req.event != PROMPT:
        return agent_context.search_answer(ws, req, view)
    pushed = agent_context.prompt_answer(ws, req, view)
    activity.publish_prompt(ws.graph, req.prompt, pushed.text, pushed.hit_ids,
                            learning_session(req))
    return pushed


def learning_session(req: HookRequest) -> str:
    """The synapse session of an agent's hook events: one per agent session."""
    return f"agent:{req.agent or 'agent'}:{req.session or 'default'}"[:MAX_SESSION_CHARS]


class AgentHookRequests:
    """`agent_hook`: one hook event, answered and learned from."""

    # provided by EngineService
    _thread: EngineThread
    config: WorkspaceConfig
    agent_turns: dict[str, dict[str, None]]
    workspace: Callable[[], Awaitable[Workspace]]
    did_save: Callable[..., Awaitable[str]]
    use: UseTracking
    _stamp_args: Callable[[], dict[str, Any]]

    async def agent_hook(self, req: HookRequest) -> dict[str, Any]:
        """{"context": text} for `req` ("" when there is nothing to add)."""
        session = learning_session(req)
        ws = await self.workspace()
        if req.event == EDIT:
            turn = self.agent_turns.setdefault(session, {})
            for path in req.files:
                try:
                    rel = await self.did_save(path, session=session)
                except EngineError as e:     # a file outside the workspace: not ours to learn
                    log.info("agent edit ignored: %s", e)
                    continue
                turn[rel] = None
            return {"context": ""}
        if req.event in (PROMPT, SEARCH):
            if req.event == PROMPT:
                self.agent_turns[session] = {}
            view = self._stamp_args()
            pushed = await self._thread.run(_pushed, ws, req, view)
            if pushed.hit_ids and self.config.learning:
                self._thread.spawn(self._thread.run(record_query, ws, session, req.prompt,
                                                    pushed.hit_ids), "learn-prompt")
            if pushed.answer is None:
                return {"context": pushed.text}
            self.use.answered("hook", session, pushed.question, pushed.answer)
            return {"context": pushed.text, "freshness": pushed.answer["freshness"]}
        if req.event == STOP:
            req.files = list(self.agent_turns.pop(session, {}))
        return {"context": await self._thread.run(functools.partial(_answer, ws, req))}
