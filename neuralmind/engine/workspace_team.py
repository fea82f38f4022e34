"""The team brain on a `Workspace` (a mixin, as the memory operations are): whether a
team store is configured, the `Team` operations, a server's sync task, the memory
store's team outbox (registered when a store is configured, so every process that
writes memory queues its team-visible writes), and the decision audit with the
concurrent edits the team store holds.

psycopg and the team component load only when a team is used."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.config import TEAM_DSN_ENV

if TYPE_CHECKING:
    from neuralmind.config import WorkspaceConfig
    from neuralmind.memory.decisions.audit import AuditReport
    from neuralmind.memory.sharing import RecordView
    from neuralmind.memory.store import MemoryStore
    from neuralmind.synapse.layer import SynapseLayer
    from neuralmind.team.service import Team
    from neuralmind.team.sync import SyncTask


class WorkspaceTeam:
    """The team store operations of a Workspace."""

    # provided by Workspace
    root: Path
    config: WorkspaceConfig
    memory: MemoryStore
    _synapses_or_none: Callable[[], SynapseLayer | None]

    def team_configured(self) -> bool:
        """A team store is configured (the environment or `team_dsn`): learning on the
        default branch and team-visible memory are shared. Checked without loading the
        team component."""
        return bool(os.environ.get(TEAM_DSN_ENV, "").strip() or self.config.team_dsn.strip())

    @functools.cached_property
    def team(self) -> Team:
        # psycopg and the team component (~60 ms) load only when a team is used
        from neuralmind.team.service import Team

        return Team(self.root, synapses=self._synapses_or_none, records=self._team_records,
                    records_needed=self._team_records_needed)

    def team_sync_task(self, on_change: Callable[[int], None] | None = None) -> SyncTask | None:
        """A server's team sync (not started) when a store is configured, woken by every
        local shared write; EngineError when the folder has no repository identity."""
        if not self.team_configured():
            return None
        task = self.team.sync_task(on_change)
        if task is None:
            return None
        layer = self._synapses_or_none()
        if layer is not None:
            layer.on_share = task.kick
        # the sharing module loads with the team component, never for a lone memory store
        from neuralmind.memory.sharing import share

        share(self.memory).on_write = task.kick
        return task

    def _team_memory(self, store: MemoryStore) -> MemoryStore:
        """The memory store, queueing its team-visible writes when a store is configured."""
        if self.team_configured():
            # only with a team store: a memory store alone never loads the sharing module
            from neuralmind.memory.sharing import share

            share(store)
        return store

    def _team_records(self) -> AbstractContextManager[RecordView] | None:
        """A write transaction of the memory store for the team sync (None when memory.db
        can only be read: teammates' versions wait in the mirror)."""
        # loaded with the team component (the sync calls this)
        from neuralmind.memory.sharing import record_view

        store = self.memory
        store.connection()
        return None if store.read_only_reason else record_view(store)

    def _team_records_needed(self, mirror: str) -> bool:
        """Whether the memory store has team events to collect or shows another mirror."""
        # loaded with the team component (the sync calls this)
        from neuralmind.memory.sharing import exchange_needed

        return exchange_needed(self.memory, mirror)

    def decisions_audit(self, stale: bool = False, orphaned: bool = False) -> AuditReport:
        """The decisions audit, with the concurrent edits the team store kept: a decision
        two teammates changed from the same version needs a person's attention."""
        report = self.memory.audit(stale=stale, orphaned=orphaned)
        if not self.team_configured():
            return report
        conflicts = {c["id"]: c for c in self.team.local.conflicts("decision")}
        if not conflicts:
            return report
        listed = {e.decision.id for e in report.entries}
        if stale or orphaned:       # a conflict needs attention too
            full = self.memory.audit()
            report.entries += [e for e in full.entries
                               if e.decision.id in conflicts and e.decision.id not in listed]
        for e in report.entries:
            found = conflicts.get(e.decision.id)
            if found is not None:
                e.attention.append("conflict")
                e.conflict = _versions(found)
        return report


def _versions(conflict: dict[str, Any]) -> list[dict[str, Any]]:
    """The competing versions of a record as the audit lists them."""
    return [{"author": v["author"], "seq": v["seq"], "current": v["current"],
             "title": v["record"].get("title"), "status": v["record"].get("status"),
             "by": v["record"].get("author"), "deleted": bool(v["record"].get("deleted"))}
            for v in conflict["versions"]]
