"""The hook wire format: what an agent hook asks NeuralMind, in no agent's dialect.

Each agent adapter (`neuralmind/hooks/claude.py`, `gemini.py`) turns its agent's hook JSON
into one `HookRequest`; the request is answered by the warm server (POSTed to
`HOOK_PATH` on its loopback endpoint, see `discovery.py`) or, without one, by the engine
over the on-disk index (`engine/agent_context.py`). The answer is the text the agent
should see (empty: nothing to add). Stdlib only: the hook client's fast path imports
nothing heavier.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

HOOK_PATH = "/neuralmind/hook"
WIRE_VERSION = 1

# The events NeuralMind answers, whatever the agent calls them:
SESSION_START = "session_start"   # the wake-up pack and the standing directives
PROMPT = "prompt"                 # the files and memory atoms a prompt needs
SEARCH = "search"                 # the agent is about to grep/glob a pattern
EDIT = "edit"                     # the agent edited files: learning events
COMPACT = "compact"               # the context is about to be compacted: the directives
STOP = "stop"                     # the turn ended: review what it changed
EVENTS = (SESSION_START, PROMPT, SEARCH, EDIT, COMPACT, STOP)

MAX_TEXT_CHARS = 20_000           # a prompt or pattern longer than this is cut, not refused
MAX_FILES = 200                   # edited files in one request


class WireError(ValueError):
    """A request that is not a hook request (the server answers 400, the client logs it)."""


@dataclass
class HookRequest:
    event: str
    session: str = ""             # the agent's session id (learning groups events by it)
    agent: str = ""               # claude | gemini | ...
    prompt: str = ""              # PROMPT
    pattern: str = ""             # SEARCH
    files: list[str] = field(default_factory=list)   # EDIT: paths as the agent gave them
    source: str = ""              # SESSION_START: startup | resume | clear | compact
    stop_active: bool = False     # STOP: the agent is already continuing because of a hook
    budget: int | None = None     # tokens for PROMPT (None: the workspace setting)

    def to_json(self) -> dict[str, Any]:
        return {"v": WIRE_VERSION, **asdict(self)}

    @classmethod
    def from_json(cls, data: Any) -> HookRequest:
        """Checked: WireError names the first problem."""
        if not isinstance(data, dict):
            raise WireError("a hook request is a JSON object")
        event = data.get("event")
        if event not in EVENTS:
            raise WireError(f"unknown event {event!r} (expected one of {', '.join(EVENTS)})")
        files = data.get("files") or []
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise WireError("'files' must be a list of strings")
        budget = data.get("budget")
        if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool)):
            raise WireError("'budget' must be an integer")
        texts = {}
        for key in ("session", "agent", "prompt", "pattern", "source"):
            value = data.get(key) or ""
            if not isinstance(value, str):
                raise WireError(f"{key!r} must be a string")
            texts[key] = value[:MAX_TEXT_CHARS]
        return cls(event=event, files=files[:MAX_FILES], budget=budget,
                   stop_active=bool(data.get("stop_active")), **texts)
