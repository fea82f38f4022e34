"""Running git for freshness: HEAD, the change set, the files two commits differ in.

Every function here answers None (or an empty list) instead of raising when git is
missing, the folder is no repository, or the repository has no commit yet: freshness
describes an answer, it never refuses one. Paths are relative to the workspace root,
which may lie below the repository's top level (only the files under it count).

The git dir is found by reading `.git` (a folder, or a `gitdir:` file in a linked
worktree or submodule) without running git, so the HEAD watcher can poll it cheaply.
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

log = logging.getLogger("neuralmind.repo")

# Variables that would point git at another repository than the one under `cwd` (a hook
# or an outer test runner may export them).
LOCATION_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                 "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX")
TIMEOUT_SECONDS = 30.0


def git_env() -> dict[str, str]:
    """The environment for git: this process's, without location variables, C locale,
    never prompting."""
    env = {k: v for k, v in os.environ.items() if k not in LOCATION_VARS}
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def run_git(root: Path, *args: str) -> str | None:
    """git's stdout for `args` run in `root`, or None when it failed (logged at debug)."""
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              env=git_env(), timeout=TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        log.debug("git %s in %s: %s", args[0], root, e)
        return None
    if proc.returncode != 0:
        log.debug("git %s in %s: %s", args[0], root,
                  proc.stderr.decode("utf-8", "replace").strip()[:200])
        return None
    return proc.stdout.decode("utf-8", "replace")


def git_dir(root: Path) -> Path | None:
    """`.git` of `root`, following the `gitdir:` file of worktrees and submodules."""
    dot = Path(root) / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        try:
            text = dot.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if text.startswith("gitdir:"):
            target = Path(text[len("gitdir:"):].strip())
            target = target if target.is_absolute() else (Path(root) / target)
            return target.resolve() if target.is_dir() else None
    return None


def common_dir(gdir: Path) -> Path:
    """The git dir holding refs, config and objects: a linked worktree's `commondir`."""
    common = gdir / "commondir"
    if common.is_file():
        try:
            target = Path(common.read_text(encoding="utf-8").strip())
            return (target if target.is_absolute() else gdir / target).resolve()
        except OSError:
            pass
    return gdir


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def head_signature(gdir: Path) -> tuple[str, int, int, int]:
    """Changes whenever HEAD or the branch it names moves."""
    head = gdir / "HEAD"
    try:
        text = head.read_text(encoding="utf-8").strip()
    except OSError:
        return ("", 0, 0, 0)
    common = common_dir(gdir)
    ref_mtime = 0
    if text.startswith("ref:"):
        ref = text[4:].strip()
        ref_mtime = _mtime(gdir / ref) or _mtime(common / ref)
    return (text, _mtime(head), ref_mtime, _mtime(common / "packed-refs"))


def head_commit(root: Path) -> str | None:
    """The commit HEAD points at, None outside git or before the first commit."""
    out = run_git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    return out.strip() or None if out else None


def current_branch(root: Path) -> str | None:
    """The checked-out branch, None when HEAD is detached or outside git."""
    out = run_git(root, "symbolic-ref", "--quiet", "--short", "HEAD")
    return out.strip() or None if out else None


def _prefix(root: Path) -> str | None:
    """The root's path below the repository's top level ('' or 'sub/dir/')."""
    out = run_git(root, "rev-parse", "--show-prefix")
    return None if out is None else out.strip()


def _under(paths: list[str], prefix: str) -> list[str]:
    return sorted({p[len(prefix):] for p in paths if p.startswith(prefix) and p != prefix})


def changed_files(root: Path) -> list[str] | None:
    """Files under `root` that differ from HEAD in the work tree or the index: modified,
    added, deleted, and untracked files git does not ignore (None outside git).

    Before the first commit every file not ignored counts as changed."""
    prefix = _prefix(root)
    if prefix is None:
        return None
    out = run_git(root, "-c", "core.quotepath=off", "status", "--porcelain=v1", "-z",
                  "--untracked-files=all", "--no-renames", "--", ".")
    if out is None:
        return None
    paths = [entry[3:] for entry in out.split("\0") if len(entry) > 3]
    return _under(paths, prefix)


def diff_names(root: Path, old: str, new: str) -> list[str] | None:
    """Files under `root` that differ between commits `old` and `new` (both sides of a
    rename), None when git cannot compare them (an unknown or pruned commit)."""
    prefix = _prefix(root)
    if prefix is None:
        return None
    out = run_git(root, "-c", "core.quotepath=off", "diff", "--name-only", "-z", "--no-renames",
                  old, new, "--", ".")
    if out is None:
        return None
    return _under([p for p in out.split("\0") if p], prefix)
