"""Synchronisation: push the outbox, pull everyone's events; once, or as a long-lived task.

`TeamSync.sync_once` is what `neuralmind team sync` runs: the stores' own shared writes
are collected into the mirror (its bridges), pushed, everyone's events pulled, and what
changed written back into the stores. `SyncTask` is what a server runs: one thread whose connection LISTENs on the repository's NOTIFY channel and, when
a notification or a local write (`kick`) wakes it, pushes and catches up by position.
Any failure (server restarted, network cut) closes the connection and retries with a
doubling backoff; after reconnecting it LISTENs before it fetches, and the catch-up by
position finds everything missed, so a lost notification only delays, never loses.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import psycopg

from neuralmind import config, outbox
from neuralmind.errors import EngineError
from neuralmind.team.compaction import compact_all
from neuralmind.team.identity import RepoIdentity
from neuralmind.team.local import TeamLocal
from neuralmind.team.pg_schema import channel
from neuralmind.team.remote import RemoteEvent, RemoteStore, Unreachable

log = logging.getLogger("neuralmind.team")

IngestHook = Callable[[Sequence[RemoteEvent]], None]


class Bridge(Protocol):
    """A local store showing shared state (`bridge.py`): its outbox in, what changed out."""

    def exchange(self) -> int: ...


@dataclass(slots=True)
class SyncReport:
    pushed: int = 0
    duplicates: int = 0       # re-sent events the server already had (after a crash)
    pulled: int = 0           # events new to this machine
    head: int = 0             # the repository's last position on the server
    position: int = 0         # how far this machine has pulled
    unpushed: int = 0
    read_only: bool = False   # the role may pull but not push: the outbox waits
    shown: int = 0            # rows the local stores rewrote from the team's state
    records: int = 0          # teammates' record versions among the events pulled
    compacted: int = 0        # folded log rows dropped from the mirror

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class TeamSync:
    """Push and pull for one workspace over one (re)opened connection."""

    def __init__(self, local: TeamLocal, dsn: str, identity: RepoIdentity,
                 on_ingest: IngestHook | None = None, bridges: Sequence[Bridge] = ()) -> None:
        self.local = local
        self.dsn = dsn
        self.identity = identity
        self.on_ingest = on_ingest
        self.bridges = list(bridges)
        self._remote: RemoteStore | None = None
        self._read_only: bool | None = None
        self._head: int | None = None      # the store's head as last seen on this connection

    def remote(self) -> RemoteStore:
        if self._remote is None:
            self._remote = RemoteStore.open(self.dsn, self.identity)
            self._read_only = not self._remote.may_push()
        return self._remote

    def close(self) -> None:
        self._head = None
        if self._remote is not None:
            try:
                self._remote.close()
            except psycopg.Error:
                pass
            self._remote = None

    def sync_once(self) -> SyncReport:
        """Push everything pending, then pull everything new. Unreachable when the store
        cannot be reached (the connection is dropped so the next call reconnects)."""
        try:
            shown = self.exchange()                 # the stores' own events, to be pushed
            remote = self.remote()
            report = SyncReport(read_only=bool(self._read_only))
            if not self._read_only:
                report.pushed, report.duplicates = self._push(remote)
            report.pulled, report.head, report.records = self._pull(remote)
            report.shown = shown + self.exchange()  # and what was pulled, into them
            report.position = self.local.pulled(remote.key)
            report.unpushed = self.local.pending_count()
            return report
        except psycopg.Error as e:
            self.close()
            lines = str(e).strip().splitlines() or [type(e).__name__]
            raise Unreachable(f"team sync interrupted: {lines[-1].strip()}") from None

    def exchange(self) -> int:
        """Every bridge once; a store that is busy or broken is logged and tried again at
        the next sync (its events wait in its outbox)."""
        shown = 0
        for bridge in self.bridges:
            try:
                shown += bridge.exchange()
            except (sqlite3.Error, EngineError) as e:   # EngineError: memory.db unusable
                log.warning("team: could not exchange with %s: %s", type(bridge).__name__, e)
        return shown

    def compact(self) -> int:
        """Drop the folded log rows behind the pulled position (`compaction.py`)."""
        remote = self._remote
        return compact_all(self.local, remote.key) if remote is not None else 0

    def _push(self, remote: RemoteStore) -> tuple[int, int]:
        pushed = dups = 0
        while True:
            batch = self.local.pending(config.TEAM_PUSH_BATCH)
            if not batch:
                return pushed, dups
            result = remote.push(batch)
            self.local.acknowledge(batch)   # a kill before this re-sends: duplicates
            pushed += result.inserted
            dups += result.duplicates

    def _pull(self, remote: RemoteStore) -> tuple[int, int, int]:
        """Fetch and fold everything after this machine's position: (new events, head,
        teammates' record versions). One round trip when there is little to fetch (a busy
        team syncs often)."""
        key = remote.key
        position = self.local.pulled(key)
        if self._head is None:   # once per connection: was the store rebuilt under us?
            self._head = remote.head()
            if position > self._head:
                log.warning("team store head %d is behind this machine's position %d; pulling "
                            "again from the start (known events are not applied twice)",
                            self._head, position)
                self.local.reset_pulled(key)
                position = 0
        new = records = 0
        while True:
            batch = remote.fetch(position, config.TEAM_PULL_BATCH)
            if batch:
                new += self.local.ingest(key, batch)
                records += sum(e.kind == outbox.RECORD and e.author != self.local.author
                               for e in batch)
                position = batch[-1].pos
                if self.on_ingest is not None:
                    self.on_ingest(batch)
            if len(batch) < config.TEAM_PULL_BATCH:
                self._head = max(self._head, position)
                return new, self._head, records


class SyncTask:
    """The long-lived sync of a server: one thread, one connection that both syncs and
    LISTENs; reconnects with backoff and catches up by position. `on_change` (on this
    thread) gets the count of teammates' record versions a sync pulled; learning alone
    does not call it: a busy team would re-run every decision and review diagnostic at
    its own pace."""

    def __init__(self, sync: TeamSync, poll_seconds: float = config.TEAM_POLL_SECONDS,
                 on_change: Callable[[int], None] | None = None) -> None:
        self.sync = sync
        self.poll_seconds = poll_seconds
        self.on_change = on_change
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # rounds: syncs that ran; busy_cpu_s: this thread's CPU in them (time.thread_time:
        # its own cost to the process, whatever else shares the cores); longest_round_ms:
        # the longest one's wall time
        self._status: dict[str, Any] = {"connected": False, "last_error": None,
                                        "last_sync": None, "pushed": 0, "pulled": 0,
                                        "reconnects": 0, "read_only": False, "rounds": 0,
                                        "busy_cpu_s": 0.0, "longest_round_ms": 0.0}
        self._lock = threading.Lock()
        self._listening: psycopg.Connection | None = None
        self._compacted_at = time.monotonic()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="team-sync", daemon=True)
        self._thread.start()

    def kick(self) -> None:
        """Something was written locally: push it soon."""
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.sync.close()

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {**self._status, "busy_cpu_s": round(self._status["busy_cpu_s"], 3)}

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        backoff = config.TEAM_RECONNECT_MIN_S
        while not self._stop.is_set():
            self._wake.clear()
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                self._listen()
                report = self.sync.sync_once()
                self._timed(wall, cpu)
            except Exception as e:  # never let the sync take the server down
                message = e.message if isinstance(e, EngineError) else str(e)
                if not isinstance(e, (EngineError, psycopg.Error)):
                    log.exception("team sync failed")
                elif backoff == config.TEAM_RECONNECT_MIN_S:   # the first failure of a streak
                    log.warning("team store: %s (retrying)", message)
                self._set(connected=False, last_error=message)
                self._listening = None
                self.sync.close()
                self._stop.wait(backoff)
                backoff = min(backoff * 2, config.TEAM_RECONNECT_MAX_S)
                continue
            with self._lock:
                if backoff != config.TEAM_RECONNECT_MIN_S:
                    self._status["reconnects"] += 1
                self._status.update(connected=True, last_error=None, last_sync=time.time(),
                                    read_only=report.read_only, head=report.head,
                                    position=report.position, unpushed=report.unpushed)
                self._status["pushed"] += report.pushed
                self._status["pulled"] += report.pulled
            backoff = config.TEAM_RECONNECT_MIN_S
            self._compact()
            if report.records and self.on_change is not None:
                try:
                    self.on_change(report.records)
                except Exception:
                    log.exception("team change callback failed")
            try:
                self._wait()
            except psycopg.Error as e:     # the connection broke while idle: reconnect now
                log.debug("team store connection lost while waiting: %s", e)
                self._listening = None
                self.sync.close()

    def _timed(self, wall: float, cpu: float) -> None:
        """Count a round's cost (the editor's share of a busy team)."""
        ms = 1000 * (time.perf_counter() - wall)
        with self._lock:
            self._status["rounds"] += 1
            self._status["busy_cpu_s"] += time.thread_time() - cpu
            self._status["longest_round_ms"] = round(max(self._status["longest_round_ms"], ms), 1)

    def _compact(self) -> None:
        if time.monotonic() - self._compacted_at < config.TEAM_COMPACT_EVERY_S:
            return
        self._compacted_at = time.monotonic()
        try:
            n = self.sync.compact()
        except sqlite3.Error as e:
            log.warning("team: compacting the mirror failed: %s", e)
            return
        with self._lock:
            self._status["compacted"] = self._status.get("compacted", 0) + n

    def _listen(self) -> None:
        """LISTEN on the sync's connection (again after a reconnect) before syncing, so an
        event committed after the fetch always arrives as a notification."""
        remote = self.sync.remote()
        if self._listening is not remote.conn:
            # notifications that arrive while the connection runs the sync's queries are
            # kept by psycopg (>= 3.2) and returned first by the next notifies()
            remote.conn.execute(f"LISTEN {channel(remote.repo_id)}")
            self._listening = remote.conn

    def _wait(self) -> None:
        """Until a notification, a kick, the poll period or stop; then a short pause so a
        burst is synced as one batch."""
        conn = self._listening
        deadline = time.monotonic() + self.poll_seconds
        while not self._wake.is_set() and not self._stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if conn is None:
                self._wake.wait(left)
                break
            for _ in conn.notifies(timeout=min(left, config.TEAM_COALESCE_S), stop_after=1):
                self._wake.set()
        if not self._stop.is_set():
            if conn is not None:
                for _ in conn.notifies(timeout=config.TEAM_COALESCE_S):
                    pass   # gather the rest of the burst
            else:
                self._stop.wait(config.TEAM_COALESCE_S)

    def _set(self, **values: Any) -> None:
        with self._lock:
            self._status.update(values)

    def _repo_id(self) -> int | None:
        remote = self.sync._remote
        return remote.repo_id if remote is not None else None


__all__ = ["SyncReport", "SyncTask", "TeamSync"]
