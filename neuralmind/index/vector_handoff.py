"""Vectors another process writes while this one serves and changes the index.

A server's start-up build runs in a child process (service/build_worker.py): it writes
the graph and keyword index (`graph_ready`), which the server loads, then embeds for as
long as a large repository takes (the Linux kernel: ~82k vectors at the default
`max_embedded_nodes`, 30+ min on 2 cores). Saves are applied by the server meanwhile
(issue #21 part 2: the first answer comes before the index is finished), so from
`graph_ready` on each state file has one writer:

- the server owns the graph, the keyword index and the search metadata (its pending
  list): its saves change them, and it writes them when saves pause;
- the child owns `vectors.npz` until it ends: it writes its slices there, and the
  server does not write that file meanwhile.

The server merges each slice into the vectors it serves (`VectorStore.merge_from`),
refusing a vector whose text is not the one its own index needs: a node a save changed
keeps the vector the server computed for its new text (or waits for one), a node a save
removed gets none, however late the child's slice for the old text arrives. When the
child ends, the server takes the file back (`settle`): what the child left pending past
`max_embedded_nodes` is represented at file level, what the saves re-indexed and is
not embedded yet stays pending, and the server's next flush writes every file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from neuralmind.index.vectors import VectorStore


class VectorHandoff:
    """What the serving process changed while another writes the vectors."""

    def __init__(self) -> None:
        self.active = False                     # a build child writes vectors.npz now
        self.expected: dict[str, str | None] = {}   # id -> its vector's text hash (None: gone)

    def start(self) -> None:
        self.active = True
        self.expected.clear()

    def record(self, vectors: VectorStore, targets: Iterable[str], todo: Mapping[str, str],
               gone: Iterable[str]) -> None:
        """A save re-indexed `targets` (those in `todo` need a vector for that text hash;
        the others' vectors are current) and removed `gone`."""
        if not self.active:
            return
        for i in targets:
            self.expected[i] = todo[i] if i in todo else vectors.text_hash(i)
        for i in gone:
            self.expected[i] = None

    def merge(self, mine: VectorStore, disk: VectorStore | None,
              indexed: Mapping[str, object]) -> list[str]:
        """The child's vectors (`disk`) merged into ours: only nodes still `indexed`, and for
        nodes a save changed, only a vector of the text it has now. Returns the ids taken."""
        if disk is None:
            return []
        expected = self.expected

        def accept(node_id: str, text_hash: str) -> bool:
            if node_id in expected:
                return expected[node_id] == text_hash
            return node_id in indexed

        return mine.merge_from(disk, accept)

    def settle(self, pending: set[str], vectors: VectorStore, complete: bool) -> bool:
        """The child ended. `complete`: it embedded all it was going to, so what it left
        pending stays at file level and only the nodes saves re-indexed still wait (those
        without a vector of their text). True when `pending` changed."""
        before = len(pending)
        if complete:
            waiting = {i for i, h in self.expected.items()
                       if h is not None and vectors.text_hash(i) != h}
            pending.intersection_update(waiting)
        self.active = False
        self.expected.clear()
        return len(pending) != before
