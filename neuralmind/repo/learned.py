"""Where the memory learned about a repository lives: one folder per repository identity.

Synapses, decisions and answer use are learned about a repository, not about one
folder: two worktrees of it (or two clones) share them, so they live in
`<data home>/repos/<identity key>/` (data home: `$NEURALMIND_HOME`, else
`$XDG_DATA_HOME/neuralmind`, else `~/.local/share/neuralmind`). The graph and the
search index describe the files of one folder and stay in its `.neuralmind/`.
A folder outside git, or a repository without a commit yet, keeps everything in
its `.neuralmind/` as before.

Each folder records which learned folder it uses (`.neuralmind/learned.json`) with
what it was derived from, so finding it again costs a few `stat` calls and no git
process. When the identity changes (the first commit is made, a remote is added),
what was learned under the old one comes along: files of the folder's own `.neuralmind/`
(memory learned before the repository had a commit) are moved, files of another
repository folder are copied (other worktrees or copies may still use it). Learned
memory is never left behind silently: a file the new folder already has is not
overwritten, and the log names both.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from neuralmind.errors import EngineError
from neuralmind.repo.git import common_dir, git_dir
from neuralmind.repo.identity import RepoIdentity, repo_identity
from neuralmind.statedir import atomic_write_json, exclusive_lock, read_json, state_dir

log = logging.getLogger("neuralmind.repo")

HOME_ENV = "NEURALMIND_HOME"
BINDING_FILE = "learned.json"
REPO_FILE = "repo.json"
# The learned stores (SQLite files; their -wal/-shm move with them). A new learned store
# adds its file name here so it is shared and moved like the others.
LEARNED_FILES = ("synapses.db", "memory.db", "usage.db")
SQLITE_SIDECARS = ("-wal", "-shm")


def data_home() -> Path:
    """The per-user folder holding every repository's learned memory."""
    if os.environ.get(HOME_ENV):
        return Path(os.environ[HOME_ENV]).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "neuralmind"


def _config_stamp(root: Path) -> tuple[str, int] | None:
    """(common git dir, mtime of its config): a remote added or changed rewrites config."""
    gdir = git_dir(root)
    if gdir is None:
        return None
    common = common_dir(gdir)
    try:
        return str(common), (common / "config").stat().st_mtime_ns
    except OSError:
        return str(common), 0


def learned_dir(root: Path) -> Path:
    """The folder of `root`'s learned stores (created): shared by every worktree of its
    repository, or `root/.neuralmind` outside git. Never raises for git or a read-only
    data home: it falls back to the local folder and logs why."""
    root = Path(root).resolve()
    local = state_dir(root, create=False)
    stamp = _config_stamp(root)
    if stamp is None:
        return local
    binding = read_json(local / BINDING_FILE) or {}
    if (binding.get("git") == stamp[0] and binding.get("config_mtime_ns") == stamp[1]
            and binding.get("dir") and Path(binding["dir"]).is_dir()):
        return Path(binding["dir"])
    try:
        identity = repo_identity(root)
    except EngineError as e:
        log.debug("learned memory stays in %s: %s", local, e.message)
        return local
    target = data_home() / "repos" / identity.key
    previous = Path(binding["dir"]) if binding.get("dir") else local
    move = previous.resolve() == local.resolve()
    if move and any((local / n).is_file() for n in LEARNED_FILES) \
            and not os.access(local, os.W_OK):
        log.info("learned memory stays in %s: it cannot be moved out of a read-only folder",
                 local)
        return local
    try:
        target.mkdir(parents=True, exist_ok=True, mode=0o700)
        with exclusive_lock(target / "learned.lock", timeout=30.0):
            _register(target, identity, root)
            if previous.resolve() != target.resolve():
                adopt(previous, target, move=move)
            _write_binding(local, {"dir": str(target), "key": identity.key,
                                   **identity.to_json(), "git": stamp[0],
                                   "config_mtime_ns": stamp[1]})
    except (OSError, TimeoutError, sqlite3.Error) as e:
        log.warning("cannot share learned memory in %s (%s); keeping it in %s", target, e, local)
        return local
    return target


def _register(target: Path, identity: RepoIdentity, root: Path) -> None:
    """List `root` among the worktrees that use the folder (for doctor)."""
    doc: dict[str, Any] = read_json(target / REPO_FILE) or {}
    worktrees = set(doc.get("worktrees") or [])
    if doc.get("identity") != identity.to_json() or str(root) not in worktrees:
        worktrees.add(str(root))
        atomic_write_json(target / REPO_FILE, {"identity": identity.to_json(),
                                               "worktrees": sorted(worktrees)})


def _write_binding(local: Path, doc: dict[str, Any]) -> None:
    try:
        atomic_write_json(state_dir(local.parent) / BINDING_FILE, doc)
    except OSError as e:   # a read-only .neuralmind: found again (with git) next time
        log.debug("cannot record the learned folder in %s: %s", local, e)


def adopt(previous: Path, target: Path, move: bool) -> list[str]:
    """Bring the learned stores of `previous` into `target`; returns the names taken.

    A store is copied with SQLite's backup (a consistent copy even while another process
    writes it); with `move`, the original is then renamed `<name>.moved-<time>` beside
    itself: kept, so nothing is lost if the copy is ever doubted. A store `target`
    already has is left where it is, with a warning naming both."""
    moved: list[str] = []
    for name in LEARNED_FILES:
        src, dst = previous / name, target / name
        if not src.is_file():
            continue
        if dst.exists():
            log.warning("%s was not moved: %s already holds this repository's %s; "
                        "the old file stays where it is", src, target, name)
            continue
        _copy_sqlite(src, dst)
        if move:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            for suffix in ("", *SQLITE_SIDECARS):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(f"{src}{suffix}", f"{src}.moved-{stamp}{suffix}")
        log.info("learned memory %s %s to %s (shared by the repository's worktrees)",
                 src, "moved" if move else "copied", dst)
        moved.append(name)
    return moved


def _copy_sqlite(src: Path, dst: Path) -> None:
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    try:
        copy = sqlite3.connect(tmp)
        try:
            source.backup(copy)
        finally:
            copy.close()
    finally:
        source.close()
    os.replace(tmp, dst)
