"""Memory namespaces: which one a write goes to and how merged reads weigh them.

Namespaces are plain single-token strings (`personal`, `shared`, `ephemeral`,
`branch:<name>`), so new kinds and import/export need no enum table. On a
non-default git branch the active namespace is `branch:<name>`, so branch-local
learning wins on that branch and never leaks into the others.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from neuralmind import config

log = logging.getLogger("neuralmind.synapse")

PERSONAL = "personal"
SHARED = "shared"
EPHEMERAL = "ephemeral"
BRANCH_PREFIX = "branch:"
DEFAULT_BRANCHES = ("main", "master", "trunk", "develop")
MAX_NAMESPACE_CHARS = 200


def normalize_namespace(name: str | None) -> str:
    """Validate a namespace name: non-empty, one token, printable; raises ValueError."""
    if name is None:
        return PERSONAL
    if not isinstance(name, str):
        raise ValueError(f"namespace must be a string, not {type(name).__name__}")
    ns = name.strip()
    if not ns:
        raise ValueError("namespace is empty")
    if len(ns) > MAX_NAMESPACE_CHARS:
        raise ValueError(f"namespace is longer than {MAX_NAMESPACE_CHARS} characters")
    if any(ch.isspace() or not ch.isprintable() for ch in ns):
        raise ValueError(f"namespace {name!r} must be a single token (no whitespace)")
    if ns == BRANCH_PREFIX:
        raise ValueError("branch namespace needs a branch name")
    return ns


def half_life_days(namespace: str) -> float:
    """Undirected-edge half-life of a namespace (`branch:*` share one; unknown kinds: personal)."""
    if namespace.startswith(BRANCH_PREFIX):
        return config.HALF_LIFE_DAYS["branch"]
    return config.HALF_LIFE_DAYS.get(namespace, config.HALF_LIFE_DAYS[PERSONAL])


def write_namespaces(namespace: str, share: bool) -> tuple[str, ...]:
    """Where a learning write lands: its namespace, and `shared` when it is shared."""
    return (namespace, SHARED) if share and namespace != SHARED else (namespace,)


def merged_weights(active: str) -> dict[str, float]:
    """Read multipliers of the merged view: active 1.0, personal 0.8, shared 0.5."""
    w = config.NAMESPACE_WEIGHTS
    weights = {SHARED: w["shared"], PERSONAL: w["personal"]}
    weights[active] = w["active"]
    return weights


def _git_dir(root: Path) -> Path | None:
    dot = root / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():  # worktree or submodule: "gitdir: <path>"
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            p = Path(text[len("gitdir:"):].strip())
            return p if p.is_absolute() else (root / p).resolve()
    return None


def _default_branch(git_dir: Path) -> set[str]:
    """The remote's default branch when recorded, else the conventional names."""
    common = git_dir
    commondir = git_dir / "commondir"
    if commondir.is_file():
        common = (git_dir / commondir.read_text(encoding="utf-8").strip()).resolve()
    origin_head = common / "refs" / "remotes" / "origin" / "HEAD"
    if origin_head.is_file():
        ref = origin_head.read_text(encoding="utf-8", errors="replace").strip()
        if ref.startswith("ref: refs/remotes/origin/"):
            return {ref[len("ref: refs/remotes/origin/"):]}
    return set(DEFAULT_BRANCHES)


class ActiveNamespace:
    """The namespace writes go to, re-read cheaply when .git/HEAD changes (fail-open)."""

    def __init__(self, root: Path, override: str | None = None) -> None:
        self.root = Path(root)
        self.override = normalize_namespace(override) if override else None
        self._stamp: tuple[float, int] | None = None
        self._value = PERSONAL

    def get(self) -> str:
        if self.override:
            return self.override
        try:
            git_dir = _git_dir(self.root)
            if git_dir is None:
                return PERSONAL
            head = git_dir / "HEAD"
            st = os.stat(head)
            stamp = (st.st_mtime, st.st_size)
            if stamp != self._stamp:
                self._value = self._read(git_dir, head)
                self._stamp = stamp
            return self._value
        except (OSError, ValueError) as e:
            log.debug("cannot read git HEAD under %s: %s", self.root, e)
            return PERSONAL

    @staticmethod
    def _read(git_dir: Path, head: Path) -> str:
        ref = head.read_text(encoding="utf-8", errors="replace").strip()
        if not ref.startswith("ref: refs/heads/"):
            return PERSONAL  # detached HEAD: no branch to scope to
        branch = ref[len("ref: refs/heads/"):]
        if not branch or branch in _default_branch(git_dir):
            return PERSONAL
        return normalize_namespace(BRANCH_PREFIX + branch)
