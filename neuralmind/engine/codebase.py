"""What reading the whole codebase would cost: o200k tokens of every indexed file.

Counted once per file version (its size and modification time) and kept in
`.neuralmind/file_tokens.json`, so a server counts a workspace once (in slices, while
idle: Django's 20k-node subset is a few seconds of the pure-Python counter) and then only
the files that change. A savings figure is only as real as this count, so it is the
same o200k_base encoder the budgets use.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from neuralmind.config import CODEBASE_SAVE_SECONDS
from neuralmind.context.tokens import count_tokens
from neuralmind.statedir import atomic_write_json, read_json

if TYPE_CHECKING:
    from neuralmind.graph.store import Graph

log = logging.getLogger("neuralmind.engine")

TOKENS_FILE = "file_tokens.json"


class CodebaseTokens:
    """Per-file token counts of one workspace, and their total."""

    def __init__(self, state: Path, root: Path) -> None:
        self.path = state / TOKENS_FILE
        self.root = root
        doc = read_json(self.path)
        self._counts: dict[str, list[int]] = doc if isinstance(doc, dict) else {}   # rel -> [size, mtime_ns, tokens]
        self._dirty = False
        self._complete = False
        self._saved_at = 0.0
        # where a pass in slices goes on: (graph, its generation, files, next position).
        # Each slice starting over stat()ed every file again: quadratic in files (the
        # Linux kernel's 55k files, 50 a slice, were ~60M stats).
        self._resume: tuple[int, int, int, int] | None = None

    def update(self, graph: Graph, limit: int | None = None,
               seconds: float | None = None) -> bool:
        """Count up to `limit` files not counted at their current version (all when None),
        stopping once `seconds` have passed (after one file at least); True when every
        indexed file is counted. A pass over the files goes on where the last call stopped
        while the graph is the same."""
        t0 = time.perf_counter()
        key = (id(graph), graph.generation, len(graph.files))
        start = 0
        if self._resume is not None and self._resume[:3] == key:
            start = self._resume[3]
        if start == 0:
            for rel in [r for r in self._counts if r not in graph.files]:
                del self._counts[rel]
                self._dirty = True
        done = 0
        for pos, rel in enumerate(itertools.islice(graph.files, start, None), start):
            try:
                st = os.stat(self.root / rel)
            except OSError:
                continue
            known = self._counts.get(rel)
            if known is not None and known[:2] == [st.st_size, st.st_mtime_ns]:
                continue
            if done and (limit is not None and done >= limit or seconds is not None
                         and time.perf_counter() - t0 >= seconds):
                self._resume = (*key, pos)
                self._complete = False
                return False
            try:
                text = (self.root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            self._counts[rel] = [st.st_size, st.st_mtime_ns, count_tokens(text)]
            self._dirty = True
            done += 1
        self._resume = None
        self._complete = True
        return True

    @property
    def total(self) -> int:
        return sum(c[2] for c in self._counts.values())

    def save(self) -> None:
        """Write the counts when a pass is complete, or CODEBASE_SAVE_SECONDS after the last
        write (per slice, the kernel's 1.25 MB file was rewritten ~1,100 times a pass)."""
        if self._dirty and (self._complete
                            or time.monotonic() - self._saved_at >= CODEBASE_SAVE_SECONDS):
            self._saved_at = time.monotonic()
            try:
                atomic_write_json(self.path, self._counts)
            except OSError as e:    # a read-only .neuralmind: counted again next time
                log.debug("file token counts not written: %s", e)
            self._dirty = False
