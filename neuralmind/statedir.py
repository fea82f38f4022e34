"""The per-project state folder `<root>/.neuralmind/` and safe ways to write into it.

Every file the engine writes is replaced atomically (temp file + fsync + rename),
so a process killed at any moment leaves the previous version readable. Damaged
files are moved aside, never deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

log = logging.getLogger("neuralmind.state")

STATE_DIR_NAME = ".neuralmind"


def state_dir(root: Path, create: bool = True) -> Path:
    """`<root>/.neuralmind`, created on demand (with a .gitignore so it is never committed)."""
    d = Path(root) / STATE_DIR_NAME
    if create and not d.is_dir():
        d.mkdir(parents=True, exist_ok=True)
        (d / ".gitignore").write_text("*\n", encoding="utf-8")
    return d


@contextlib.contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """A file to write `path` through: readers see either the old or the new file, never a
    mix (temporary file beside it, fsync, rename; removed if the writing fails)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def sweep_stale_temps(directory: Path, older_than: float) -> int:
    """Remove the temporary files of writes a killed process left behind (`.NAME.*.tmp`, not
    touched for `older_than` seconds: a write in progress keeps its file fresh); how many.
    Without this, each kill mid-write leaves a copy of e.g. a 15 MB keyword index for good."""
    cutoff = time.time() - older_than
    removed = 0
    for tmp in directory.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            if tmp.is_file() and tmp.stat().st_mtime < cutoff:
                tmp.unlink()
                removed += 1
    if removed:
        log.info("removed %d temporary file(s) left by interrupted writes in %s", removed, directory)
    return removed


def file_stamp(path: Path) -> tuple[int, int, int, int] | None:
    """The file's identity (device, inode, mtime, size); None when absent. A file written
    through `atomic_writer` is a new inode each time, so an equal stamp is the same bytes."""
    try:
        return stat_stamp(os.stat(path))
    except OSError:
        return None


def stat_stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so readers see either the old or the new file, never a mix."""
    with atomic_writer(path) as f:
        f.write(data)


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def read_json(path: Path) -> Any:
    """The JSON document at `path`, or None when it is missing or unreadable (a small
    state file the caller can always recompute)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def move_aside(path: Path, reason: str) -> Path | None:
    """Rename a damaged file to `<name>.corrupt-<timestamp>` and say so; never delete it."""
    if not path.exists():
        return None
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    try:
        os.replace(path, target)
    except OSError as e:  # a read-only folder: leave the file for `neuralmind doctor` to report
        log.warning("%s is damaged (%s) but could not be moved aside: %s", path, reason, e)
        return None
    log.warning("%s is damaged (%s); moved aside to %s", path, reason, target.name)
    return target


@contextlib.contextmanager
def exclusive_lock(path: Path, timeout: float = 600.0) -> Iterator[None]:
    """Inter-process lock: one index writer per workspace at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"another NeuralMind process holds {path}") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
