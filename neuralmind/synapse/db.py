"""The synapse store's database: connection, schema, transactions, failing open, recovery.

`SynapseDB` owns `<state>/synapses.db` (SQLite, WAL): opening and migrating it, one
IMMEDIATE transaction per write, and the fail-open rule every public method of
`SynapseStore` follows (`fail_open`): a locked database logs a warning and returns
an empty result; a corrupt one is moved aside (never deleted) and a new store
started, with the rows SQLite can still read carried over. The decayed
("effective") weight expressions read by the store are here too.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from neuralmind import config
from neuralmind.sqlite_tx import immediate
from neuralmind.statedir import move_aside
from neuralmind.synapse.salvage import salvage_into
from neuralmind.synapse.schema import MIGRATIONS, Migration, migrate, read_version

log = logging.getLogger("neuralmind.synapse")

DAY = 86400.0
T = TypeVar("T")
Clock = Callable[[], float]


def _half_life_case(column: str, default: float, overrides: dict[str, float]) -> str:
    """SQL CASE giving the half-life in seconds for a row's namespace."""
    parts = [f"WHEN {column} = '{ns}' THEN {days * DAY!r}" for ns, days in overrides.items()]
    parts.append(f"WHEN substr({column}, 1, 7) = 'branch:' THEN "
                 f"{config.HALF_LIFE_DAYS['branch'] * DAY!r}")
    return f"(CASE {' '.join(parts)} ELSE {default * DAY!r} END)"


_NS_HALF_LIVES = {ns: d for ns, d in config.HALF_LIFE_DAYS.items() if ns != "branch"}
_SYN_HL = _half_life_case("namespace", config.HALF_LIFE_DAYS["personal"], _NS_HALF_LIVES)
_AGE = "max(0.0, :now - updated)"
# Effective synapse weight at :now; LTP edges decay LTP_HALF_LIFE_FACTOR times slower, floored.
SYN_EFF = (
    f"(CASE WHEN count >= {config.LTP_THRESHOLD} THEN "
    f"max({config.LTP_FLOOR!r}, weight * pow(0.5, {_AGE} / ({_SYN_HL} * {config.LTP_HALF_LIFE_FACTOR!r}))) "
    f"ELSE weight * pow(0.5, {_AGE} / {_SYN_HL}) END)"
)
_TR_HL = _half_life_case("namespace", config.TRANSITION_HALF_LIFE_DAYS,
                         {"ephemeral": config.HALF_LIFE_DAYS["ephemeral"]})
TR_EFF = f"(weight * pow(0.5, {_AGE} / {_TR_HL}))"
ACT_EFF = f"(level * pow(0.5, {_AGE} / {_SYN_HL}))"

SQLITE_CORRUPT, SQLITE_NOTADB = 11, 26


def is_corruption(e: sqlite3.DatabaseError) -> bool:
    """A damaged file (moved aside), as opposed to a lock or a failed constraint (skipped)."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (SQLITE_CORRUPT, SQLITE_NOTADB)
    return type(e) is sqlite3.DatabaseError


def fail_open(default: Callable[[], Any]) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Run a store operation; on a locked or damaged database log, recover and return default()."""

    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def inner(self: SynapseDB, *args: Any, **kwargs: Any) -> T:
            with self._lock:
                self._outcome.skipped = None
                try:
                    return fn(self, *args, **kwargs)
                except sqlite3.DatabaseError as e:
                    self._outcome.skipped = str(e)
                    if is_corruption(e):
                        log.warning("synapse store %s failed: %s", fn.__name__, e)
                        self._recover(str(e))
                    else:  # locked, busy, or a bad statement: skip this step, keep the store
                        log.warning("synapse store %s skipped (%s): %s", fn.__name__,
                                    self.path.name, e)
                        self._rollback()
                return default()

        return inner

    return wrap


class SynapseDB:
    """`<state>/synapses.db`: the connection and its recovery (see the module docstring).

    `clock` returns epoch seconds and is injectable so tests check decay exactly;
    every method also takes an explicit `now`.
    """

    def __init__(self, path: Path, clock: Clock = time.time,
                 busy_timeout_ms: int = config.SYNAPSE_BUSY_TIMEOUT_MS,
                 migrations: Sequence[Migration] = MIGRATIONS) -> None:
        self.path = Path(path)
        self.clock = clock
        self.busy_timeout_ms = busy_timeout_ms
        self.migrations = migrations
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self.disabled: str | None = None  # why the store refuses to touch the file, if it does
        self._outcome = threading.local()  # per thread: why the last operation did nothing

    # --- connection ---------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        if self.disabled:
            raise sqlite3.OperationalError(self.disabled)
        if self._conn is None:
            deadline = time.monotonic() + self.busy_timeout_ms / 1000
            while self._conn is None:
                try:
                    self._conn = self._open()
                except sqlite3.OperationalError as e:
                    # Switching a new file to WAL or migrating it needs an exclusive lock that
                    # SQLite's busy handler does not wait for: retry until the timeout. Other
                    # errors (a read-only or full folder) fail at once: a query must not wait.
                    busy = getattr(e, "sqlite_errorcode", 5) & 0xFF in (5, 6)  # BUSY, LOCKED
                    if self.disabled or not busy or time.monotonic() > deadline:
                        raise
                    time.sleep(0.01)
                except sqlite3.DatabaseError as e:
                    if not is_corruption(e):
                        raise
                    self._recover(str(e))  # not a database / malformed: start afresh
                    self._conn = self._open()
        return self._conn

    def _open(self, path: Path | None = None) -> sqlite3.Connection:
        path = path or self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=self.busy_timeout_ms / 1000,
                               isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            if not _has_pow(conn):
                conn.create_function("pow", 2, math.pow, deterministic=True)
            self._open_schema(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_schema(self, conn: sqlite3.Connection) -> None:
        version = read_version(conn)
        target = self.migrations[-1][0]
        if version > target:
            self.disabled = (f"{self.path.name} has schema v{version}, newer than this "
                             f"NeuralMind (v{target}); learning is off")
            raise sqlite3.OperationalError(self.disabled)
        if version < target:
            try:
                migrate(conn, self.migrations)
            except sqlite3.OperationalError:
                raise  # locked while migrating: try again on the next call
            except Exception as e:
                self.disabled = f"migration to v{target} failed and was rolled back: {e}"
                log.warning("synapse store: %s", self.disabled)
                raise sqlite3.OperationalError(self.disabled) from e

    def _rollback(self) -> None:
        if self._conn is not None and self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def _recover(self, reason: str) -> None:
        """Replace a damaged database by a new one holding every row still readable in it;
        the damaged file (and its WAL files) is moved aside, never deleted."""
        self.close()
        fresh = self.path.with_name(f".{self.path.name}.salvage")
        for leftover in (fresh, *(fresh.with_name(fresh.name + s) for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
        copied: dict[str, int] | None = None
        try:
            conn = self._open(fresh)
            try:
                copied = salvage_into(self.path, conn)
                conn.execute("PRAGMA journal_mode = DELETE")   # all of it in the one file
            finally:
                conn.close()
        except (sqlite3.Error, OSError) as e:
            log.warning("could not salvage %s: %s", self.path.name, e)
        moved = None
        for suffix in ("", "-wal", "-shm"):
            p = self.path.with_name(self.path.name + suffix)
            try:
                target = move_aside(p, reason)
            except OSError as e:
                log.warning("could not move %s aside: %s", p, e)
                target = None
            moved = moved or (target if suffix == "" else None)
        if moved is None or copied is None:       # cannot move it (read-only): keep it as is
            fresh.unlink(missing_ok=True)
            return
        os.replace(fresh, self.path)
        log.warning("%s was damaged (%s) and moved aside to %s; recovered into a new store: "
                    "%d synapses, %d transitions, %d activations, %d questions",
                    self.path.name, reason, moved.name, copied.get("synapses", 0),
                    copied.get("transitions", 0), copied.get("activations", 0),
                    copied.get("questions", 0))

    def last_skipped(self) -> str | None:
        """Why this thread's last store operation was skipped (None when it ran): learning
        fails open, so a caller that must report the truth (`neuralmind feedback`) asks."""
        return getattr(self._outcome, "skipped", None)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                except sqlite3.Error:
                    pass
                self._conn = None

    def _now(self, now: float | None) -> float:
        return self.clock() if now is None else float(now)

    def _write(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """One IMMEDIATE transaction: concurrent read-modify-write steps of two processes
        serialise instead of losing updates."""
        return immediate(self._db())

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The store's connection inside one IMMEDIATE transaction, holding its lock, for a
        caller that is not a learning path: errors are raised, not failed open."""
        with self._lock, immediate(self._db()) as conn:
            yield conn

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The store's connection for reads outside the learning paths (errors raised)."""
        with self._lock:
            yield self._db()

    @property
    def schema_version(self) -> int:
        return read_version(self._db())


def _has_pow(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("SELECT pow(2, 2)").fetchone()
        return True
    except sqlite3.OperationalError:
        return False
