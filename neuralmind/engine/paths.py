"""The one confinement rule for paths that come from clients (editor, agent, terminal).

A path is taken as the client wrote it, relative to the workspace root (so a file
reached through a symlink inside the workspace keeps the name the client knows),
and is accepted only when both that path and its real path (every symlink
followed) lie inside the root, and it is not the root itself. The walker never
follows symlinks either, so nothing outside the root is ever read, indexed or
learned about. Pure path arithmetic and one realpath: cheap enough for every
keystroke on the event loop.
"""

from __future__ import annotations

import os
from pathlib import Path

from neuralmind.errors import EngineError


def confine(root: Path, path: str) -> str:
    """`path` (absolute or root-relative) as a repo-relative POSIX path, or
    EngineError("invalid_path") when it is malformed or leads outside `root`."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise EngineError("invalid_path", "empty or malformed path")
    p = Path(path)
    full = Path(os.path.normpath(p if p.is_absolute() else root / p))
    try:
        rel = full.relative_to(root).as_posix()
    except ValueError:
        try:       # the root spelled through a symlink (/tmp -> /private/tmp)
            rel = full.resolve().relative_to(root).as_posix()
        except ValueError:
            raise EngineError("invalid_path", f"{path}: outside the workspace {root}") from None
    if rel in ("", "."):
        raise EngineError("invalid_path", f"{path}: the workspace root is not a file")
    if not (root / rel).resolve().is_relative_to(root):
        raise EngineError("invalid_path", f"{path}: resolves outside the workspace {root} "
                                          "(through a symlink)")
    return rel
