"""The hook wire format: what an agent hook asks NeuralMind, in no agent's dialect.

Each agent adapter (`neuralmind/hooks/claude.py`, `gemini.py`) turns its agent's hook JSON
into one `HookRequest`; the request is answered by the warm server (POSTed to
`HOOK_PATH` on its loopback endpoint, see `discovery.py`) or, without one, by the engine
over the on-disk index (`engine/agent_context.py`). The answer is the text the agent
should see (empty: nothing to add). Stdlib only: the hook client's fast path imports
nothing heavier. The CLI's consulting commands reach the same endpoint the same way
(`CLI_PATH`, `cli/remote.py`): `endpoint` and `post` are the one loopback client of both.
"""

from __future__ import annotations

import json
import os
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

HOOK_PATH = "/neuralmind/hook"
CLI_PATH = "/neuralmind/cli"          # plain JSON: the CLI's consulting commands, warm
WIRE_VERSION = 1
# Where a warm server is named (in `.neuralmind/`; `discovery.py` writes and reads them): the
# editor's endpoint, then an agent's own `neuralmind mcp`. Here so that the hook client
# finds them without importing the discovery module.
DISCOVERY_NAME = "mcp.json"
HOOKS_DISCOVERY_NAME = "hooks.json"

LOOPBACK_HOSTS = ("127.0.0.1", "localhost")


def endpoint(state: Path, name: str) -> tuple[str, str, int] | None:
    """(url, token, pid) of the discovery file `name` in the state folder `state`, read with
    json alone (`discovery.py`'s imports cost a fast path ~10 ms of CPU); None when it is
    absent, unreadable or names anything but a loopback http endpoint."""
    try:
        data = json.loads((state / name).read_bytes())
        url, token, pid = str(data["url"]), str(data["token"]), int(data.get("pid") or 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not url.startswith("http://") or _host_port(url)[0] not in LOOPBACK_HOSTS:
        return None
    return url, token, pid


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True      # exists, owned by someone else (then the token check decides)
    return True


def _host_port(url: str) -> tuple[str, int]:
    hostport = url.split("://", 1)[1].split("/", 1)[0]
    host, _, port = hostport.rpartition(":")
    return (host, int(port)) if host and port.isdigit() else (hostport, 80)


def post(url: str, path: str, token: str, body: bytes, timeout: float,
         connect_timeout: float | None = None) -> tuple[int, bytes]:
    """POST `body` (JSON) to `path` on the endpoint of `url` over a plain socket: (status,
    payload). http.client costs ~15 ms of imports (email, ssl) per process, the whole budget
    of a hook or a warm CLI command; HTTP/1.1 with `Connection: close`, read to the end.
    OSError (TimeoutError among them) when the endpoint refuses or does not answer."""
    host, port = _host_port(url)
    request = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    with socket.create_connection((host, port), timeout=connect_timeout or timeout) as sock:
        sock.settimeout(timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(request)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    head, _, payload = b"".join(chunks).partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    return status, payload


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


class HookRequest:
    """One hook event. A plain class, not a dataclass: `dataclasses` (with `inspect`) is
    ~8 ms of CPU on every hook, the client's whole import budget."""

    __slots__ = ("event", "session", "agent", "prompt", "pattern", "files", "source",
                 "stop_active", "budget")

    def __init__(self, event: str, session: str = "", agent: str = "", prompt: str = "",
                 pattern: str = "", files: list[str] | None = None, source: str = "",
                 stop_active: bool = False, budget: int | None = None) -> None:
        self.event = event
        self.session = session            # the agent's session id (learning groups by it)
        self.agent = agent                # claude | gemini | ...
        self.prompt = prompt              # PROMPT
        self.pattern = pattern            # SEARCH
        self.files = list(files or [])    # EDIT: paths as the agent gave them
        self.source = source              # SESSION_START: startup | resume | clear | compact
        self.stop_active = stop_active    # STOP: the agent already continues for a hook
        self.budget = budget              # tokens for PROMPT (None: the workspace setting)

    def to_json(self) -> dict[str, Any]:
        return {"v": WIRE_VERSION, **{k: getattr(self, k) for k in self.__slots__}}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookRequest) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        return f"HookRequest({self.to_json()})"

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


EDITED_FILE_FIELDS = ("file_path", "notebook_path")    # where an edit tool names its file


def parse_input(agent: str, events: dict[str, list[tuple[str | None, str]]], event: str,
                data: dict[str, Any]) -> HookRequest | None:
    """The request for one hook call of an agent whose stdin follows Claude Code's field
    names (`session_id`, `tool_name`, `tool_input`, `prompt`, `source`, `trigger`,
    `stop_hook_active`; Gemini CLI kept them): the wire event is the first of `events[event]`
    whose tool matcher (names joined by "|", None: any) takes `tool_name`. None when there is
    nothing to do (another tool, no prompt, no pattern, no file)."""
    tool = data.get("tool_name")
    wire = next((w for matcher, w in events.get(event, [])
                 if matcher is None or tool in matcher.split("|")), None)
    if wire is None:
        return None
    tool_input = data.get("tool_input") if isinstance(data.get("tool_input"), dict) else {}
    req = HookRequest(wire, session=str(data.get("session_id") or ""), agent=agent)
    if wire in (SESSION_START, COMPACT):
        req.source = str(data.get("source") or data.get("trigger") or "")
    elif wire == PROMPT:
        if not isinstance(data.get("prompt"), str):
            return None
        req.prompt = data["prompt"]
    elif wire == SEARCH:
        if not isinstance(tool_input.get("pattern"), str):
            return None
        req.pattern = tool_input["pattern"]
    elif wire == EDIT:
        req.files = [p for p in (tool_input.get(f) for f in EDITED_FILE_FIELDS)
                     if isinstance(p, str) and p][:1]
        if not req.files:
            return None
    elif wire == STOP:
        req.stop_active = bool(data.get("stop_hook_active"))
    return req
