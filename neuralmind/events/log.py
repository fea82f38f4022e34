"""The cross-process bridge: `.neuralmind/events.jsonl`, appended by every process, tailed
by the one serving the observatory.

Best effort, never a queue: an event that cannot be written is dropped (logged once),
a missing file or folder is recreated at the next event, a truncated one is read
from its start, and the file is rotated to `events.jsonl.1` past EVENT_LOG_MAX_BYTES.
Appends (from a writer thread: publishers never wait for the disk) take an exclusive
`flock` on the file and re-check after locking that the
path still names the file they hold (another process may have rotated or removed
it), so lines from concurrent processes never interleave or land in a rotated file.
`NEURALMIND_EVENT_LOG=0` turns the writer off (the in-process bus is unaffected).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import fcntl
import json
import logging
import os
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

from neuralmind.config import (
    EVENT_LOG_MAX_BYTES,
    EVENT_LOG_MAX_QUEUED,
    EVENT_SEEN_IDS,
    EVENT_TAIL_INTERVAL_SECONDS,
    EVENT_TAIL_MAX_READ,
)
from neuralmind.events.event_bus import Event, EventBus, bus
from neuralmind.statedir import state_dir

log = logging.getLogger("neuralmind.events")

LOG_NAME = "events.jsonl"
ENV_SWITCH = "NEURALMIND_EVENT_LOG"
ATTEMPTS = 3          # re-opens after finding the file rotated or removed under us
WRITER_IDLE_SECONDS = 5.0   # a writer thread with nothing to write for this long ends
MARK_BYTES = 64       # what the tailer re-reads before its offset to notice a rewritten file


def log_path(root: Path) -> Path:
    return Path(root) / ".neuralmind" / LOG_NAME


def rotated_path(path: Path) -> Path:
    return path.with_name(path.name + ".1")


def writer_enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "off", "no")


_WRITERS: weakref.WeakSet[EventLogWriter] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for writer in list(_WRITERS):
        writer.flush()


def flush_event_log(timeout: float = 0.5, target: EventBus = bus) -> None:
    """Write what this process queued (servers call it when they close: they leave with
    os._exit, which skips the interpreter's exit handlers)."""
    writer = target.writer
    if isinstance(writer, EventLogWriter):
        writer.flush(timeout)


def enable_event_log(root: Path, label: str | None = None, target: EventBus = bus) -> bool:
    """Make this process append its events to `root`'s log (unless NEURALMIND_EVENT_LOG=0);
    `label` names the process in the events. True when the writer is on."""
    if label:
        target.set_label(label)
    if not writer_enabled():
        target.set_writer(None)
        return False
    current = target.writer
    if isinstance(current, EventLogWriter) and current.root == Path(root).resolve():
        return True
    target.set_writer(EventLogWriter(root))
    return True


class EventLogWriter:
    """Appends events as JSON lines from a thread of its own.

    A publisher (the editor's event loop among them) only encodes the line and queues it:
    a busy disk or the lock held by another process never stalls it (an append on the loop
    was measured holding it 25 ms at load 13). Lines queued together are written in one
    append; at most EVENT_LOG_MAX_QUEUED wait (the oldest go first). `flush` waits for the
    queue to drain; it runs at interpreter exit, and servers call it when they close.
    """

    def __init__(self, root: Path, max_bytes: int = EVENT_LOG_MAX_BYTES) -> None:
        self.root = Path(root).resolve()
        self.path = log_path(self.root)
        self.max_bytes = max_bytes
        self._fd: int | None = None
        self._queue: collections.deque[bytes] = collections.deque(maxlen=EVENT_LOG_MAX_QUEUED)
        self._cond = threading.Condition()
        self._busy = False                 # a batch is being written
        self._thread: threading.Thread | None = None
        self._warned = False
        self.written = 0
        self.dropped = 0
        _WRITERS.add(self)

    def append(self, event: Event) -> None:
        line = (json.dumps(event.to_json(), ensure_ascii=False, separators=(",", ":"),
                           default=str) + "\n").encode("utf-8")
        with self._cond:
            if len(self._queue) == self._queue.maxlen:
                self.dropped += 1
            self._queue.append(line)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="neuralmind-event-log",
                                                daemon=True)
                self._thread.start()
            self._cond.notify()

    def flush(self, timeout: float = 1.0) -> bool:
        """Wait until every queued event is written (or dropped); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._queue or self._busy:
                left = deadline - time.monotonic()
                if left <= 0 or self._thread is None:
                    return not (self._queue or self._busy)
                self._cond.wait(left)
        return True

    def close(self) -> None:
        self.flush()
        self._close()

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._queue:
                    self._cond.wait(WRITER_IDLE_SECONDS)
                if not self._queue:            # idle: the thread ends; append starts another
                    self._thread = None
                    return
                count = len(self._queue)
                batch = b"".join(self._queue)
                self._queue.clear()
                self._busy = True
            try:
                self._append(batch)
                self.written += count
                self._warned = False
            except Exception as e:     # best effort: the events are dropped, nobody waits
                self._close()
                self.dropped += count
                if not self._warned:
                    self._warned = True
                    log.warning("event log %s not written (%s); events stay in-process",
                                self.path, e)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _append(self, line: bytes) -> None:
        for _ in range(ATTEMPTS):
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                held = os.fstat(fd)
                try:
                    named = os.stat(self.path)
                except FileNotFoundError:
                    named = None
                if named is None or named.st_ino != held.st_ino or named.st_dev != held.st_dev:
                    continue             # rotated or removed by someone else: reopen
                if held.st_size and held.st_size + len(line) > self.max_bytes:
                    os.replace(self.path, rotated_path(self.path))
                    continue             # the next attempt creates a fresh file
                os.write(fd, line)
                return
            finally:
                if self._fd == fd:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    if not _same_file(fd, self.path):
                        self._close()
        raise OSError(f"{self.path} kept changing under the writer")

    def _open(self) -> int:
        if self._fd is None:
            state_dir(self.root)            # recreated (with its .gitignore) if removed
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                               0o600)
        return self._fd

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return a.st_ino == b.st_ino and a.st_dev == b.st_dev


def parse_line(line: bytes) -> Event | None:
    try:
        return Event.from_json(json.loads(line))
    except ValueError:
        return None


class EventLogTailer:
    """Republishes other processes' events from the log into this process's bus.

    Starts at the end of the file (only what happens from now on), polls its size every
    `interval` seconds from a daemon thread, reads complete lines only, and drops this
    process's own events (by id prefix) and ids already seen.
    """

    def __init__(self, root: Path, target: EventBus = bus,
                 interval: float = EVENT_TAIL_INTERVAL_SECONDS) -> None:
        self.path = log_path(Path(root).resolve())
        self.bus = target
        self.interval = interval
        self._ino: int | None = None
        self._offset = 0
        self._mark = b""            # the bytes just before `_offset`: a rewritten file differs
        self._stamp: tuple[int, int, int] | None = None     # (inode, size, mtime) last seen
        self._seen: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.republished = 0

    def start(self) -> None:
        if self._thread is not None:
            return
        with contextlib.suppress(OSError):
            st = os.stat(self.path)
            self._ino, self._offset = st.st_ino, st.st_size
        self._stop = threading.Event()       # a fresh flag: an old thread keeps its own
        self._thread = threading.Thread(target=self._run, args=(self._stop,),
                                        name="neuralmind-event-tail", daemon=True)
        self._thread.start()

    def stop(self, wait: bool = True) -> None:
        """Stop polling; `wait=False` (on an event loop) leaves the thread to end by itself
        within one interval."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if wait and thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)

    def _run(self, stop: threading.Event) -> None:
        while not stop.wait(self.interval):
            try:
                self.poll()
            except Exception:       # the bridge is best effort; the next poll tries again
                log.exception("reading %s failed", self.path)

    def poll(self) -> int:
        """Read what was appended since the last poll; returns the events republished."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._ino, self._offset, self._mark = None, 0, b""
            return 0
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        if stamp == self._stamp:
            return 0                           # the usual poll: one stat, nothing new
        self._stamp = stamp
        count = 0
        if st.st_ino != self._ino:
            if self._ino is not None:          # rotated: finish the old file first
                count += self._read_rotated()
            self._ino, self._offset, self._mark = st.st_ino, 0, b""
        if st.st_size < self._offset or not self._mark_holds():
            # truncated, or removed and recreated (the inode may be reused): start over
            self._offset, self._mark = 0, b""
        if st.st_size > self._offset:
            count += self._read(self.path, st.st_ino)
        return count

    def _mark_holds(self) -> bool:
        """Whether the file still has, just before our offset, what we read there (a file
        truncated and refilled past our offset would not)."""
        if not self._mark:
            return True
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset - len(self._mark))
                return f.read(len(self._mark)) == self._mark
        except OSError:
            return False

    def _read_rotated(self) -> int:
        old = rotated_path(self.path)
        try:
            if os.stat(old).st_ino != self._ino:
                return 0
        except FileNotFoundError:
            return 0
        return self._read(old, self._ino)

    def _read(self, path: Path, ino: int | None) -> int:
        try:
            with open(path, "rb") as f:
                if ino is not None and os.fstat(f.fileno()).st_ino != ino:
                    return 0
                f.seek(self._offset)
                chunk = f.read(EVENT_TAIL_MAX_READ)
        except FileNotFoundError:
            return 0
        end = chunk.rfind(b"\n")
        if end < 0:
            return 0                   # an incomplete line: the rest is still being written
        self._offset += end + 1
        self._mark = chunk[max(0, end + 1 - MARK_BYTES):end + 1]
        count = 0
        for line in chunk[:end].split(b"\n"):
            event = parse_line(line)
            if event is None or self.bus.own(event.id) or event.id in self._seen:
                continue
            self._seen[event.id] = None
            if len(self._seen) > EVENT_SEEN_IDS:
                self._seen.popitem(last=False)
            self.bus.republish(event)
            count += 1
        self.republished += count
        return count


def read_events(root: Path, kinds: frozenset[str] | None = None, limit: int | None = None,
                ) -> list[Event]:
    """Events of the log (the rotated file, then the current one), oldest first: the last
    `limit` of them, of `kinds` when given. Lines of other kinds are skipped before they
    are parsed, and with a limit only the end of the log is read."""
    path = log_path(Path(root).resolve())
    needles = tuple(f'"kind":"{k}"'.encode() for k in sorted(kinds)) if kinds else ()
    found: list[Event] = []
    for p in (path, rotated_path(path)):          # newest first, then reversed
        for line in _lines_backwards(p):
            if needles and not any(n in line for n in needles):
                continue
            event = parse_line(line)
            if event is None or (kinds and event.kind not in kinds):
                continue
            found.append(event)
            if limit is not None and len(found) >= limit:
                found.reverse()
                return found
    found.reverse()
    return found


def _lines_backwards(path: Path, block: int = 64 * 1024) -> Iterator[bytes]:
    """The complete lines of `path`, last first, read a block at a time from the end."""
    with contextlib.suppress(FileNotFoundError), open(path, "rb") as f:
        pos = os.fstat(f.fileno()).st_size
        rest = b""
        while pos > 0:
            step = min(block, pos)
            pos -= step
            f.seek(pos)
            data = f.read(step) + rest
            lines = data.split(b"\n")
            rest = lines[0]                 # maybe the tail of an earlier line
            for line in reversed(lines[1:]):
                if line:
                    yield line
        if rest:
            yield rest
