"""The change set under review: the working tree against a base commit, plus unsaved buffers.

The base is HEAD by default; `--base REF` compares with the merge base of REF and HEAD, so a
branch is reviewed as its pull request would be (everything it changed, committed or not).
Untracked files count (a new test is part of the change); ignored ones and NeuralMind's own
state do not. Paths are relative to the project root, which may lie below git's toplevel.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from neuralmind.errors import InvalidArgument
from neuralmind.memory.git import Git, GitError
from neuralmind.statedir import STATE_DIR_NAME


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What a review looks at."""

    base: str                        # the commit compared with (full sha)
    base_ref: str                    # as asked ("HEAD", "main", ...)
    changed: tuple[str, ...]         # changed on disk against `base`, incl. untracked, sorted
    deleted: frozenset[str] = field(default_factory=frozenset)
    unsaved: tuple[str, ...] = ()    # editor buffers with unsaved changes, sorted

    @property
    def files(self) -> list[str]:
        """Every file of the change: on disk or only in an editor buffer."""
        return sorted(set(self.changed) | set(self.unsaved))


def resolve_base(git: Git, ref: str | None) -> tuple[str, str]:
    """(sha, ref as asked) of the commit a review compares with: HEAD, or the merge base of
    `ref` and HEAD. InvalidArgument for a ref git does not know; GitError outside git."""
    head = git.head()
    if ref is None or ref.strip() in ("", "HEAD"):
        return head, "HEAD"
    name = ref.strip()
    if name.startswith("-"):
        raise InvalidArgument(f"base {name!r} is not a git revision")
    try:
        target = git.resolve(name)
    except GitError:
        raise InvalidArgument(f"base {name!r} is not a commit of this repository") from None
    code, out = git.run("merge-base", target, head, ok_codes=(0, 1))
    if code != 0:
        raise InvalidArgument(f"base {name!r} shares no history with HEAD")
    return str(out).strip(), name


def change_set(git: Git, ref: str | None = None, unsaved: Iterable[str] = ()) -> ChangeSet:
    """The files the working tree changed against the base, and the unsaved buffers."""
    base, asked = resolve_base(git, ref)
    _, diff = git.run("-c", "core.quotepath=off", "diff", "--no-ext-diff", "--no-renames",
                      "--relative", "--name-status", "-z", base, "--")
    fields = [f for f in str(diff).split("\0") if f]
    changed: set[str] = set()
    deleted: set[str] = set()
    for status, path in zip(fields[::2], fields[1::2], strict=False):
        changed.add(path)
        if status.startswith("D"):
            deleted.add(path)
    _, others = git.run("-c", "core.quotepath=off", "ls-files", "--others", "--exclude-standard",
                        "-z", "--", ".")
    changed.update(f for f in str(others).split("\0") if f)
    own = STATE_DIR_NAME + "/"
    return ChangeSet(base=base, base_ref=asked,
                     changed=tuple(sorted(f for f in changed if not f.startswith(own))),
                     deleted=frozenset(deleted), unsaved=tuple(sorted(set(unsaved))))
