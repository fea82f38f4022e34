"""A thin wrapper over the `git` command for what decision memory needs.

Every failure (no git binary, not a repository, no commits, a missing object,
a shallow boundary) becomes a `GitError` with a one-line message, so callers
can report it and change nothing instead of showing a traceback.
"""

from __future__ import annotations

import logging
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from neuralmind.errors import CodedError

log = logging.getLogger("neuralmind.memory")

# Variables that would point git at another repository than the one under `cwd`
# (a hook or an outer test runner may export them).
_LOCATION_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                  "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX")
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
TIMEOUT_SECONDS = 30.0


class GitError(CodedError):
    """git could not answer; the message says why in one line."""

    code = "git_error"


@dataclass(frozen=True, slots=True)
class Change:
    """One changed path between two commits; `old_path` differs only for renames/copies."""

    status: str       # A, M, D, R, C, T
    old_path: str     # toplevel-relative
    new_path: str

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.old_path,) if self.old_path == self.new_path else (self.old_path, self.new_path)


@dataclass(frozen=True, slots=True)
class Hunk:
    """One `git diff -U0` hunk: line ranges on the old and the new side (1-based)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LOCATION_VARS}
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


class Git:
    """git as seen from one directory (the project root, possibly below the toplevel)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = Path(cwd)

    def run(self, *args: str, ok_codes: tuple[int, ...] = (0,), text: bool = True,
            stdin: bytes | None = None) -> tuple[int, str | bytes]:
        try:
            proc = subprocess.run(
                ["git", "-C", str(self.cwd), *args], capture_output=True, env=_env(),
                timeout=TIMEOUT_SECONDS, check=False, input=stdin,
            )
        except FileNotFoundError:
            raise GitError("git is not installed (no `git` on PATH)") from None
        except subprocess.TimeoutExpired:
            raise GitError(f"git {args[0]} timed out after {TIMEOUT_SECONDS:.0f} s") from None
        if proc.returncode not in ok_codes:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            msg = err[-1] if err else f"exit code {proc.returncode}"
            if "not a git repository" in msg:
                raise GitError(f"{self.cwd} is not inside a git repository")
            raise GitError(f"git {args[0]} failed: {msg.removeprefix('fatal: ')}")
        out = proc.stdout.decode("utf-8", "replace") if text else proc.stdout
        return proc.returncode, out

    def out(self, *args: str) -> str:
        return str(self.run(*args)[1]).strip()

    # --- repository shape -----------------------------------------------------------------
    def toplevel(self) -> Path:
        return Path(self.out("rev-parse", "--show-toplevel"))

    def prefix(self) -> str:
        """The project's path below the toplevel, '' or 'sub/dir/'."""
        return self.out("rev-parse", "--show-prefix")

    def git_path(self, name: str) -> Path:
        """Where git keeps `name` (e.g. hooks/post-commit), honouring worktrees and core.hooksPath."""
        p = Path(self.out("rev-parse", "--git-path", name))
        return p if p.is_absolute() else self.cwd / p

    def rebase_in_progress(self) -> str | None:
        """The branch being rebased when a rebase (either backend) has stopped or is running,
        '' when its name is unknown; None when no rebase is under way. HEAD is then a
        detached, replayed commit, not a branch someone checked out."""
        for name in ("rebase-merge", "rebase-apply"):
            state = self.git_path(name)
            if state.is_dir() and not (state / "applying").exists():   # "applying": git am
                head_name = state / "head-name"
                ref = head_name.read_text(encoding="utf-8").strip() if head_name.is_file() else ""
                return ref.removeprefix("refs/heads/") if ref != "detached HEAD" else ""
        return None

    def head(self) -> str:
        code, out = self.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok_codes=(0, 1))
        if code != 0:
            self.toplevel()  # raises the clearer "not a repository" when that is the cause
            raise GitError("the repository has no commits yet")
        return str(out).strip()

    def branch(self) -> str | None:
        """The current branch name, or None when HEAD is detached."""
        code, out = self.run("symbolic-ref", "--quiet", "--short", "HEAD", ok_codes=(0, 1))
        return str(out).strip() if code == 0 else None

    def recent_files(self, commits: int) -> list[str]:
        """Project-relative files changed in the working tree or by the last `commits`
        commits, most recent first (the wake-up's "recently edited")."""
        prefix = self.prefix()
        found: list[str] = []
        status = str(self.run("status", "--porcelain", "--no-renames", "-z", ".")[1])
        found += [entry[3:] for entry in status.split("\0") if len(entry) > 3]
        code, log = self.run("log", f"-{max(1, commits)}", "--format=", "--name-only", "--",
                             ".", ok_codes=(0, 128))
        if code == 0:
            found += [line for line in str(log).splitlines() if line.strip()]
        out = []
        for path in found:
            rel = path[len(prefix):] if prefix and path.startswith(prefix) else path
            if rel and rel not in out:
                out.append(rel)
        return out

    def is_shallow(self) -> bool:
        return self.out("rev-parse", "--is-shallow-repository") == "true"

    def resolve(self, rev: str) -> str:
        """Full sha of a commit; GitError when it is not in the repository."""
        code, out = self.run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", ok_codes=(0, 1))
        if code != 0:
            raise GitError(f"commit {rev} is not in this repository")
        return str(out).strip()

    def commit_exists(self, sha: str) -> bool:
        code, _ = self.run("cat-file", "-e", f"{sha}^{{commit}}", ok_codes=(0, 1, 128))
        return code == 0

    def missing_commits(self, shas: list[str]) -> set[str]:
        """Those of `shas` that are not commits in the repository (one git call for all)."""
        unique = sorted(set(shas))
        if not unique:
            return set()
        _, out = self.run("cat-file", "--batch-check=%(objecttype)",
                          stdin="".join(f"{s}\n" for s in unique).encode())
        answers = str(out).splitlines()
        return {s for s, a in zip(unique, answers, strict=False) if a.strip() != "commit"}

    def parents(self, sha: str) -> list[str]:
        """Parents of `sha`; refuses a shallow boundary, whose parents git does not have."""
        header = self.out("cat-file", "commit", sha).split("\n\n", 1)[0]   # reads this commit only
        parents = [ln.split()[1] for ln in header.splitlines() if ln.startswith("parent ")]
        for p in parents:
            if not self.commit_exists(p):
                if self.is_shallow() and sha in self._shallow_boundary():
                    raise GitError(f"shallow clone: the parent of {sha[:12]} was not fetched "
                                   "(run `git fetch --unshallow`)")
                raise GitError(f"missing object: parent commit {p[:12]} of {sha[:12]} is not in the repository")
        return parents

    def _shallow_boundary(self) -> set[str]:
        f = self.git_path("shallow")
        try:
            return set(f.read_text(encoding="utf-8").split())
        except OSError:
            return set()

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        code, _ = self.run("merge-base", "--is-ancestor", ancestor, descendant, ok_codes=(0, 1))
        return code == 0

    def commit_time(self, sha: str) -> int:
        return int(self.out("show", "-s", "--format=%ct", sha))

    # --- content --------------------------------------------------------------------------
    def diff(self, old: str | None, new: str) -> list[Change]:
        """Changed paths from `old` (None: the empty tree) to `new`, renames detected."""
        _, out = self.run("diff", "--no-ext-diff", "--no-textconv", "--name-status", "-M", "-z",
                          old or EMPTY_TREE, new, "--")
        fields = str(out).split("\0")
        changes: list[Change] = []
        i = 0
        while i < len(fields) and fields[i]:
            status = fields[i][0]
            if status in "RC":
                changes.append(Change(status, fields[i + 1], fields[i + 2]))
                i += 3
            else:
                changes.append(Change(status, fields[i + 1], fields[i + 1]))
                i += 2
        return changes

    def hunks(self, old: str, old_path: str, new: str, new_path: str) -> list[Hunk]:
        """`git diff -U0` hunks between `old:old_path` and `new:new_path`."""
        _, out = self.run("diff", "--no-ext-diff", "--no-textconv", "-U0",
                          f"{old}:{old_path}", f"{new}:{new_path}")
        hunks: list[Hunk] = []
        for line in str(out).splitlines():
            if not line.startswith("@@ "):
                continue
            old_part, new_part = line.split(" ")[1:3]
            hunks.append(Hunk(*_range(old_part[1:]), *_range(new_part[1:])))
        return hunks

    def show(self, sha: str, path: str) -> bytes:
        """The bytes of `path` (toplevel-relative) at `sha`."""
        try:
            _, out = self.run("cat-file", "blob", f"{sha}:{path}", text=False)
        except GitError as e:
            raise GitError(f"missing object: cannot read {path} at {sha[:12]} ({e})") from None
        assert isinstance(out, bytes)
        return out

    def tree_blobs(self, sha: str, paths: list[str]) -> dict[str, str]:
        """Blob id of each of `paths` (toplevel-relative) stored by commit `sha`; absent paths are left out."""
        if not paths:
            return {}
        _, out = self.run("ls-tree", "-z", "--full-tree", sha, "--", *paths)
        blobs: dict[str, str] = {}
        for entry in str(out).split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            kind, blob = meta.split()[1:3]
            if kind == "blob":
                blobs[path] = blob
        return blobs

    def hash_data(self, data: bytes, path: str) -> str:
        """The blob id `data` would have if committed as `path` (relative to `cwd`; it picks
        the clean filters, e.g. line endings, the same way a commit would)."""
        _, out = self.run("hash-object", "--stdin", f"--path={path}", stdin=data)
        return str(out).strip()

    def hash_files(self, paths: list[Path]) -> list[str]:
        """Blob ids the working-tree files would have if committed now."""
        if not paths:
            return []
        return self.out("hash-object", "--", *map(str, paths)).split()


def _range(spec: str) -> tuple[int, int]:
    start, _, count = spec.partition(",")
    return int(start), int(count) if count else 1
