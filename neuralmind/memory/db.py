"""MemoryDB: memory.db itself: per-thread connections, transactions, and the one write path.

Everything the memory stores (atoms, hubs, edges, the decision records, feedback) is
written inside `write()`, one IMMEDIATE transaction. Writers say what they changed with
`note(kind, id)`; before the commit, `write()` bumps the content generation (read by the
recall caches) and calls every registered write hook with the connection and the changes,
inside the same transaction, so a hook's own rows (a team outbox) land with the change or
not at all. Connections are per thread and managed internally (there is no close());
writes are short IMMEDIATE transactions so concurrent processes queue on the busy
timeout instead of failing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from neuralmind.memory import atoms, hubs, schema
from neuralmind.memory.atoms import Atom
from neuralmind.memory.clock import Clock
from neuralmind.memory.git import Git
from neuralmind.memory.vectors import VectorCache
from neuralmind.repo.learned import learned_dir
from neuralmind.statedir import state_dir

log = logging.getLogger("neuralmind.memory")

DB_NAME = "memory.db"
FTS_ENV = "NEURALMIND_DECISION_FTS"      # "0" forces the LIKE fallback
CONTENT_KINDS = frozenset({"atom", "deleted", "hub"})


@dataclass(frozen=True, slots=True)
class Change:
    """One thing a write transaction changed: `atom` (created, or its content, links or state
    changed), `deleted` (an atom is gone), `hub` (a hub's synonyms; `id` is its name),
    `feedback` (served/rated counters only)."""

    kind: str
    id: str


WriteHook = Callable[[sqlite3.Connection, list[Change]], None]


class MemoryDB:
    """The memory.db of one project: connections, transactions, the write path."""

    def __init__(self, root: Path, fts: bool | None = None, clock: Clock | None = None,
                 directory: Path | None = None) -> None:
        self.root = Path(root).resolve()
        # where memory.db lives: the repository's learned folder, shared by its worktrees
        # (repo/learned.py; the project's .neuralmind/ outside git)
        self.directory = Path(directory) if directory is not None else learned_dir(self.root)
        if fts is None:
            fts = os.environ.get(FTS_ENV, "1") != "0" and schema.fts5_available()
        self.use_fts = bool(fts)
        self.clock = clock or Clock()
        self.write_hooks: list[WriteHook] = []
        self._local = threading.local()
        self._init_lock = threading.Lock()
        self._ready = False
        self.read_only_reason: str | None = None   # set when memory.db can only be read
        self.vectors = VectorCache()                 # recall's matrix of atom vectors
        self._hubs: tuple[int, list[hubs.Hub]] = (-1, [])
        # recall's per-generation caches: prefix -> atoms holding it (the gate's IDF), and
        # hub -> its newest recallable members (the hub bonus)
        self.term_df: tuple[int, dict[str, int]] = (-1, {})
        self.hub_seqs: tuple[int, dict[str, set[int]]] = (-1, {})

    @property
    def path(self) -> Path:
        return self.directory / DB_NAME

    # --- connections ----------------------------------------------------------------------
    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; use `read`/`write` for transactions)."""
        if not self._ready:
            with self._init_lock:
                if not self._ready:
                    self._open()
                    self._ready = True
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = (schema.connect_read_only(self.path) if self.read_only_reason
                    else schema.connect(self.path))
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def _open(self) -> None:
        """Create, check or upgrade the schema; an existing memory.db this process may not
        write (a chmod, a read-only mount) is still read, and every write says why it cannot."""
        if self.path.is_file() and not schema.writable(self.path):
            self._open_read_only("no write permission")
            return
        try:
            state_dir(self.root)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            schema.initialise(self.path, self.use_fts)
        except (schema.StoreError, sqlite3.OperationalError, OSError) as e:
            if not self.path.is_file() or schema.writable(self.path):
                raise
            self._open_read_only(str(e))

    def _open_read_only(self, why: str) -> None:
        conn = schema.connect_read_only(self.path)
        try:
            self.use_fts = self.use_fts and schema.fts_current(conn)
        finally:
            conn.close()
        self.read_only_reason = f"{self.path.parent} is not writable"
        log.info("memory is read-only (%s)", why)    # each write says so as its error

    # --- transactions ---------------------------------------------------------------------
    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: all of it lands, or none of it. The one write path:
        the changes noted in it reach the write hooks inside the same transaction."""
        conn = self.connection()
        if self.read_only_reason:
            raise schema.ReadOnlyStore(f"Read-only decision memory: {self.read_only_reason}, so "
                                       "nothing can be recorded or changed (decisions can be read)")
        if getattr(self._local, "changes", None) is not None:
            raise RuntimeError("memory write transactions do not nest")
        conn.execute("BEGIN IMMEDIATE")
        self._local.changes = []
        try:
            yield conn
            changes: list[Change] = self._local.changes
            if changes:
                self._finish(conn, changes)
        except BaseException:
            self._local.changes = None
            conn.execute("ROLLBACK")
            raise
        self._local.changes = None
        conn.execute("COMMIT")

    def _finish(self, conn: sqlite3.Connection, changes: list[Change]) -> None:
        if any(c.kind in CONTENT_KINDS for c in changes):
            conn.execute("INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE "
                         "SET value = CAST(value AS INTEGER) + 1")
        unique = list(dict.fromkeys(changes))
        for hook in self.write_hooks:
            hook(conn, unique)

    def note(self, kind: str, atom_id: str) -> None:
        """Record a change of the current write transaction (for the generation and hooks)."""
        changes = getattr(self._local, "changes", None)
        if changes is None:
            raise RuntimeError("note() outside a memory write transaction")
        changes.append(Change(kind, atom_id))

    def add_write_hook(self, hook: WriteHook) -> None:
        """Call `hook(conn, changes)` inside every write transaction that changed something."""
        self.write_hooks.append(hook)

    def generation(self) -> int:
        """A number that changes whenever an atom's content, links or state changed."""
        row = self.connection().execute("SELECT value FROM meta WHERE key='generation'").fetchone()
        return int(row[0]) if row else 0

    def hub_list(self) -> list[hubs.Hub]:
        """Every hub with its synonyms (cached until the store changes)."""
        generation = self.generation()
        if self._hubs[0] != generation:
            self._hubs = (generation, hubs.load(self.connection()))
        return self._hubs[1]

    def apply_states(self, changes: list[tuple[Atom, str]]) -> None:
        """Store the states rank gave (recall met candidates below LOW_RANK)."""
        now = self.clock.iso()
        with self.write() as conn:
            for a, state in changes:
                conn.execute("UPDATE atoms SET state = ?, updated_at = ? WHERE id = ? AND state = ?",
                             (state, now, a.id, a.state))
                self.note("atom", a.id)
        for a, state in changes:
            atoms.publish_change("state", replace(a, state=state), by="rank")

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot across several SELECTs."""
        conn = self.connection()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def git(self) -> Git:
        return Git(self.root)
