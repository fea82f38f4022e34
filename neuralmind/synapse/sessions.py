"""Editing sessions: an event stream turned into co-activation batches and transitions.

Files opened or edited in one session, without a pause longer than
SESSION_IDLE_SECONDS, form one co-activation batch; consecutive distinct files
are transitions (each directed pair counted once per batch, so re-visiting a
file does not inflate it). A question asked in the session is remembered with
the files edited after it: that question -> files link is the strongest signal
measured on real history.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from neuralmind import config

log = logging.getLogger("neuralmind.synapse")

EVENT_KINDS = ("session_start", "open", "edit", "save", "session_end")
FILE_KINDS = ("open", "edit", "save")


@dataclass
class Batch:
    """One co-activation batch, ready to be learned."""

    session: str
    files: list[str]                    # distinct files touched, in first-touch order
    edited: list[str]                   # the subset edited or saved
    transitions: list[tuple[str, str]]  # distinct consecutive (from, to) pairs
    ts: float                           # time of the last event in the batch
    question: str | None = None         # the session's open question, if any
    hits: list[str] = field(default_factory=list)  # that question's top hits (node ids)


@dataclass
class Question:
    session: str
    query: str
    hits: list[str]
    files: list[str]
    ts: float


@dataclass
class _Session:
    files: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)
    transitions: dict[tuple[str, str], None] = field(default_factory=dict)
    last_file: str | None = None
    last_ts: float = 0.0
    last_edit: dict[str, float] = field(default_factory=dict)
    question: str | None = None
    hits: list[str] = field(default_factory=list)
    question_files: dict[str, None] = field(default_factory=dict)
    question_ts: float = 0.0


class SessionTracker:
    """In-memory state of open editing sessions; learning happens in the two sinks."""

    def __init__(self, on_batch: Callable[[Batch], None], on_question: Callable[[Question], None],
                 clock: Callable[[], float] = time.time) -> None:
        self.on_batch = on_batch
        self.on_question = on_question
        self.clock = clock
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.RLock()

    def event(self, session: str, kind: str, file: str = "", ts: float | None = None,
              query: str | None = None) -> None:
        """Feed one event; raises ValueError for an unknown kind or a missing file/session."""
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown event type {kind!r} (expected one of {', '.join(EVENT_KINDS)})")
        if not session or not isinstance(session, str):
            raise ValueError("event has no session id")
        if kind in FILE_KINDS and not file:
            raise ValueError(f"{kind} event has no file")
        now = self.clock() if ts is None else float(ts)
        with self._lock:
            self._flush_idle(now, keep=session)
            if kind == "session_start":
                self._close(session)
                s = self._sessions[session] = _Session(last_ts=now)
                if query and query.strip():
                    self._ask(s, query.strip(), [], now, session)
                return
            if kind == "session_end":
                self._close(session)
                return
            s = self._sessions.get(session)
            if s is None:
                s = self._sessions[session] = _Session(last_ts=now)
            elif s.files and now - s.last_ts > config.SESSION_IDLE_SECONDS:
                self._flush(session, s)
            self._touch(session, s, kind, file, now)

    def question(self, session: str, query: str, hits: list[str], ts: float | None = None) -> None:
        """A question asked in `session`; the files edited after it are what it led to."""
        now = self.clock() if ts is None else float(ts)
        with self._lock:
            s = self._sessions.get(session)
            if s is None:
                s = self._sessions[session] = _Session(last_ts=now)
            elif s.question == query and not s.hits:
                s.hits = list(hits)  # hits for the question the session started with
                return
            self._ask(s, query, hits, now, session)

    def flush(self, session: str | None = None) -> None:
        """Learn pending batches now (all sessions when `session` is None); sessions stay open."""
        with self._lock:
            names = [session] if session is not None else list(self._sessions)
            for name in names:
                s = self._sessions.get(name)
                if s is not None:
                    self._flush(name, s)

    def close_all(self) -> None:
        with self._lock:
            for name in list(self._sessions):
                self._close(name)

    @property
    def open_sessions(self) -> list[str]:
        return list(self._sessions)

    # --- internals ----------------------------------------------------------------------
    def _ask(self, s: _Session, query: str, hits: list[str], now: float, session: str = "") -> None:
        self._emit_question(session, s)
        s.question, s.hits, s.question_files, s.question_ts = query, list(hits), {}, now

    def _touch(self, session: str, s: _Session, kind: str, file: str, now: float) -> None:
        edit = kind in ("edit", "save")
        if (edit and file == s.last_file and file in s.edited
                and now - s.last_edit.get(file, -1e18) < config.EDIT_DEBOUNCE_SECONDS):
            s.last_edit[file] = now  # a burst of keystrokes on one file is one event
            s.last_ts = now
            return
        if s.last_file is not None and file != s.last_file:
            s.transitions[(s.last_file, file)] = None
        s.files[file] = None
        if edit:
            s.edited[file] = None
            s.last_edit[file] = now
            if s.question is not None:
                s.question_files[file] = None
        s.last_file, s.last_ts = file, now
        if len(s.files) >= config.SESSION_MAX_BATCH_FILES:
            self._flush(session, s)

    def _flush(self, session: str, s: _Session) -> None:
        if not s.files:
            return
        batch = Batch(session, list(s.files), list(s.edited), list(s.transitions), s.last_ts,
                      s.question, list(s.hits))
        s.files, s.edited, s.transitions, s.last_file, s.last_edit = {}, {}, {}, None, {}
        try:
            self.on_batch(batch)
        except Exception as e:  # learning fails open
            log.warning("could not learn editing batch of session %s: %s", session, e)

    def _emit_question(self, session: str, s: _Session) -> None:
        if s.question is None or not s.question_files:
            return
        q = Question(session, s.question, list(s.hits), list(s.question_files), s.question_ts)
        s.question_files = {}
        try:
            self.on_question(q)
        except Exception as e:  # learning fails open
            log.warning("could not record question of session %s: %s", session, e)

    def _close(self, session: str) -> None:
        s = self._sessions.pop(session, None)
        if s is not None:
            self._flush(session, s)
            self._emit_question(session, s)

    def _flush_idle(self, now: float, keep: str) -> None:
        for name, s in list(self._sessions.items()):
            if name != keep and now - s.last_ts > config.SESSION_IDLE_SECONDS:
                self._close(name)
