"""Editing sessions: an event stream turned into co-activation and transitions.

A session's co-activation window holds the files opened or edited since its
last pause longer than SESSION_IDLE_SECONDS (at most SESSION_MAX_BATCH_FILES,
oldest leaving first). Every pair in the window is reinforced once per window,
and consecutive distinct files are transitions, each directed pair counted once
per window, so re-visiting files or flushing often does not inflate anything.

What a window has already learned (pairs, counted files, seen transitions) is remembered
so that it is learned once; in a session that never pauses (an editor open for days) that
memory is bounded to about SESSION_MEMORY_PAIRS pairs and SESSION_MEMORY_FILES files: what
has not come up for a long while is forgotten, and learned once more if it comes back. A
session that learns fewer than half those numbers (with the 25-file window, one touching up
to ~200 distinct files) forgets nothing, so its weights are exactly what they always were.

`flush` learns what is pending without closing the window: an editor that
flushes after every quiet second (the LSP server does) learns exactly what one
flush at the end would, instead of fragmenting the session into one-file
batches. A question asked in the session is remembered with the files edited
after it: that question -> files link is the strongest signal measured on real
history.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from neuralmind import config

log = logging.getLogger("neuralmind.synapse")

EVENT_KINDS = ("session_start", "open", "edit", "save", "session_end")
FILE_KINDS = ("open", "edit", "save")
SESSION_MEMORY_PAIRS = 10_000   # learned pairs / seen transitions one session remembers
SESSION_MEMORY_FILES = 1_000    # counted files / files a question led to, per session

K = TypeVar("K", bound=Hashable)


class _Recent(Generic[K]):
    """A set that forgets what it has not seen for a while, holding at most about `limit`
    entries: two generations of `limit // 2`; an entry seen again moves to the young one, and
    when the young one is full the old one is dropped. What a long session keeps revisiting
    is never forgotten; an entry is forgotten only after `limit // 2` newer ones."""

    def __init__(self, limit: int) -> None:
        self.half = max(1, limit // 2)
        self._young: set[K] = set()
        self._old: set[K] = set()

    def unseen(self, keys: Iterable[K]) -> list[K]:
        """Those of `keys` not remembered, in order (the remembered ones count as seen now)."""
        young, old = self._young, self._old
        out = []
        for key in keys:
            if key in young:
                continue
            if key in old:
                young.add(key)
            else:
                out.append(key)
        self._age()
        return out

    def seen(self, key: K) -> bool:
        return not self.unseen((key,))

    def update(self, keys: Iterable[K]) -> None:
        self._young.update(keys)
        self._age()

    def _age(self) -> None:
        if len(self._young) >= self.half:
            self._old, self._young = self._young, set()

    def __len__(self) -> int:
        return len(self._young) + len(self._old - self._young)


@dataclass
class Batch:
    """What one flush has to learn (only what the window did not learn before)."""

    session: str
    pairs: list[tuple[str, str]]         # new co-activated pairs (canonical order)
    touched: list[str]                   # files counted once per window (popularity)
    transitions: list[tuple[str, str]]   # new directed (from, to) pairs
    edited: list[str]                    # files newly edited after the session's question
    ts: float                            # time of the last event learned
    question: str | None = None          # the session's open question, if any
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
    memory_pairs: int = SESSION_MEMORY_PAIRS
    memory_files: int = SESSION_MEMORY_FILES
    window: dict[str, None] = field(default_factory=dict)    # files in the window, oldest first
    learned: _Recent[tuple[str, str]] = field(init=False)
    counted: _Recent[str] = field(init=False)
    pending: bool = False                                    # something to learn since the flush
    transitions: dict[tuple[str, str], None] = field(default_factory=dict)
    seen_transitions: _Recent[tuple[str, str]] = field(init=False)
    edited: dict[str, None] = field(default_factory=dict)    # edited after the question, unsent
    last_file: str | None = None
    last_ts: float = 0.0
    last_edit: dict[str, float] = field(default_factory=dict)
    question: str | None = None
    hits: list[str] = field(default_factory=list)
    question_files: dict[str, None] = field(default_factory=dict)
    question_ts: float = 0.0

    def __post_init__(self) -> None:
        self.new_window()

    def new_window(self) -> None:
        self.window, self.last_file, self.last_edit = {}, None, {}
        self.learned = _Recent(self.memory_pairs)
        self.counted = _Recent(self.memory_files)
        self.seen_transitions = _Recent(self.memory_pairs)


class SessionTracker:
    """In-memory state of open editing sessions; learning happens in the two sinks."""

    def __init__(self, on_batch: Callable[[Batch], None], on_question: Callable[[Question], None],
                 clock: Callable[[], float] = time.time, memory_pairs: int = SESSION_MEMORY_PAIRS,
                 memory_files: int = SESSION_MEMORY_FILES) -> None:
        self.on_batch = on_batch
        self.on_question = on_question
        self.clock = clock
        self.memory_pairs, self.memory_files = memory_pairs, memory_files
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
            self._close_idle(now, keep=session)
            if kind == "session_start":
                self._close(session)
                s = self._sessions[session] = self._new_session(now)
                if query and query.strip():
                    self._ask(session, s, query.strip(), [], now)
                return
            if kind == "session_end":
                self._close(session)
                return
            s = self._sessions.get(session)
            if s is None:
                s = self._sessions[session] = self._new_session(now)
            elif s.window and now - s.last_ts > config.SESSION_IDLE_SECONDS:
                self._flush(session, s)
                s.new_window()
            self._touch(session, s, kind, file, now)

    def question(self, session: str, query: str, hits: list[str], ts: float | None = None) -> None:
        """A question asked in `session`; the files edited after it are what it led to."""
        now = self.clock() if ts is None else float(ts)
        with self._lock:
            s = self._sessions.get(session)
            if s is None:
                s = self._sessions[session] = self._new_session(now)
            elif s.question == query and not s.hits:
                s.hits = list(hits)  # hits for the question the session started with
                return
            self._ask(session, s, query, hits, now)

    def flush(self, session: str | None = None) -> None:
        """Learn what is pending now (all sessions when `session` is None); windows stay open."""
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
    def _new_session(self, now: float) -> _Session:
        return _Session(self.memory_pairs, self.memory_files, last_ts=now)

    def _ask(self, session: str, s: _Session, query: str, hits: list[str], now: float) -> None:
        self._flush(session, s)  # edits before the question were not led by it
        self._emit_question(session, s)
        s.question, s.hits, s.question_files, s.question_ts = query, list(hits), {}, now

    def _touch(self, session: str, s: _Session, kind: str, file: str, now: float) -> None:
        edit = kind in ("edit", "save")
        if (edit and file == s.last_file and file in s.last_edit
                and now - s.last_edit[file] < config.EDIT_DEBOUNCE_SECONDS):
            s.last_edit[file] = now  # a burst of keystrokes on one file is one event
            s.last_ts = now
            return
        if file not in s.window and len(s.window) >= config.SESSION_MAX_BATCH_FILES:
            self._flush(session, s)  # learn the full window before its oldest file leaves
            oldest = next(iter(s.window))
            del s.window[oldest]
            s.last_edit.pop(oldest, None)   # only the window's files are ever debounced
        if s.last_file is not None and file != s.last_file:
            pair = (s.last_file, file)
            if not s.seen_transitions.seen(pair):
                s.transitions[pair] = None
        s.window[file] = None
        s.pending = True
        if edit:
            s.last_edit[file] = now
            if (s.question is not None and file not in s.question_files
                    and len(s.question_files) < s.memory_files):   # the first files it led to
                s.question_files[file] = None
                s.edited[file] = None
        s.last_file, s.last_ts = file, now

    def _flush(self, session: str, s: _Session) -> None:
        if not s.pending:
            return
        files = sorted(s.window)
        pairs = s.learned.unseen([(a, b) for i, a in enumerate(files) for b in files[i + 1:]])
        batch = Batch(session, pairs, s.counted.unseen(s.window),
                      list(s.transitions), list(s.edited), s.last_ts, s.question, list(s.hits))
        s.learned.update(pairs)
        s.counted.update(batch.touched)
        s.seen_transitions.update(s.transitions)
        s.transitions, s.edited, s.pending = {}, {}, False
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

    def _close_idle(self, now: float, keep: str) -> None:
        for name, s in list(self._sessions.items()):
            if name != keep and now - s.last_ts > config.SESSION_IDLE_SECONDS:
                self._close(name)
