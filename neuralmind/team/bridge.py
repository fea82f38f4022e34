"""Between the team mirror and the stores that show shared state on this machine.

`SynapseBridge.exchange` runs before every push and after every pull, in transactions
of the synapse store (its lock held, so no local write interleaves):

1. the store's outbox (events its `shared` writes appended in their own transactions)
   is collected into the mirror (`TeamLocal.collect`: log, overlay, push queue), then
   dropped from the store; a kill in between only collects the same events again;
2. the targets whose visible value changed (`dirty`: pulled, echoed or collected events)
   are written into the store's `shared` rows, and their marks cleared after that
   commits; a store that shows another mirror, or none yet, is rewritten whole.

So every read of `shared` (spread, next-likely, hover) is the team's fold with this
machine's unechoed events on top, whatever order the events arrived in. Teammates'
questions (answers scored by use: `questions.py`) are added to the store's question
memory, which ranking reads, in the same way: a batch per transaction, each once.

`RecordBridge` does the same for the memory store (decisions and team-visible memory
atoms, `memory/sharing.py`), in its write transactions: its outbox in, then the
current view of every record whose view changed (`dirty_records`: the latest version
in event order, or this machine's own unpushed one) applied to its atoms. This
component sits below memory, so the store is reached through `RecordStore`, the shape
of `memory.sharing.RecordView`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from neuralmind import config, outbox
from neuralmind.synapse.layer import SynapseLayer
from neuralmind.synapse.sharing import SharedView
from neuralmind.team import fold, views
from neuralmind.team.fold import State
from neuralmind.team.local import TeamLocal

log = logging.getLogger("neuralmind.team")


class SynapseBridge:
    """The synapse layer's `shared` namespace, kept equal to the team's view."""

    def __init__(self, local: TeamLocal, layer: Callable[[], SynapseLayer | None]) -> None:
        self.local = local
        self._layer = layer    # None while learning is off: nothing to exchange
        self._questions_shown: int | None = None   # the mirror's last question shown

    def exchange(self) -> int:
        """Collect the outbox, then materialise what changed, TEAM_VIEW_BATCH rows per
        transaction. Returns the rows written."""
        layer = self._layer()
        if layer is None or layer.disabled:
            return 0
        more = layer.exchange_needed(self.local.author)
        whole = False
        while more:        # a backlog (after an outage) is collected a batch per transaction
            with layer.shared_view() as view:
                more = self._collect(view)
                whole = view.shows() != self.local.author
        if whole:
            self._questions_shown = None       # another store file: it says what it shows
        written = (self._rewrite(layer) if whole else 0) + self._questions(layer)
        while True:
            marks = views.dirty(self.local, config.TEAM_VIEW_BATCH)
            if not marks:
                return written
            with layer.shared_view() as view:
                self._collect(view)
                written += _write(view, views.visible(self.local, [t for t, _ in marks]))
            views.clear(self.local, marks)
            if len(marks) < config.TEAM_VIEW_BATCH:
                return written

    def _rewrite(self, layer: SynapseLayer) -> int:
        """Every shared target, a page per transaction; then the marks made before it
        started are done (later ones carry a newer generation)."""
        through = views.generation(self.local)
        after, written = "", 0
        while True:
            targets = views.targets_after(self.local, after, config.TEAM_VIEW_BATCH)
            last = len(targets) < config.TEAM_VIEW_BATCH
            with layer.shared_view() as view:
                self._collect(view)
                written += _write(view, views.visible(self.local, targets))
                if last:
                    view.set_shows(self.local.author)
            if last:
                views.clear_through(self.local, through)
                return written
            after = targets[-1]

    def _questions(self, layer: SynapseLayer) -> int:
        """Teammates' questions (answers scored by use) the store does not show yet into its
        question memory, TEAM_VIEW_BATCH per transaction; its own stay as it wrote them."""
        top = self.local.questions_top()
        if top == self._questions_shown:
            return 0            # nothing new since the last round: no transaction of the store
        mirror, written = self.local.author, 0
        while True:
            with layer.shared_view() as view:
                rows = self.local.questions_after(view.questions_shown(mirror),
                                                  config.TEAM_VIEW_BATCH)
                if not rows:
                    self._questions_shown = top
                    return written
                own = view.author()
                written += view.show_questions(mirror, rows[-1][0],
                                               [r[1:] for r in rows if r[1] != own])
            if len(rows) < config.TEAM_VIEW_BATCH:
                self._questions_shown = top
                return written

    def _collect(self, view: SharedView) -> bool:
        return collect(self.local, view)


def _write(view: SharedView, states: dict[str, State]) -> int:
    synapses, transitions, activations = [], [], []
    for target, s in states.items():
        kind, *parts = target.split(fold.SEP)
        if kind == fold.SYNAPSE:
            synapses.append((parts[0], parts[1], s.weight, s.count, s.updated))
        elif kind == fold.TRANSITION:
            transitions.append((parts[0], parts[1], s.weight, s.count, s.updated))
        elif kind == fold.ACTIVATION:
            activations.append((parts[0], s.weight, s.count, s.updated))
    return view.write(synapses, transitions, activations)


def exchange_all(bridges: Sequence[SynapseBridge]) -> None:
    for bridge in bridges:
        bridge.exchange()


class RecordStore(Protocol):
    """The memory store inside one of its write transactions (`memory.sharing.RecordView`)."""

    def author(self) -> str | None: ...
    def pending(self, limit: int) -> list[outbox.OutboxEntry]: ...
    def acknowledge(self, up_to: int) -> None: ...
    def unsent(self) -> int: ...
    def shows(self) -> str | None: ...
    def set_shows(self, mirror: str) -> None: ...
    def apply(self, rtype: str, atom_id: str, author: str, seq: int,
              record: dict[str, Any]) -> bool: ...


class RecordBridge:
    """The memory store's shared records, kept equal to the team's current view."""

    def __init__(self, local: TeamLocal,
                 view: Callable[[], AbstractContextManager[RecordStore] | None],
                 needed: Callable[[str], bool] | None = None) -> None:
        self.local = local
        self._view = view      # None while there is no memory store to exchange with
        # whether the store has events to collect or shows another mirror (a read; None:
        # always look, in a write transaction)
        self._needed = needed

    def exchange(self) -> int:
        """Collect the outbox, then apply the records whose view changed, a batch per
        transaction (every record when the store shows another mirror, or none yet).
        Returns the atoms written."""
        more, whole = self._needed is None or self._needed(self.local.author), False
        while more:
            opened = self._view()
            if opened is None:
                return 0
            with opened as view:
                more = self._collect(view)
                whole = view.shows() != self.local.author
        written = self._rewrite() if whole else 0
        while True:
            marks = views.dirty_records(self.local, config.TEAM_RECORD_BATCH)
            if not marks:
                return written
            written += self._apply([(t, i) for t, i, _ in marks])
            views.clear(self.local, record_keys=marks)
            if len(marks) < config.TEAM_RECORD_BATCH:
                return written

    def _rewrite(self) -> int:
        through = views.generation(self.local)
        keys = self.local.record_keys()
        written = 0
        for i in range(0, len(keys), config.TEAM_RECORD_BATCH):
            written += self._apply(keys[i:i + config.TEAM_RECORD_BATCH])
        opened = self._view()
        if opened is not None:
            with opened as view:
                view.set_shows(self.local.author)
        views.clear_records_through(self.local, through)
        return written

    def _apply(self, keys: Sequence[tuple[str, str]]) -> int:
        opened = self._view()
        if opened is None:
            return 0
        written = 0
        with opened as view:
            self._collect(view)       # our own edits first: an unpushed one is the view
            for rtype, rid in keys:
                cur = self.local.record_current(rtype, rid)
                if cur is not None and view.apply(rtype, rid, cur["author"], cur["seq"],
                                                  cur["record"]):
                    written += 1
        return written

    def _collect(self, view: RecordStore) -> bool:
        return collect(self.local, view)


def collect(local: TeamLocal, view: SharedView | RecordStore) -> bool:
    """One batch of a store's outbox into the mirror, then out of the store (in the
    caller's transaction of it: a kill in between only collects the same events again);
    whether more is waiting."""
    author = view.author()
    if author is None:
        return False
    entries = view.pending(config.TEAM_PUSH_BATCH)
    if entries:
        local.collect(author, entries)
        view.acknowledge(entries[-1].seq)
    return len(entries) == config.TEAM_PUSH_BATCH
