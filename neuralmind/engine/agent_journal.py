"""Learning from agent hooks when no server runs: a journal the end of a turn learns from.

Each hook is its own short process, so the in-memory editing sessions the server keeps
cannot span a turn. Instead a prompt (with its top hits) and every file the agent edits
are appended as one JSON line to `.neuralmind/agent_events.jsonl`; the turn's end
(`learn`, from the Stop hook) moves the journal aside atomically and feeds it to the
synapse layer in order, as the server would have: the prompt opens a question, the
edits that follow are what it led to and one co-activation batch. Writing a line is
stdlib only (the edit hook must stay cheap); a journal left by a crash is learned by
the next turn's end. Nothing is lost when learning is off or fails: the journal moved
aside is kept (`*.unlearned-<time>`) and says why in the log.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neuralmind.engine.workspace import Workspace

log = logging.getLogger("neuralmind.engine")

JOURNAL = "agent_events.jsonl"
MAX_LINE_BYTES = 16 * 1024     # one os.write of at most this is atomic enough on a local disk


def _journal(state: Path) -> Path:
    return state / JOURNAL


def record(state: Path, session: str, kind: str, file: str = "", query: str = "",
           hits: list[str] | None = None) -> None:
    """Append one event (kind: question | save) for `session`; never raises on a full disk
    silently: OSError reaches the hook, which logs it."""
    line: dict[str, Any] = {"session": session, "type": kind, "ts": time.time()}
    if file:
        line["file"] = file
    if query:
        line["query"] = query[:2000]
        line["hits"] = list(hits or [])[:10]
    data = (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
    if len(data) > MAX_LINE_BYTES:
        return
    fd = os.open(_journal(state), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _read(path: Path) -> list[dict[str, Any]]:
    out = []
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    for line in raw.splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue            # a line cut by a crash: the rest is still learned
        if isinstance(ev, dict) and isinstance(ev.get("session"), str):
            out.append(ev)
    return out


def turn_files(state: Path, session: str) -> list[str]:
    """The files `session` edited since its last prompt, in the order first edited."""
    files: dict[str, None] = {}
    for ev in _read(_journal(state)):
        if ev["session"] != session:
            continue
        if ev.get("type") == "question":
            files = {}
        elif ev.get("type") == "save" and isinstance(ev.get("file"), str):
            files[ev["file"]] = None
    return list(files)


def learn(ws: Workspace) -> int:
    """Feed the journal to the synapse layer and remove it; returns the events learned."""
    path = _journal(ws.state)
    taking = path.with_name(f"{JOURNAL}.learning-{os.getpid()}")
    try:
        os.replace(path, taking)        # later hooks start a new journal meanwhile
    except FileNotFoundError:
        return 0
    events = _read(taking)
    layer = ws._synapses_or_none()
    if layer is None:
        _keep(taking, "learning is off or the synapse store is unavailable")
        return 0
    learned = 0
    try:
        for ev in events:
            session, ts = f"agent:{ev['session']}", ev.get("ts")
            if ev.get("type") == "question" and isinstance(ev.get("query"), str):
                layer.record_query(session, ev["query"], [h for h in ev.get("hits") or []
                                                          if isinstance(h, str)], ts=ts)
            elif ev.get("type") == "save" and isinstance(ev.get("file"), str):
                layer.editing_event(session, "save", ev["file"], ts=ts)
            else:
                continue
            learned += 1
        layer.close_sessions()
    except Exception as e:  # learning fails open, and what was not learned is kept
        _keep(taking, str(e))
        return learned
    with contextlib.suppress(FileNotFoundError):
        taking.unlink()
    return learned


def _keep(path: Path, why: str) -> None:
    kept = path.with_name(f"{JOURNAL}.unlearned-{int(time.time())}")
    with contextlib.suppress(OSError):
        os.replace(path, kept)
    log.warning("agent events not learned (%s); kept in %s", why, kept)
