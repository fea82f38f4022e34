"""The session-start push, kept on disk between hook processes.

Without a server every SessionStart hook would load the graph, the search index and the
tokenizer (~0.8 s of CPU) to render the same wake-up pack; the pack changes only when
the graph, the memory store, the settings or NeuralMind itself change, so it is kept in
`.neuralmind/session_start.md` under a key made of those (stdlib only: reading it must
cost the hook nothing). A stale or unreadable file is simply rendered again.
"""

from __future__ import annotations

import os
from pathlib import Path

from neuralmind import __version__

CACHE_NAME = "session_start.md"
# memory.db is in WAL mode: a pin or a new atom reaches memory.db-wal first
_INPUTS = ("graph.db", "memory.db", "memory.db-wal", "../.neuralmind.toml")


def key(state: Path) -> str:
    """What the pack depends on: NeuralMind's version and each input's size and mtime."""
    parts = [__version__]
    for name in _INPUTS:
        try:
            st = os.stat(state / name)
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
