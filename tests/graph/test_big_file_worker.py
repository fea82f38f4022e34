"""Big files are extracted in a worker process: same extract, no leak, never a lost save."""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuralmind.config import WorkspaceConfig
from neuralmind.graph import big_file_worker, extract
from neuralmind.graph.build import GraphBuilder
from neuralmind.graph.extract import CHUNKED_PARSE_OVER, extract_file
from neuralmind.graph.model import FileExtract


def big_python(size: int, tag: str = "") -> bytes:
    """A module over `size` bytes with imports, classes, methods, docstrings and calls."""
    parts = [b'"""Generated module."""\nimport os\nfrom collections import OrderedDict as OD\n']
    i = 0
    while sum(map(len, parts)) < size:
        parts.append(
            b'class Model%d(Base%d):\n    """Model number %d."""\n\n'
            b"    def save(self, value):\n        # keep it\n"
            b"        helper_%d(value)\n        return self.clean(os.path.join(value, 'x'))\n\n"
            b"    def clean(self, value):\n        return OD(value=value)\n\n\n"
            b"def helper_%d(value):\n    return Model%d().save(value) if value else None\n\n\n"
            % (i, i % 7, i, i, i, i))
        i += 1
    parts.append(b"def tail%s():\n    return 1\n" % tag.encode())
    return b"".join(parts)


@pytest.fixture(autouse=True)
def fresh_worker() -> Iterator[None]:
    big_file_worker.shutdown()
    yield
    big_file_worker.shutdown()


def gone(pid: int) -> bool:
    """No such process: exited and reaped (not a zombie of ours)."""
    return not Path(f"/proc/{pid}").exists()


def test_worker_extract_equals_in_process_extract() -> None:
    data = big_python(200_000)
    assert len(data) > CHUNKED_PARSE_OVER
    in_process = extract_file("pkg/big.py", data, "python")   # the chunked parse
    assert len(in_process.nodes) > 1000 and in_process.references and in_process.edges
    remote = big_file_worker.extract("pkg/big.py", data, "python")
    assert big_file_worker.stats()["tasks"] == 1, "not extracted in the worker"
    assert big_file_worker.stats()["pid"] != os.getpid()
    assert remote == in_process
    assert remote.nodes[0].docstring == "Generated module."


def test_saving_a_big_file_goes_through_the_worker(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_bytes(big_python(150_000))
    (tmp_path / "small.py").write_text("from big import helper_1\n\ndef f():\n    helper_1(2)\n")
    builder = GraphBuilder(tmp_path, WorkspaceConfig())
    builder.build()
    assert big_file_worker.stats()["tasks"] == 1       # the full build's one big file
    pid = big_file_worker.stats()["pid"]
    (tmp_path / "big.py").write_bytes(big_python(150_000, tag="_saved"))
    report = builder.build(changed=["big.py"])
    assert report.reextracted == ["big.py"]
    assert "big.py::tail_saved" in report.graph.nodes
    assert big_file_worker.stats()["tasks"] == 2
    assert big_file_worker.stats()["pid"] == pid, "a save paid for a new process"
    small = "small.py::f"
    assert any(e.source == small and e.target == "big.py::helper_1"
               for e in report.graph.edges), "cross-file resolution lost"


def extract_while_signalled(data: bytes, signum: int, caplog: pytest.LogCaptureFixture
                            ) -> tuple[FileExtract, int]:
    """Extract `data` in a warm worker that receives `signum` 50 ms into the work."""
    big_file_worker.extract("warm.py", big_python(140_000), "python")
    pid = big_file_worker.stats()["pid"]
    assert pid is not None
    sender = threading.Timer(0.05, os.kill, (pid, signum))
    sender.start()
    with caplog.at_level(logging.WARNING, logger="neuralmind.graph"):
        fe = big_file_worker.extract("big.py", data, "python")
    sender.join()
    return fe, pid


def test_a_worker_killed_mid_extraction_falls_back_in_process(
        caplog: pytest.LogCaptureFixture) -> None:
    data = big_python(900_000)            # long enough (~0.3-1 s) to be killed while at it
    fe, pid = extract_while_signalled(data, signal.SIGKILL, caplog)
    assert fe == extract_file("big.py", data, "python") and not fe.error
    assert [r.message for r in caplog.records if "big-file worker" in r.message], caplog.text
    assert big_file_worker.stats()["pid"] is None
    assert gone(pid)
    big_file_worker.extract("again.py", big_python(140_000), "python")
    assert big_file_worker.stats()["starts"] >= 2    # the next big file starts a new worker


def test_a_file_that_crashes_the_worker_is_not_retried_in_process(
        caplog: pytest.LogCaptureFixture) -> None:
    """A crash signal mid-extraction means the file crashes the parser: retrying it here
    would take the server down, so it keeps its file node alone, with the reason."""
    fe, pid = extract_while_signalled(big_python(900_000), signal.SIGSEGV, caplog)
    assert fe.error.startswith("ParserCrashed") and "SIGSEGV" in fe.error, fe.error
    assert [n.kind for n in fe.nodes] == ["file"]
    assert "crashed the parser" in caplog.text
    assert gone(pid)
    assert not big_file_worker.extract("again.py", big_python(140_000), "python").error


def test_a_worker_that_cannot_start_falls_back_in_process(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python3")
    data = big_python(140_000)
    with caplog.at_level(logging.WARNING, logger="neuralmind.graph"):
        fe = big_file_worker.extract("big.py", data, "python")
    assert fe == extract_file("big.py", data, "python")
    assert "cannot start" in caplog.text
    assert big_file_worker.stats()["pid"] is None
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="neuralmind.graph"):   # not at every save
        assert big_file_worker.extract("big.py", data, "python") == fe
    assert not caplog.records


def test_an_overdue_worker_gives_the_file_up_like_the_watchdog(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract, "EXTRACT_TIMEOUT_SECONDS", 0.0)
    monkeypatch.setattr(big_file_worker, "_GRACE_SECONDS", 0.0)
    fe = big_file_worker.extract("big.py", big_python(140_000), "python")
    assert fe.error.startswith("ExtractTimeout") and [n.kind for n in fe.nodes] == ["file"]
    assert big_file_worker.stats()["pid"] is None       # stopped, not left parsing


def test_an_idle_worker_stops_and_leaves_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(big_file_worker, "BIG_FILE_WORKER_IDLE_SECONDS", 0.3)
    big_file_worker.extract("big.py", big_python(140_000), "python")
    pid = big_file_worker.stats()["pid"]
    assert pid is not None and not gone(pid)
    deadline = time.monotonic() + 10
    while big_file_worker.stats()["pid"] is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert big_file_worker.stats()["pid"] is None
    assert gone(pid)


def test_a_kept_worker_is_started_ahead_and_outlives_idling(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A server holding big files starts the worker at warm-up (grammar loaded), so no save
    pays its start-up, and keeps it through idle time; `shutdown` still stops it."""
    monkeypatch.setattr(big_file_worker, "BIG_FILE_WORKER_IDLE_SECONDS", 0.3)
    starts = big_file_worker.stats()["starts"]
    big_file_worker.keep_ready(["python", "c"])
    stats = big_file_worker.stats()
    pid = stats["pid"]
    assert pid is not None and not gone(pid) and stats["starts"] == starts + 1
    assert stats["tasks"] == 2, "one grammar load per language"
    time.sleep(1.0)                                    # past the idle limit
    data = big_python(140_000)
    assert big_file_worker.extract("big.py", data, "python") == extract_file("big.py", data,
                                                                             "python")
    time.sleep(1.0)
    assert big_file_worker.stats()["pid"] == pid
    assert big_file_worker.stats()["starts"] == starts + 1
    big_file_worker.shutdown()
    assert gone(pid)
    big_file_worker.extract("big.py", data, "python")   # no longer kept: idles out again
    deadline = time.monotonic() + 10
    while big_file_worker.stats()["pid"] is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert big_file_worker.stats()["pid"] is None


def test_a_kept_worker_is_restarted_when_recycled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(big_file_worker, "WORKER_MAX_TASKS", 2)
    starts = big_file_worker.stats()["starts"]
    big_file_worker.keep_ready(["python"])
    first = big_file_worker.stats()["pid"]
    big_file_worker.extract("big.py", big_python(140_000), "python")     # the second task
    second = big_file_worker.stats()["pid"]
    assert second is not None and second != first and gone(first)
    assert big_file_worker.stats()["starts"] == starts + 2


def test_warm_up_starts_the_worker_only_for_big_files(tmp_path: Path) -> None:
    from neuralmind.engine.workspace import Workspace

    (tmp_path / "small.py").write_text("def f():\n    return 1\n")
    ws = Workspace(tmp_path, WorkspaceConfig())
    ws.build(embed=False)
    ws.warm_up()
    assert big_file_worker.stats()["pid"] is None, "no big file: no worker"
    (tmp_path / "big.py").write_bytes(big_python(150_000))
    ws.build(embed=False)
    ws = Workspace.open_for_serving(tmp_path, WorkspaceConfig())
    ws.warm_up()
    assert big_file_worker.stats()["pid"] is not None
    assert ws.index._bm25._base_num is not None, "the keyword base numbered at warm-up"
    starts = big_file_worker.stats()["starts"]
    (tmp_path / "big.py").write_bytes(big_python(150_000, tag="_saved"))
    ws.update_files(["big.py"])
    assert "big.py::tail_saved" in ws.graph.nodes
    assert big_file_worker.stats()["starts"] == starts, "the save started a worker"


def test_shutdown_stops_the_worker_at_once() -> None:
    big_file_worker.extract("big.py", big_python(140_000), "python")
    pid = big_file_worker.stats()["pid"]
    assert pid is not None
    t0 = time.monotonic()
    big_file_worker.shutdown()
    assert time.monotonic() - t0 < 1.0
    assert gone(pid)


def test_big_extractions_hold_no_memory_in_this_process() -> None:
    """py-tree-sitter 0.26.1 keeps every read-callback chunk; the worker parses from bytes,
    and whatever it kept would be in its memory, not ours."""
    data = big_python(150_000)
    first = big_file_worker.extract("big.py", data, "python")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(5):
            fe = big_file_worker.extract("big.py", data, "python")
            assert [n.id for n in fe.nodes] == [n.id for n in first.nodes]
            del fe
        gc.collect()
        held_worker = tracemalloc.get_traced_memory()[0] - before
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2):        # control: the in-process chunked parse does keep them
            fe = extract_file("big.py", data, "python")
            del fe
        gc.collect()
        held_chunked = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held_chunked > len(data), "the measurement no longer sees the chunk leak"
    assert held_worker < 200_000, f"5 worker extractions kept {held_worker:,} bytes"


def test_the_worker_ends_with_its_parent_however_that_ends() -> None:
    """A server killed outright (no atexit, no shutdown) leaves no worker behind."""
    import subprocess

    script = ("import sys, time\n"
              "from neuralmind.graph import big_file_worker\n"
              "data = b'def f(x):\\n    return g(x)\\n' * 6000\n"
              "big_file_worker.extract('big.py', data, 'python')\n"
              "print(big_file_worker.stats()['pid'], flush=True)\n"
              "time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        assert running(pid)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 5
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not running(pid), "the worker outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for init to reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] not in "ZX"
    except OSError:
        return False
