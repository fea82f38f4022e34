"""`saves.journal`: the files a server saved since its keyword side was last written.

Why it exists and how a reader uses it: `index/generation.py`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from neuralmind.index.state_files import JOURNAL_FILE
from neuralmind.statedir import atomic_write_bytes

log = logging.getLogger("neuralmind.index")


class SaveJournal:
    """The files saved since the keyword side was last written (a server's, `defer_writes`).

    Appended on the engine thread before each save's graph commit, one `[seq, path]` line
    per file; after a keyword write, the lines its snapshot covered (`seq` up to the
    journal's `last` when the snapshot was taken) are dropped with an atomic rewrite of the
    rest, so a write finishing late never drops a newer save's line. Every other graph
    commit (a build) removes the journal first (`clear`): a journal, when present, lists
    every file committed since the index on disk was written. A line torn by a kill is
    skipped when read."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / JOURNAL_FILE
        entries = self._entries()
        self.last = entries[-1][0] if entries else 0    # a new process numbers on from here

    def append(self, paths: list[str]) -> None:
        lines = []
        for p in paths:
            self.last += 1
            lines.append(json.dumps([self.last, p], ensure_ascii=False) + "\n")
        with open(self.path, "ab") as f:
            f.write("".join(lines).encode("utf-8", "surrogatepass"))

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)

    def before_commit(self, paths: list[str], deferred: bool) -> None:
        """Called before a save commits its graph: a server (`deferred`: its index written
        once saves pause) lists the files; any other writer writes its index right after the
        commit, so a kill in between leaves no journal and the reader compares every node."""
        if deferred:
            self.append(paths)
        else:
            self.clear()

    def drop_through(self, seq: int) -> None:
        """Forget the lines numbered up to `seq`: a keyword write covering them is on disk."""
        entries = self._entries()
        if not entries or entries[0][0] > seq:
            return
        rest = [e for e in entries if e[0] > seq]
        try:
            if rest:
                atomic_write_bytes(self.path, "".join(
                    json.dumps(e, ensure_ascii=False) + "\n" for e in rest
                ).encode("utf-8", "surrogatepass"))
            else:
                self.path.unlink(missing_ok=True)
        except OSError as e:    # kept lines only cost a reader a re-index of those files
            log.warning("could not trim %s: %s", self.path, e)

    def paths(self) -> list[str]:
        return list(dict.fromkeys(p for _seq, p in self._entries()))

    def _entries(self) -> list[tuple[int, str]]:
        try:
            lines = self.path.read_bytes().decode("utf-8", "surrogatepass").splitlines()
        except (OSError, UnicodeDecodeError):
            return []
        out: list[tuple[int, str]] = []
        for line in lines:
            try:
                seq, p = json.loads(line)
            except (ValueError, TypeError):
                continue        # the last line, torn by a kill mid-append
            if isinstance(seq, int) and isinstance(p, str):
                out.append((seq, p))
        return out
