"""Agent hook events served by the warm engine: the answer, and the learning they carry.

A mixin of EngineService (one job per file). The answer is the engine's
(`engine/agent_context.py`, on the engine thread); the learning is the editor's own
path: an agent's edit is a save in the agent's session (re-indexed, then learned),
its prompt is that session's question with its hits, so the edits that follow are
learned as what the prompt led to. The files a turn changed are remembered per
session until the turn's Stop asks for their review.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from neuralmind.errors import EngineError
from neuralmind.hookwire import EDIT, PROMPT, STOP, HookRequest
from neuralmind.service.learning import record_query

if TYPE_CHECKING:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.engine import Workspace
    from neuralmind.service.engine_thread import EngineThread

log = logging.getLogger("neuralmind.service")

MAX_SESSION_CHARS = 80


def _answer(ws: Workspace, req: HookRequest) -> str:
    # the engine's hook answers, imported on the engine thread like the engine itself
    from neuralmind.engine import agent_context

    return agent_context.answer(ws, req)


def _prompt(ws: Workspace, req: HookRequest) -> tuple[str, list[str]]:
    from neuralmind.engine import activity, agent_context  # on the engine thread, as above

    text, hits = agent_context.prompt_answer(ws, req)
    activity.publish_prompt(ws.graph, req.prompt, text, hits, learning_session(req))
    return text, hits


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
        if req.event == PROMPT:
            self.agent_turns[session] = {}
            text, hits = await self._thread.run(_prompt, ws, req)
            if hits and self.config.learning:
                self._thread.spawn(self._thread.run(record_query, ws, session, req.prompt, hits),
                                   "learn-prompt")
            return {"context": text}
        if req.event == STOP:
            req.files = list(self.agent_turns.pop(session, {}))
        return {"context": await self._thread.run(functools.partial(_answer, ws, req))}
