"""Which files of a workspace the graph covers, and why the others are skipped.

In a git checkout git itself decides what is ignored (`git ls-files --cached --others
--exclude-standard`: tracked plus untracked-not-ignored), so nested `.gitignore`s,
`.git/info/exclude` and the global excludes file all count exactly as git counts them.
Elsewhere (or when git fails) the tree is walked here with our own gitignore matcher.
Either way `.neuralmindignore` files and the config's `exclude` globs apply on top, and
vendored/generated directories, binary, huge and minified files are skipped with a
reason. Symlinks are never followed: one that points outside the root or loops is
skipped as such, one that points inside is skipped because its target is indexed under
its own path.
"""

from __future__ import annotations

import logging
import os
import stat
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from neuralmind.config import SKIP_DIRS, WorkspaceConfig
from neuralmind.graph.ignore import IgnoreMatcher
from neuralmind.graph.languages import language_for

log = logging.getLogger("neuralmind.graph")

HEAD_BYTES = 8192            # binary/minified checks look at this much of the file
MINIFIED_LINE = 1000         # a head whose average line is longer than this is minified code
MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".bundle.js")
GIT_TIMEOUT = 60.0
# Skipped like vendored trees but not worth reporting: our own state and VCS metadata.
SILENT_DIRS = frozenset({".neuralmind", ".git", ".hg", ".svn"})

SKIP_REASONS = (
    "binary", "too_large", "vendored", "minified", "ignored", "unreadable",
    "symlink_outside", "symlink_loop", "symlink_inside",
)


@dataclass
class WalkResult:
    files: list[str] = field(default_factory=list)                    # sorted, '/'-separated
    skipped: dict[str, list[str]] = field(default_factory=dict)       # reason -> sorted paths
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)   # path -> (size, mtime_ns)
    git: bool = False                                                 # git decided what is ignored

    def skip(self, reason: str, rel: str) -> None:
        self.skipped.setdefault(reason, []).append(rel)


def _is_minified_name(rel: str) -> bool:
    return rel.lower().endswith(MINIFIED_SUFFIXES)


def content_skip_reason(head: bytes, size: int) -> str | None:
    """'binary' or 'minified' from the first HEAD_BYTES of a file, else None."""
    if b"\0" in head:
        return "binary"
    if size > HEAD_BYTES // 2:
        lines = head.count(b"\n") + 1
        if len(head) / lines > MINIFIED_LINE:
            return "minified"
    return None


class _Filter:
    """The checks shared by the git and the plain walk, and by single-path checks."""

    def __init__(self, root: Path, config: WorkspaceConfig, use_gitignore: bool) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.config = config
        names = (".gitignore", ".neuralmindignore") if use_gitignore else (".neuralmindignore",)
        self.ignore = IgnoreMatcher(root, names, list(config.exclude))
        self.overrides = config.languages or None

    def skip_dir_name(self, name: str) -> bool:
        return name in SKIP_DIRS or name.endswith(".egg-info")

    def symlink_reason(self, abs_path: str) -> str:
        """Classify a symlink (which is never followed)."""
        try:
            os.stat(abs_path)
        except OSError as e:
            if e.errno == 40:   # ELOOP
                return "symlink_loop"
            return "unreadable"     # dangling link
        real = os.path.realpath(abs_path)
        if real != self.real_root and not real.startswith(self.real_root + os.sep):
            return "symlink_outside"
        return "symlink_inside"

    def check_file(self, rel: str, result: WalkResult,
                   known: Mapping[str, tuple[int, int]] | None, ignore_checked: bool) -> None:
        """Decide one candidate file; append it to result.files or record the skip reason."""
        parts = rel.split("/")
        if any(self.skip_dir_name(p) for p in parts[:-1]):
            result.skip("vendored", rel)
            return
        if not ignore_checked and self.ignore.is_ignored(rel):
            result.skip("ignored", rel)
            return
        if _is_minified_name(rel):
            result.skip("minified", rel)
            return
        abs_path = os.path.join(self.root, rel)
        if language_for(rel, self.overrides) is None:
            # Not source we understand, so not a skip worth reporting, unless it is a
            # symlinked directory (git lists those as one entry) that leads somewhere bad.
            if os.path.islink(abs_path) and os.path.isdir(abs_path):
                reason = self.symlink_reason(abs_path)
                if reason != "symlink_inside":
                    result.skip(reason, rel + "/")
            elif os.path.islink(abs_path) and _loops(abs_path):
                result.skip("symlink_loop", rel)
            return
        try:
            st = os.lstat(abs_path)
        except FileNotFoundError:
            return                      # tracked but deleted in the working tree
        except OSError:
            result.skip("unreadable", rel)
            return
        if stat.S_ISLNK(st.st_mode):
            result.skip(self.symlink_reason(abs_path), rel)
            return
        if not stat.S_ISREG(st.st_mode):
            return
        if st.st_size > self.config.max_file_bytes:
            result.skip("too_large", rel)
            return
        prev = known.get(rel) if known else None
        if prev is None or prev != (st.st_size, st.st_mtime_ns):
            try:
                with open(abs_path, "rb") as f:
                    head = f.read(HEAD_BYTES)
            except OSError:
                result.skip("unreadable", rel)
                return
            reason = content_skip_reason(head, st.st_size)
            if reason:
                result.skip(reason, rel)
                return
        result.files.append(rel)
        result.sizes[rel] = (st.st_size, st.st_mtime_ns)


def _git_files(root: Path, pathspecs: list[str] | None = None,
               ignored: bool = False) -> list[str] | None:
    """Git's view (tracked + untracked-not-ignored), or None when root is not a work tree.

    With `ignored`, the untracked files git ignores instead (whole directories collapsed
    to `dir/`), for the skip report.
    """
    if not (root / ".git").exists():
        return None
    cmd = ["git", "-C", str(root), "-c", "core.quotepath=off", "ls-files", "-z"]
    cmd += (["--others", "--ignored", "--exclude-standard", "--directory"] if ignored
            else ["--cached", "--others", "--exclude-standard"])
    if pathspecs is not None:
        cmd += ["--", *(":(literal)" + p for p in pathspecs)]
    try:
        out = subprocess.run(cmd, capture_output=True, timeout=GIT_TIMEOUT, check=True).stdout
    except (OSError, subprocess.SubprocessError) as e:
        log.warning("git ls-files failed in %s (%s); walking the tree instead", root, e)
        return None
    return sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})


def _plain_walk(flt: _Filter, result: WalkResult,
                known: Mapping[str, tuple[int, int]] | None) -> None:
    """Walk the tree ourselves, pruning ignored and vendored directories as we go."""
    stack = [""]
    while stack:
        directory = stack.pop()
        abs_dir = os.path.join(flt.root, directory) if directory else str(flt.root)
        try:
            entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
        except OSError:
            result.skip("unreadable", directory or ".")
            continue
        subdirs: list[str] = []
        for entry in entries:
            rel = f"{directory}/{entry.name}" if directory else entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
            except OSError:
                result.skip("unreadable", rel)
                continue
            if is_dir:
                if entry.name in SILENT_DIRS:
                    continue
                if flt.skip_dir_name(entry.name):
                    result.skip("vendored", rel + "/")
                elif flt.ignore.entry_ignored(rel, True):
                    result.skip("ignored", rel + "/")
                else:
                    subdirs.append(rel)
                continue
            if is_link:
                target_is_dir = os.path.isdir(entry.path)
                if flt.ignore.entry_ignored(rel, target_is_dir):
                    result.skip("ignored", rel)
                elif target_is_dir or language_for(rel, flt.overrides) is not None:
                    result.skip(flt.symlink_reason(entry.path), rel + ("/" if target_is_dir else ""))
                elif not os.path.exists(entry.path) and _loops(entry.path):
                    result.skip("symlink_loop", rel)
                continue
            if flt.ignore.entry_ignored(rel, False):
                if _is_minified_name(rel) or language_for(rel, flt.overrides) is not None:
                    result.skip("ignored", rel)
                continue
            flt.check_file(rel, result, known, ignore_checked=True)
        stack.extend(reversed(subdirs))


def _loops(path: str) -> bool:
    try:
        os.stat(path)
    except OSError as e:
        return e.errno == 40
    return False


def walk(root: Path, config: WorkspaceConfig,
         known: Mapping[str, tuple[int, int]] | None = None) -> WalkResult:
    """Every source file of the workspace the graph should cover, plus what was skipped.

    `known` maps path -> (size, mtime_ns) from the last build: files that still match
    skip the binary/minified content check, so an unchanged file costs one stat.
    """
    root = Path(root)
    result = WalkResult()
    git_files = _git_files(root)
    if git_files is not None:
        result.git = True
        flt = _Filter(root, config, use_gitignore=False)
        for rel in git_files:
            flt.check_file(rel, result, known, ignore_checked=False)
        for rel in _git_files(root, ignored=True) or []:
            top = rel.split("/", 1)[0]
            if top in SILENT_DIRS:
                continue
            if rel.endswith("/") or _is_minified_name(rel) or language_for(rel, flt.overrides):
                result.skip("ignored", rel)
    else:
        flt = _Filter(root, config, use_gitignore=True)
        _plain_walk(flt, result, known)
    result.files.sort()
    for paths in result.skipped.values():
        paths.sort()
    return result


def check_paths(root: Path, config: WorkspaceConfig, paths: Iterable[str]) -> WalkResult:
    """Apply the walk's rules to a few repo-relative paths only (the per-save path).

    Paths that do not exist are simply absent from the result; the caller treats them
    as removed. In a git checkout git decides ignores for exactly these paths.
    """
    root = Path(root)
    rels = sorted(set(paths))
    result = WalkResult()
    if not rels:
        return result
    git_files = _git_files(root, rels)
    if git_files is not None:
        result.git = True
        flt = _Filter(root, config, use_gitignore=False)
        visible = set(git_files)
        for rel in rels:
            if rel not in visible:
                if os.path.lexists(os.path.join(root, rel)) and language_for(rel, flt.overrides):
                    result.skip("ignored", rel)
                continue
            flt.check_file(rel, result, None, ignore_checked=False)
    else:
        flt = _Filter(root, config, use_gitignore=True)
        for rel in rels:
            if not os.path.lexists(os.path.join(root, rel)):
                continue
            flt.check_file(rel, result, None, ignore_checked=False)
    return result
