"""The session-start push, kept on disk between hook processes.

Without a server every SessionStart hook would load the graph, the search index and the
tokenizer (~0.8 s of CPU) to render the same wake-up pack; the pack changes only when
the graph, the memory store, the settings, git HEAD (its "stale decisions on recently
edited files" are those of the last commits) or NeuralMind itself change, so it is kept in
`.neuralmind/session_start.md` under a key made of those (a few `stat` calls, git is not
run: reading it must cost the hook nothing). A stale or unreadable file is simply
rendered again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from neuralmind import __version__
from neuralmind.repo.git import git_dir, head_signature

CACHE_NAME = "session_start.md"
_INPUTS = ("graph.db", "../.neuralmind.toml")
# memory.db is in WAL mode: a pin or a new atom reaches memory.db-wal first
_MEMORY_INPUTS = ("memory.db", "memory.db-wal")


def _learned(state: Path) -> Path:
    """The folder memory.db is in: the learned folder `learned.json` records (repo/learned.py;
    read here without git), else `.neuralmind/` itself."""
    try:
        return Path(json.loads((state / "learned.json").read_text(encoding="utf-8"))["dir"])
    except (OSError, ValueError, KeyError, TypeError):
        return state


def _head(root: Path) -> str:
    """Where HEAD is (repo/git.head_signature) for the repository `root` lies in, '-' outside
    git: a commit, checkout or pull moves it."""
    for folder in (root, *root.parents):
        gdir = git_dir(folder)
        if gdir is not None:
            return ":".join(map(str, head_signature(gdir)))
        if (folder / ".git").exists():
            break                        # an unreadable `.git`: no HEAD to follow
    return "-"


def key(state: Path) -> str:
    """What the pack depends on: NeuralMind's version, git HEAD and each input's size and
    mtime."""
    parts = [__version__, _head(state.resolve().parent)]
    learned = _learned(state)
    for path in [state / n for n in _INPUTS] + [learned / n for n in _MEMORY_INPUTS]:
        try:
            st = os.stat(path)
            parts.append(f"{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return " ".join(parts)


def read(state: Path) -> str | None:
    """The cached pack when its key still holds, else None."""
    try:
        head, _, text = (state / CACHE_NAME).read_text(encoding="utf-8").partition("\n")
    except OSError:
        return None
    return text if head == key(state) else None


def write(state: Path, text: str) -> None:
    """Keep `text` under the current key (atomically: concurrent hooks may race)."""
    tmp = state / f".{CACHE_NAME}.{os.getpid()}.tmp"
    tmp.write_text(f"{key(state)}\n{text}", encoding="utf-8")
    os.replace(tmp, state / CACHE_NAME)
