"""`neuralmind hook EVENT [--agent NAME]`: one agent hook, answered fast, never failing a turn.

The agent runs this on every prompt and tool call, so the common path is small: read
the agent's JSON from stdin, turn it into a `HookRequest` (the agent's module), and POST
it to the warm server named by the workspace's discovery file (loopback, bearer token;
stdlib only, no engine import). Without a live server the engine answers from the
on-disk index in this process, and learning goes to the journal the turn's end learns
from (`engine/agent_journal.py`). The answer is printed the way the agent expects.

A hook never fails the agent's turn: on any error it prints nothing, exits 0 and
appends one line to `.neuralmind/hooks.log`. stderr is pointed at /dev/null first,
because some agents (Gemini CLI) read stderr as the hook's output when stdout is empty.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from neuralmind.config import HOOK_LOG_MAX_BYTES, HOOK_SERVER_TIMEOUT_SECONDS
from neuralmind.hooks.agents import agent
from neuralmind.hookwire import (
    DISCOVERY_NAME,
    EDIT,
    HOOK_PATH,
    HOOKS_DISCOVERY_NAME,
    PROMPT,
    SESSION_START,
    STOP,
    HookRequest,
    endpoint,
    post,
)

if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, BinaryIO

STATE_DIR = ".neuralmind"
LOG_NAME = "hooks.log"
MAX_STDIN_BYTES = 8 * 1024 * 1024


class ServerGaveNoAnswer(Exception):
    """The live server took the request but did not answer in time, or failed on it."""


def find_root(start: str | None) -> Path | None:
    """The nearest folder at or above `start` with a NeuralMind state folder."""
    here = Path(start or os.getcwd()).resolve()
    for d in (here, *here.parents):
        if (d / STATE_DIR).is_dir():
            return d
    return None


def log_line(root: Path | None, text: str) -> None:
    """One line to the workspace's hook log (rotated past HOOK_LOG_MAX_BYTES, one old copy)."""
    if root is None:
        return
    path = root / STATE_DIR / LOG_NAME
    try:
        if path.exists() and path.stat().st_size > HOOK_LOG_MAX_BYTES:
            os.replace(path, path.with_suffix(".log.1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{stamp} {text}\n")
    except OSError:
        pass


# --- the warm server -------------------------------------------------------------------------
def ask_server(root: Path, req: HookRequest) -> str | None:
    """A live server's answer: the editor's, else the agent's own `neuralmind mcp`; None
    when neither answers for `root` (use the disk).

    ServerGaveNoAnswer when one took the request and then timed out or failed: the disk
    path would only add its own second and a half to a turn already kept waiting."""
    body = json.dumps(req.to_json()).encode()
    for name in (DISCOVERY_NAME, HOOKS_DISCOVERY_NAME):
        text = _ask(root, name, body)
        if text is not None:
            return text
    return None


def _ask(root: Path, name: str, body: bytes) -> str | None:
    entry = endpoint(root / STATE_DIR, name)
    if entry is None:
        return None
    url, token, _pid = entry
    try:
        status, payload = post(url, HOOK_PATH, token, body, HOOK_SERVER_TIMEOUT_SECONDS)
    except TimeoutError as e:
        raise ServerGaveNoAnswer(f"the server at {url} did not answer in "
                                 f"{HOOK_SERVER_TIMEOUT_SECONDS:g} s") from e
    except OSError:
        return None                      # refused: a stale discovery file
    if status != 200:
        if status >= 500:
            raise ServerGaveNoAnswer(f"the server at {url} failed (HTTP {status})")
        return None                      # another token or an older server: a stale entry
    out = json.loads(payload)
    if Path(out.get("root", "")).resolve() != root:
        return None
    return str(out.get("context") or "")


# --- the on-disk index -----------------------------------------------------------------------
def answer_from_disk(root: Path, req: HookRequest) -> str:
    """The engine's answer in this process; learning goes to the journal."""
    # ~5 ms (tomllib): a workspace setting decides whether anything is learned
    from neuralmind.config import load_workspace_config
    from neuralmind.engine import agent_journal, hook_cache
    from neuralmind.engine.paths import confine

    config = load_workspace_config(root)
    state = root / STATE_DIR
    session = f"{req.agent or 'agent'}:{req.session or 'default'}"
    if req.event == EDIT:
        if config.learning:
            for path in req.files:
                agent_journal.record(state, session, "save", file=confine(root, path))
        return ""
    if not (state / "graph.db").is_file():
        return ""                        # never built: nothing to say, nothing to build here
    if req.event == STOP:
        req.files = agent_journal.turn_files(state, session)
    if req.event == SESSION_START:
        cached = hook_cache.read(state)
        if cached is not None:
            return cached
    # the engine (~0.3 s of imports, then the index) only when no server answered
    from neuralmind.engine import Workspace, activity, agent_context
    from neuralmind.events.log import enable_event_log

    started = time.perf_counter()
    enable_event_log(root, "hook")       # what this hook did reaches an open observatory
    ws = Workspace(root, config)
    if req.event == PROMPT:
        pushed = agent_context.prompt_answer(ws, req)
        text = pushed.text
        activity.publish_prompt(ws.graph, req.prompt, text, pushed.hit_ids, f"agent:{session}")
        if config.learning and (text or pushed.hit_ids):
            agent_journal.record(state, session, "question", query=req.prompt,
                                 hits=pushed.hit_ids)
    else:
        text = agent_context.answer(ws, req)
        if req.event == SESSION_START:
            hook_cache.write(state, text)
        if req.event == STOP and config.learning:
            agent_journal.learn(ws)
    activity.publish_hook(req.agent, req.event, req.session,
                          round((time.perf_counter() - started) * 1000, 1), text, "disk")
    return text


# --- one hook --------------------------------------------------------------------------------
def run_hook(agent_name: str, event: str, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer one hook call; always 0 (errors are logged, never shown to the agent)."""
    root: Path | None = None
    try:
        adapter: ModuleType = agent(agent_name)
        raw = stdin.read(MAX_STDIN_BYTES)
        data: Any = json.loads(raw) if raw.strip() else {}
        if not isinstance(data, dict):
            return 0
        req = adapter.parse(event, data)
        root = find_root(adapter.project_dir(data))
        if req is None or root is None:
            return 0
        try:
            text = ask_server(root, req)
        except ServerGaveNoAnswer as e:
            log_line(root, f"{agent_name} {event}: {e}")
            return 0
        if text is None:
            text = answer_from_disk(root, req)
        out = adapter.render(event, text)
        if out:
            stdout.write(out.encode("utf-8"))
            stdout.flush()
    except Exception as e:  # a hook never fails the turn: one line to the log, silence
        try:
            root = root or find_root(None)      # unreadable stdin: the agent's working folder
        except OSError:
            pass
        log_line(root, f"{agent_name} {event}: {type(e).__name__}: {e}")
    return 0


def main(argv: list[str]) -> int:
    """`hook EVENT [--agent NAME]` (argv after `hook`); stderr is silenced first."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    except OSError:
        pass
    args = list(argv)
    name = "claude"
    if "--agent" in args:
        i = args.index("--agent")
        name = args[i + 1] if i + 1 < len(args) else ""
        del args[i:i + 2]
    if len(args) != 1:
        return 0                         # a malformed hook command: silence, as for any error
    return run_hook(name, args[0], sys.stdin.buffer, sys.stdout.buffer)
