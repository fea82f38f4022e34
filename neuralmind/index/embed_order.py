"""Which pending node to embed next: attention first, then every file, then the rest.

A cold full index of a large repository embeds for minutes (whole Django: ~6 min on 2
cores) while keyword search and the graph already answer. What the user looks at
should become semantic first, so the order is:

1. attention: the nodes of the files the user has open, asked about or is editing
   (and the files near those edits), in the order the service ranks them; asked
   again before every slice, so a new question reorders the rest of the build;
2. file nodes: one vector per file gives every file a place in the meaning ranking
   (`file_rank.py` reads a file at its best node) at a small fraction of the cost;
3. the remaining symbols, in id order (files in path order, symbols in source order).

With `max_embedded_nodes` (config.py) the background build stops once that many
vectors exist; the symbols left over are represented by their file's vector (and by
keyword search), and attention files are embedded even past the cap: they are
bounded by what a person looks at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence


def is_file_node(node_id: str) -> bool:
    return "::" not in node_id


class EmbedOrder:
    """Hands out slices of pending node ids in embedding order (see the module doc)."""

    def __init__(self, pending: Iterable[str], nodes_of_file: Callable[[str], Sequence[str]],
                 ) -> None:
        self._left = set(pending)
        self._nodes_of_file = nodes_of_file
        ids = sorted(self._left)
        self._queue = [i for i in ids if is_file_node(i)] + [i for i in ids if not is_file_node(i)]
        self._cursor = 0

    def __len__(self) -> int:
        return len(self._left)

    def next_slice(self, size: int, attention: Sequence[str] = (),
                   room: int | None = None) -> tuple[list[str], bool]:
        """Up to `size` ids to embed next, and whether they are attention nodes.

        `room`: how many more vectors the cap allows (None: no cap); attention nodes do
        not count against it. An empty slice means nothing is left within the cap."""
        out: list[str] = []
        for path in attention:
            for node_id in self._nodes_of_file(path):
                if node_id in self._left:
                    out.append(node_id)
                    if len(out) == size:
                        return self._take(out), True
        if out:
            return self._take(out), True
        size = size if room is None else min(size, max(0, room))
        while len(out) < size and self._cursor < len(self._queue):
            node_id = self._queue[self._cursor]
            self._cursor += 1
            if node_id in self._left:
                out.append(node_id)
        return self._take(out), False

    def _take(self, ids: list[str]) -> list[str]:
        self._left.difference_update(ids)
        return ids

    def rest(self) -> list[str]:
        """What was never handed out (left at file level by the cap)."""
        return sorted(self._left)
