"""Which workspace files end with a path tail: how imports written as paths (`a.b.c`,
`#include "x/y.h"`, `com/x/Y.java`) find their files when no package root names them.

An index of every suffix of every path was ~30 MB on the Linux kernel (55k paths, ~4
suffixes each), kept with the resolution state for a server's life; paths are grouped by
file name instead. A file name shared by many paths (`__init__.py`: 308 on Django's 20k
subset) made every `from a.b import c` look through all of them for `a/b/c/__init__.py`:
a new file's save re-resolves every file's imports, and the scans held a 20k server's
engine thread ~290 ms of its ~400 ms (SAVE15). Such groups are split again by the last two
path parts when a tail of two or more parts first asks them.
"""

from __future__ import annotations

from collections.abc import Iterable

from neuralmind.config import SUFFIX_GROUP_SPLIT_OVER


def _last_two(path: str) -> str:
    """`a/b/c.py` -> `b/c.py`; a path of one or two parts is itself."""
    cut = path.rfind("/")
    return path if cut < 0 else path[path.rfind("/", 0, cut) + 1:]


class PathSuffixes:
    """Paths by file name, large groups split by their last two parts (made on first use)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths = paths
        self._by_base: dict[str, list[str]] | None = None
        self._split: dict[str, dict[str, list[str]]] = {}

    def matches(self, tail: str) -> list[str]:
        """Files whose path is `tail` or ends with "/" + `tail`, shortest path first."""
        if self._by_base is None:
            index: dict[str, list[str]] = {}
            for p in self._paths:
                index.setdefault(p.rpartition("/")[2], []).append(p)
            self._by_base = index
        base = tail.rpartition("/")[2]
        group = self._by_base.get(base, [])
        if "/" in tail and len(group) > SUFFIX_GROUP_SPLIT_OVER:
            split = self._split.get(base)
            if split is None:
                split = self._split[base] = {}
                for p in group:
                    split.setdefault(_last_two(p), []).append(p)
            group = split.get(_last_two(tail), [])
        end = "/" + tail
        return sorted((p for p in group if p == tail or p.endswith(end)),
                      key=lambda p: (len(p), p))
