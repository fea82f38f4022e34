"""The post-commit hook that runs `neuralmind decisions scan` after every commit.

Installing is idempotent and leaves everything else in an existing hook alone:
our lines live between marker comments (one block per project, so several
projects in one repository each get their own), and re-installing replaces only
that block. The hook never fails a commit.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from neuralmind.memory.git import Git

BEGIN = "# >>> neuralmind decisions scan ({project}) >>>"
END = "# <<< neuralmind decisions scan ({project}) <<<"


@dataclass
class HookReport:
    path: Path
    action: str          # created | added | updated | unchanged
    project: str         # the project's path below the repository top, "." at the top

    def to_json(self) -> dict[str, str]:
        return {"path": str(self.path), "action": self.action, "project": self.project}


def _block(project: str) -> str:
    py = shlex.quote(sys.executable)
    where = shlex.quote(project)
    return "\n".join([
        BEGIN.format(project=project),
        "# Marks decisions STALE when this commit changed the code they govern.",
        f"if [ -x {py} ]; then",
        f"  {py} -m neuralmind.cli.main decisions scan {where} --quiet || true",
        "elif command -v neuralmind >/dev/null 2>&1; then",
        f"  neuralmind decisions scan {where} --quiet || true",
        "fi",
        END.format(project=project),
    ]) + "\n"


def hook_location(root: Path) -> tuple[Path, str]:
    """(the repository's post-commit hook file, the project's path below the top)
    (GitError when `root` is not in a git repository)."""
    git = Git(Path(root))
    git.toplevel()
    return git.git_path("hooks/post-commit"), git.prefix().rstrip("/") or "."


def with_block(existing: str | None, project: str) -> tuple[str, str]:
    """(the hook's text with the project's scan block in it, the action: created | added |
    updated | unchanged); everything else in an existing hook is kept as it is."""
    block = _block(project)
    begin, end = BEGIN.format(project=project), END.format(project=project)
    if existing is None:
        return "#!/bin/sh\n" + block, "created"
    if begin in existing and end in existing:
        head, rest = existing.split(begin, 1)
        tail = rest.split(end, 1)[1].removeprefix("\n")
        text = head + block + tail
        return text, "unchanged" if text == existing else "updated"
    sep = "" if existing.endswith("\n") or not existing else "\n"
    text = existing + sep + block
    if not existing.startswith("#!"):
        text = "#!/bin/sh\n" + text
    return text, "added"


def without_block(existing: str, project: str) -> str:
    """The hook's text with the project's scan block taken out (unchanged without one)."""
    begin, end = BEGIN.format(project=project), END.format(project=project)
    if begin not in existing or end not in existing:
        return existing
    head, rest = existing.split(begin, 1)
    return head + rest.split(end, 1)[1].removeprefix("\n")


def install_hook(root: Path) -> HookReport:
    """Install or refresh the scan block in the repository's post-commit hook (GitError if no repo)."""
    path, project = hook_location(root)
    existing = path.read_text(encoding="utf-8") if path.is_file() else None
    text, action = with_block(existing, project)
    if text != existing:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    mode = path.stat().st_mode
    if not mode & stat.S_IXUSR:
        path.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return HookReport(path, action, project)
