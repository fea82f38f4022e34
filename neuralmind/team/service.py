"""The team operations of one workspace, as the engine offers them to the CLI and servers.

`Team(root, synapses, records)` knows where the DSN comes from, the repository identity,
the local mirror and the stores that show shared state (the synapse layer, through a
`SynapseBridge`; the memory store's decisions and team-visible atoms, through a
`RecordBridge`); each method is one command: connect, status, sync, disconnect,
publish-index, pull-index, and `sync_task` is a server's long-lived sync. The store
being unreachable is an `Unreachable` error for a command and a status field for
`status`; nothing local is lost or changed by it.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from neuralmind.config import load_workspace_config
from neuralmind.errors import EngineError
from neuralmind.statedir import state_dir
from neuralmind.synapse.layer import SynapseLayer
from neuralmind.team import dsn as dsn_mod
from neuralmind.team import settings, snapshots
from neuralmind.team.bridge import RecordBridge, RecordStore, SynapseBridge
from neuralmind.team.identity import RepoIdentity, repo_identity
from neuralmind.team.local import TeamLocal
from neuralmind.team.remote import RemoteStore
from neuralmind.team.sync import SyncReport, SyncTask, TeamSync

log = logging.getLogger("neuralmind.team")


class Team:
    """Team store operations for the workspace at `root`."""

    def __init__(self, root: Path,
                 synapses: Callable[[], SynapseLayer | None] | None = None,
                 records: Callable[[], AbstractContextManager[RecordStore] | None] | None = None,
                 records_needed: Callable[[str], bool] | None = None) -> None:
        """`synapses`: the workspace's synapse layer (None while learning is off), whose
        `shared` namespace the sync keeps equal to the team's; `records`: a write
        transaction of its memory store (`memory.sharing.record_view`), whose decisions
        and team-visible atoms the sync keeps equal to the team's current view;
        `records_needed(mirror)`: whether it has anything to exchange (a read, so a round
        with nothing to do takes no write transaction of memory.db)."""
        self.root = Path(root).resolve()
        self._synapses = synapses
        self._records = records
        self._records_needed = records_needed

    @functools.cached_property
    def local(self) -> TeamLocal:
        return TeamLocal(state_dir(self.root))

    @functools.cached_property
    def identity(self) -> RepoIdentity:
        return repo_identity(self.root)

    def configured(self) -> dsn_mod.TeamDsn | None:
        return dsn_mod.resolve(load_workspace_config(self.root).team_dsn)

    def _dsn(self) -> str:
        found = self.configured()
        if found is None:
            raise EngineError("team_not_configured",
                              "no team store for this workspace: run `neuralmind team connect "
                              "DSN` (or set $NEURALMIND_TEAM_DSN)")
        return found.dsn

    def _remote(self, create: bool = True) -> RemoteStore:
        return RemoteStore.open(self._dsn(), self.identity, create=create)

    # --- commands ------------------------------------------------------------------------
    def connect(self, dsn: str) -> dict[str, Any]:
        """Check the DSN (no password), reach the store (migrating it when this is the
        first connection), register the repository, save the DSN, sync once."""
        stored = dsn_mod.storable(dsn)
        identity = self.identity
        remote = RemoteStore.open(stored, identity)
        try:
            role, may_push = remote.role, remote.may_push()
        finally:
            remote.close()
        settings.write_dsn(self.root, stored)
        report = self.sync()
        return {"connected": True, "dsn": dsn_mod.redact(stored), "role": role,
                "read_only": not may_push, "repository": identity.to_json(),
                "sync": report.to_json()}

    def disconnect(self) -> dict[str, Any]:
        """Forget the DSN; the local mirror and any unpushed events stay (reconnecting
        pushes them)."""
        had = bool(settings.read_dsn(self.root))
        settings.write_dsn(self.root, None)
        out: dict[str, Any] = {"disconnected": had, "unpushed": self.local.pending_count()}
        if self.configured() is not None:
            out["notice"] = "$NEURALMIND_TEAM_DSN is still set and still connects this workspace"
        return out

    def _sync(self, dsn: str) -> TeamSync:
        bridges: list[SynapseBridge | RecordBridge] = (
            [SynapseBridge(self.local, self._synapses)] if self._synapses else [])
        if self._records is not None:
            bridges.append(RecordBridge(self.local, self._records, self._records_needed))
        return TeamSync(self.local, dsn, self.identity, bridges=bridges)

    def sync(self) -> SyncReport:
        sync = self._sync(self._dsn())
        try:
            report = sync.sync_once()
            report.compacted = sync.compact()
            return report
        finally:
            sync.close()

    def sync_task(self, on_change: Callable[[int], None] | None = None) -> SyncTask | None:
        """A server's long-lived sync (not started), or None when no store is configured.
        EngineError when this is not a git repository with a commit (no identity)."""
        found = self.configured()
        if found is None:
            return None
        _ = self.identity       # fails here, before a thread is started
        return SyncTask(self._sync(found.dsn), on_change=on_change)

    def status(self) -> dict[str, Any]:
        found = self.configured()
        out: dict[str, Any] = {"root": str(self.root), "configured": found is not None,
                               "dsn": dsn_mod.redact(found.dsn) if found else None,
                               "dsn_source": found.source if found else None,
                               "local": self.local.counts(), "author": self.local.author}
        layer = self._synapses() if self._synapses else None
        if layer is not None:        # shared learning not yet taken from the synapse store
            out["local"]["unpushed"] += layer.unsent()
        records = self._records() if self._records else None
        if records is not None:      # decisions and memory not yet taken from memory.db
            with records as view:
                out["local"]["unpushed"] += view.unsent()
        try:
            out["repository"] = self.identity.to_json()
        except EngineError as e:
            out["repository"] = None
            out["error"] = e.message
            return out
        if found is None:
            return out
        t0 = time.perf_counter()
        try:
            remote = RemoteStore.open(found.dsn, self.identity, create=False)
        except EngineError as e:
            out.update(reachable=e.code != "team_unreachable", error=e.message)
            return out
        try:
            counts = remote.counts()
            out.update(reachable=True, role=remote.role, read_only=not remote.may_push(),
                       head=counts["head"], authors=counts["authors"],
                       position=self.local.pulled(remote.key),
                       snapshots=len(snapshots.list_snapshots(remote)),
                       latency_ms=round((time.perf_counter() - t0) * 1000, 1))
        finally:
            remote.close()
        return out

    def publish_index(self, ref: str = "HEAD", build: Callable[[], Any] | None = None,
                      ) -> dict[str, Any]:
        """Bring the index up to date (`build`: the engine's, passed in by the caller, as
        this component sits below the engine), then publish it as commit `ref`'s snapshot."""
        sha = snapshots.resolve_commit(self.root, ref)
        snapshots.check_tree_matches(self.root, sha)
        build_s = 0.0
        if build is not None:
            t0 = time.perf_counter()
            build()
            build_s = time.perf_counter() - t0
        remote = self._remote()
        try:
            out = snapshots.publish(remote, self.root, state_dir(self.root), sha,
                                    self.local.author)
        finally:
            remote.close()
        out["build_seconds"] = round(build_s, 3)
        return out

    def pull_index(self, force: bool = False, update: Callable[[], Any] | None = None,
                   ) -> dict[str, Any]:
        """Install the nearest ancestor's snapshot, then update it to the working tree with
        `update` (the engine's incremental build, returning its report)."""
        state = state_dir(self.root)
        if snapshots.local_index_exists(state) and not force:
            raise EngineError("invalid_argument",
                              "this workspace already has an index; pass --force to replace it "
                              "with the team's snapshot")
        remote = self._remote(create=False)
        try:
            found = snapshots.nearest(self.root, snapshots.list_snapshots(remote))
            if found is None:
                raise EngineError("not_found", "the team store has no snapshot of HEAD or of any "
                                  "of its ancestors: a teammate or CI publishes one with "
                                  "`neuralmind team publish-index`")
            snap, distance = found
            out = snapshots.pull(remote, state, snap)
        finally:
            remote.close()
        out["distance"] = distance
        if update is not None:
            t0 = time.perf_counter()
            report = update()
            out["update_seconds"] = round(time.perf_counter() - t0, 3)
            out["reextracted"] = len(report.reextracted)
            out["removed"] = len(report.removed)
        return out
