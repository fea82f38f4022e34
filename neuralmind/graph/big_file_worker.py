"""Big files are extracted in a worker process, so a save never stalls the server.

tree-sitter holds the GIL for a whole parse from bytes or query (Django's 370 KB
admin_views/tests.py: ~60 ms of parse, 16-24 ms of captures), and py-tree-sitter 0.26.1
keeps every chunk a read callback returns (the file's size per save, for good). So a
long-lived process (the language server's saves) hands files over CHUNKED_PARSE_OVER to
one worker: a fresh interpreter (a subprocess, like a spawn context: no fork of a threaded
server, no re-import of the caller's __main__) started at the first big file (or at a
server's warm-up, `keep_ready`, and then kept), reused across saves, stopped after
BIG_FILE_WORKER_IDLE_SECONDS unused (unless kept), recycled after
WORKER_MAX_TASKS or past WORKER_MAX_RSS_MB. It parses from bytes; the extract comes back
in pickled slices (one unpickling of it held the GIL 10-28 ms). It reads until its socket
closes, so it ends with its parent however that ends. If it cannot start or dies, the
file is extracted in-process after one log line: a save is never lost. If it died of a
crash signal, the file crashed the parser and is not retried here: it keeps its file
node alone, with the reason.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import os
import pickle
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from neuralmind.config import BIG_FILE_WORKER_IDLE_SECONDS
from neuralmind.graph import extract as extract_module
from neuralmind.graph.extract import ExtractTimeout, extract_file, failed_extract
from neuralmind.graph.model import FileExtract

log = logging.getLogger("neuralmind.graph")

WORKER_MAX_TASKS = 500        # recycled anyway: whatever a grammar keeps, it gives back
WORKER_MAX_RSS_MB = 200.0     # or sooner if it grows (~40 MB after 120 saves of 370 KB)
_SLICE = 256                  # items per pickled slice: ~0.5 ms of GIL to unpickle
_GRACE_SECONDS = 5.0          # start-up, on top of the extractor's own watchdog
_STOP_WAIT_SECONDS = 0.5      # for a worker to leave after its socket closes, then killed


class WorkerFailed(Exception):
    """The worker could not start, or died before it answered."""


class ParserCrashed(WorkerFailed):
    """The worker died of a crash signal while extracting: the file itself crashes the
    parser, so it is not retried in the server's own process."""


CRASH_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL,
                           signal.SIGFPE})


@dataclasses.dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    conn: Connection
    tasks: int = 0
    rss_mb: float = 0.0


_lock = threading.Lock()       # one extraction at a time; guards everything below
_worker: _Worker | None = None
_starts = 0
_last_used = 0.0
_timer: threading.Timer | None = None
_retry_at = 0.0                # after a failed start, in-process until then (one log line)
_keep = False                  # kept started (`keep_ready`): no idle stop, restarted at recycling


def extract(path: str, data: bytes, language: str) -> FileExtract:
    """`extract_file(path, data, language)`, computed in the worker process."""
    global _last_used
    with _lock:
        fe: FileExtract | None = None
        if _worker is not None or time.monotonic() >= _retry_at:
            try:
                fe = _extract_in_worker(path, data, language)
            except ParserCrashed as e:
                log.warning("%s crashed the parser (%s): only its file node is kept", path, e)
                fe = failed_extract(path, data, language, e)
            except WorkerFailed as e:
                log.warning("big-file worker unavailable (%s): extracting %s in-process",
                            e, path)
        _last_used = time.monotonic()
        if _worker is not None and not _keep:
            _arm_idle_timer(BIG_FILE_WORKER_IDLE_SECONDS)
    return fe if fe is not None else extract_file(path, data, language)


def keep_ready(languages: Iterable[str]) -> None:
    """Start the worker now, load the grammars of `languages` in it, and keep it started
    from then on (a server's warm-up, when its workspace holds files over
    CHUNKED_PARSE_OVER). Why: the save that found no worker paid its start-up and the
    grammar's first load, ~1 s on the Linux kernel's first save of a big file, and one idle
    minute stopped it again, so a developer's first save after a pause paid it again. The
    worker (~40 MB, its own process) is then recycled as before but started again at once,
    stopped only by `shutdown`. If it cannot start, saves extract in-process as before."""
    global _keep, _last_used
    with _lock:
        _keep = True
        timer = _timer
        if timer is not None:
            timer.cancel()
        for language in sorted(set(languages)):
            try:
                _extract_in_worker("warm-up", b"", language)
            except WorkerFailed as e:
                log.info("big-file worker not started ahead (%s)", e)
                return
        _last_used = time.monotonic()


def stats() -> dict[str, Any]:
    """The worker now: pid (None when stopped), extractions done, RSS, starts so far."""
    w = _worker
    return {"pid": w.process.pid if w else None, "tasks": w.tasks if w else 0,
            "rss_mb": round(w.rss_mb, 1) if w else 0.0, "starts": _starts}


def shutdown() -> None:
    """Stop the worker now, never waiting on an extraction (server exit; safe from an event
    loop); the next big file starts a new one."""
    global _timer, _retry_at, _keep
    _keep = False
    timer, _timer = _timer, None
    if timer is not None:
        timer.cancel()
    _retry_at = 0.0
    if _lock.acquire(blocking=False):
        try:
            _stop(kill=True)
        finally:
            _lock.release()
        return
    w = _worker        # mid-extraction: killing it makes that extraction fall back at once
    if w is not None and w.process.poll() is None:
        w.process.kill()


# --- parent side -----------------------------------------------------------------------------


def _extract_in_worker(path: str, data: bytes, language: str) -> FileExtract:
    w = _worker if _worker is not None and _worker.process.poll() is None else _start()
    timeout = extract_module.EXTRACT_TIMEOUT_SECONDS     # the worker applies the same
    try:
        w.conn.send((path, data, language, timeout))
        if not w.conn.poll(timeout + _GRACE_SECONDS):
            # a parse from bytes has no watchdog: give up as the in-process one would
            _stop(kill=True)
            return failed_extract(path, data, language, ExtractTimeout(
                f"extraction took over {timeout:g} s"))
        head, slices, rss_mb = w.conn.recv()
    except (OSError, EOFError, pickle.UnpicklingError) as e:
        try:
            code: int | None = w.process.wait(timeout=1.0)   # EOF can come before the exit
        except subprocess.TimeoutExpired:
            code = None
        _stop()
        if code is not None and -code in CRASH_SIGNALS:
            raise ParserCrashed(f"signal {signal.Signals(-code).name}") from e
        raise WorkerFailed(f"it exited with {code}" if code is not None
                           else f"{type(e).__name__}: {e}") from e
    fe: FileExtract = pickle.loads(head)
    for name, blob in slices:      # the GIL comes free between two slices
        getattr(fe, name).extend(pickle.loads(blob))
    w.tasks += 1
    w.rss_mb = rss_mb
    if w.tasks >= WORKER_MAX_TASKS or rss_mb > WORKER_MAX_RSS_MB:
        log.info("recycling the big-file worker after %d extractions (%.0f MB)", w.tasks, rss_mb)
        _stop()
        if _keep:
            with contextlib.suppress(WorkerFailed):   # the next big file starts one then
                _start()
    return fe


def _start() -> _Worker:
    global _worker, _starts, _retry_at
    _stop()
    mine, theirs = socket.socketpair()
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])    # this very neuralmind
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    try:
        with theirs:
            process = subprocess.Popen(
                [sys.executable, "-m", "neuralmind.graph.big_file_worker", str(theirs.fileno())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env,
                pass_fds=(theirs.fileno(),))
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        mine.close()
        _retry_at = time.monotonic() + BIG_FILE_WORKER_IDLE_SECONDS
        raise WorkerFailed(f"cannot start it: {e}") from e
    _starts += 1
    _worker = _Worker(process, Connection(mine.detach()))
    log.debug("big-file worker started (pid %d)", process.pid)
    return _worker


def _stop(kill: bool = False) -> None:
    """Close the worker's socket (it leaves at once when idle), reap it, kill if slow."""
    global _worker
    w = _worker
    if w is None:
        return
    try:
        w.conn.close()
        if kill:
            w.process.kill()
        try:
            w.process.wait(_STOP_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            w.process.kill()
            w.process.wait()
    finally:
        _worker = None


def _arm_idle_timer(delay: float) -> None:
    global _timer
    if _timer is not None and _timer.is_alive():
        return
    _timer = threading.Timer(delay, _stop_if_idle)
    _timer.daemon = True        # never holds up the interpreter's exit
    _timer.name = "neuralmind-big-file-idle"
    _timer.start()


def _stop_if_idle() -> None:
    global _timer
    with _lock:
        if _timer is not threading.current_thread():
            return                                   # shut down, or superseded
        _timer = None
        idle = time.monotonic() - _last_used
        if _worker is None or _keep:
            return
        if idle >= BIG_FILE_WORKER_IDLE_SECONDS:
            log.debug("big-file worker idle for %.0f s: stopping it", idle)
            _stop()
        else:
            _arm_idle_timer(BIG_FILE_WORKER_IDLE_SECONDS - idle)


atexit.register(shutdown)


# --- worker side -----------------------------------------------------------------------------


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):       # not Linux: the peak instead
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pack(fe: FileExtract) -> tuple[bytes, list[tuple[str, bytes]]]:
    head = pickle.dumps(dataclasses.replace(fe, nodes=[], edges=[], references=[]),
                        pickle.HIGHEST_PROTOCOL)
    slices = [(name, pickle.dumps(items[i:i + _SLICE], pickle.HIGHEST_PROTOCOL))
              for name, items in (("nodes", fe.nodes), ("edges", fe.edges),
                                  ("references", fe.references))
              for i in range(0, len(items), _SLICE)]
    return head, slices


def serve(fd: int) -> None:
    """Extract what arrives on socket `fd` until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # a terminal's Ctrl-C is the parent's
    conn = Connection(fd)
    while True:
        try:
            path, data, language, timeout = conn.recv()
        except (EOFError, OSError):
            return
        extract_module.EXTRACT_TIMEOUT_SECONDS = timeout
        fe = extract_file(path, data, language, one_call=True)
        try:
            conn.send((*_pack(fe), _rss_mb()))
        except OSError:
            return


if __name__ == "__main__":
    serve(int(sys.argv[1]))
