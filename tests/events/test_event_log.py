"""The JSON-lines bridge on real files and real processes: appends under a lock from many
processes, rotation, a removed or truncated log, the tailer's dedup, the off switch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from neuralmind.events import Event, EventBus
from neuralmind.events.log import (
    EventLogTailer,
    EventLogWriter,
    enable_event_log,
    log_path,
    read_events,
    rotated_path,
)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_events_are_appended_as_json_lines(tmp_path: Path) -> None:
    bus, writer = EventBus(), EventLogWriter(tmp_path)
    bus.set_writer(writer)
    e = bus.publish("query", question="what <b>?", files=["a.py"], tokens=12)
    assert e is not None and writer.flush()
    rows = lines(log_path(tmp_path))
    assert rows == [e.to_json()]
    assert (tmp_path / ".neuralmind" / ".gitignore").is_file()     # never committed
    assert os.stat(log_path(tmp_path)).st_mode & 0o777 == 0o600


def test_the_tailer_republishes_foreign_events_once_and_never_its_own(tmp_path: Path) -> None:
    mine, theirs = EventBus(), EventBus()
    mine.set_writer(EventLogWriter(tmp_path))
    theirs.set_writer(writer := EventLogWriter(tmp_path))
    seen: list[Event] = []
    mine.subscribe(seen.append)
    tailer = EventLogTailer(tmp_path, mine)
    own = mine.publish("editor", session="s", file="a.py")
    assert mine.writer.flush()  # type: ignore[union-attr]
    foreign = theirs.publish("query", question="q", files=["b.py"])
    assert writer.flush() and mine.writer.flush()  # type: ignore[union-attr]
    assert tailer.poll() == 1
    assert seen == [own, foreign]                    # own: delivered in-process, once
    # the same foreign line again (a re-read after a rotation mix-up) is dropped
    with open(log_path(tmp_path), "ab") as f:
        f.write((json.dumps(foreign.to_json()) + "\n").encode())
    assert tailer.poll() == 0 and len(seen) == 2


def test_a_partial_last_line_waits_for_its_end(tmp_path: Path) -> None:
    bus, other = EventBus(), EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append)
    state = tmp_path / ".neuralmind"
    state.mkdir()
    line = json.dumps(Event(f"{other.process}-1", "query", 1.0, "x", {}).to_json())
    log_path(tmp_path).write_text(line[:10], encoding="utf-8")
    tailer = EventLogTailer(tmp_path, bus)
    assert tailer.poll() == 0
    with open(log_path(tmp_path), "a", encoding="utf-8") as f:
        f.write(line[10:] + "\n")
    assert tailer.poll() == 1 and seen[0].id == f"{other.process}-1"


def test_rotation_at_the_size_cap_loses_nothing_the_tailer_has_not_read(tmp_path: Path) -> None:
    writer_bus, reader_bus = EventBus(), EventBus()
    writer_bus.set_writer(writer := EventLogWriter(tmp_path, max_bytes=2000))
    seen: list[Event] = []
    reader_bus.subscribe(seen.append)
    writer_bus.publish("index", phase="started")
    assert writer.flush()
    tailer = EventLogTailer(tmp_path, reader_bus)
    assert tailer.poll() == 1
    for i in range(20):                              # ~2.5 KB: one rotation
        writer_bus.publish("request", channel="lsp", method=f"m{i}", ms=1.0, ok=True)
        assert writer.flush()                        # one append each (a batch is one write)
    assert rotated_path(log_path(tmp_path)).exists()
    assert log_path(tmp_path).stat().st_size <= 2000
    tailer.poll()
    assert [e.data.get("method") for e in seen[1:]] == [f"m{i}" for i in range(20)]


def test_a_removed_log_or_folder_is_recreated_and_a_truncated_one_read_again(tmp_path: Path) -> None:
    bus, reader = EventBus(), EventBus()
    bus.set_writer(writer := EventLogWriter(tmp_path))
    seen: list[Event] = []
    reader.subscribe(seen.append)
    tailer = EventLogTailer(tmp_path, reader)
    bus.publish("index", phase="a")
    assert writer.flush()
    log_path(tmp_path).unlink()
    bus.publish("index", phase="b")                  # recreated, no error
    assert writer.flush()
    assert [r["data"]["phase"] for r in lines(log_path(tmp_path))] == ["b"]
    assert tailer.poll() == 1
    for p in (tmp_path / ".neuralmind").iterdir():
        p.unlink()
    (tmp_path / ".neuralmind").rmdir()
    bus.publish("index", phase="c")                  # the folder too
    assert writer.flush()
    assert [r["data"]["phase"] for r in lines(log_path(tmp_path))] == ["c"]
    assert tailer.poll() == 1                        # a new file: read from its start
    os.truncate(log_path(tmp_path), 0)
    bus.publish("index", phase="d")
    assert writer.flush()
    tailer.poll()
    assert [e.data["phase"] for e in seen] == ["b", "c", "d"]


def test_an_unwritable_log_drops_events_without_an_error(tmp_path: Path) -> None:
    (tmp_path / ".neuralmind").write_text("not a folder", encoding="utf-8")
    bus, writer = EventBus(), EventLogWriter(tmp_path)
    bus.set_writer(writer)
    assert bus.publish("index", phase="x") is not None   # the caller goes on
    assert writer.flush() and writer.dropped == 1 and writer.written == 0


def test_the_switch_turns_the_writer_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bus = EventBus()
    monkeypatch.setenv("NEURALMIND_EVENT_LOG", "0")
    assert enable_event_log(tmp_path, "cli", bus) is False
    assert bus.writer is None and bus.publish("query") is None
    assert not log_path(tmp_path).exists()
    monkeypatch.setenv("NEURALMIND_EVENT_LOG", "1")
    assert enable_event_log(tmp_path, "cli", bus) is True
    assert bus.publish("query", question="x") is not None
    assert bus.writer.flush() and log_path(tmp_path).exists()  # type: ignore[union-attr]


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from neuralmind.events import EventBus
    from neuralmind.events.log import EventLogWriter
    bus = EventBus()
    bus.set_writer(EventLogWriter(Path(sys.argv[1])))
    for i in range(int(sys.argv[2])):
        bus.publish("request", channel=sys.argv[3], method="m" * 200, n=i)
""")


def test_concurrent_processes_never_interleave_lines(tmp_path: Path) -> None:
    # each process exits right after publishing: the exit handler writes what is queued
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), "400", f"p{k}"])
             for k in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    rows = lines(log_path(tmp_path))                 # every line parses
    assert len(rows) == 1600
    for k in range(4):
        assert [r["data"]["n"] for r in rows if r["data"]["channel"] == f"p{k}"] == list(range(400))


def test_read_events_takes_the_newest_and_filters_kinds(tmp_path: Path) -> None:
    bus, writer = EventBus(), EventLogWriter(tmp_path, max_bytes=3000)
    bus.set_writer(writer)
    for i in range(60):
        bus.publish("query" if i % 3 == 0 else "request", n=i)
        writer.flush()
    newest = read_events(tmp_path, limit=5)
    assert [e.data["n"] for e in newest] == list(range(55, 60))
    queries = read_events(tmp_path, kinds=frozenset({"query"}))
    kept = [e.data["n"] for e in queries]
    assert kept == sorted(kept) and all(n % 3 == 0 for n in kept) and kept[-1] == 57
    assert read_events(tmp_path / "nowhere", limit=3) == []


def test_publishing_never_waits_for_the_disk(tmp_path: Path) -> None:
    """The writer thread takes the lock; a publisher only queues, even while another
    process holds the log's lock."""
    import fcntl

    bus, writer = EventBus(), EventLogWriter(tmp_path)
    bus.set_writer(writer)
    bus.publish("index", phase="first")
    assert writer.flush()
    with open(log_path(tmp_path), "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)              # another process appending, say
        for i in range(100):
            assert bus.publish("request", n=i) is not None
        assert not writer.flush(timeout=0.2)          # still waiting for the lock
        fcntl.flock(held, fcntl.LOCK_UN)
    assert writer.flush()
    assert [r["data"].get("n") for r in lines(log_path(tmp_path))][1:] == list(range(100))
