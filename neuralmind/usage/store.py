"""`usage.db`: each answer, the files it returned, and what of them was used.

An answer's use window is the USE_WINDOW_SECONDS after it: a returned file opened in
that window counts as opened, one changed (an editor edit or save, an agent's write, a
file changed on disk) as edited; every file changed in the window is `touched`, returned
or not. A touched file is `kept` when the next commit still changes it (an edit undone
before the commit is not kept). An answer settles once its window has closed and its
touched files are resolved by a commit (or after KEEP_WAIT_SECONDS without one: then
nothing was kept); the engine learns from it once.

The store lives in the repository's learned folder (shared by its worktrees) and fails
open like the synapse store: a locked or unwritable database logs a warning and the
answer is served without being recorded.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from neuralmind.config import (
    KEEP_WAIT_SECONDS,
    SYNAPSE_BUSY_TIMEOUT_MS,
    USE_UNUSED_TOP,
    USE_WINDOW_SECONDS,
)
from neuralmind.statedir import move_aside

log = logging.getLogger("neuralmind.usage")

DB_NAME = "usage.db"
SCHEMA_VERSION = 1
T = TypeVar("T")

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS answers (
        id INTEGER PRIMARY KEY, ts REAL NOT NULL, kind TEXT NOT NULL, session TEXT NOT NULL,
        question TEXT NOT NULL, tokens INTEGER NOT NULL, codebase_tokens INTEGER,
        settled INTEGER NOT NULL DEFAULT 0)""",
    "CREATE INDEX IF NOT EXISTS answers_ts ON answers (ts)",
    "CREATE INDEX IF NOT EXISTS answers_open ON answers (settled, ts)",
    """CREATE TABLE IF NOT EXISTS returned (
        answer INTEGER NOT NULL, rank INTEGER NOT NULL, file TEXT NOT NULL,
        opened INTEGER NOT NULL DEFAULT 0, edited INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (answer, file)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS returned_file ON returned (file, answer)",
    """CREATE TABLE IF NOT EXISTS touched (
        answer INTEGER NOT NULL, file TEXT NOT NULL, kept INTEGER,
        PRIMARY KEY (answer, file)) WITHOUT ROWID""",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


@dataclass
class Returned:
    file: str
    rank: int
    opened: bool
    edited: bool

    @property
    def used(self) -> bool:
        return self.opened or self.edited


@dataclass
class Settled:
    """An answer whose use is known: what it returned, what was touched and kept."""

    id: int
    ts: float
    kind: str
    session: str
    question: str
    returned: list[Returned]
    touched: dict[str, bool] = field(default_factory=dict)    # file -> kept

    @property
    def kept(self) -> list[str]:
        return sorted(f for f, k in self.touched.items() if k)


def _fail_open(default: Callable[[], Any]) -> Callable[[Callable[..., T]], Callable[..., T]]:
    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def inner(self: UsageStore, *args: Any, **kwargs: Any) -> T:
            with self._lock:
                try:
                    return fn(self, *args, **kwargs)
                except sqlite3.DatabaseError as e:
                    log.warning("answer use store %s skipped (%s): %s", fn.__name__,
                                self.path, e)
                    self._reset(e)
                    return default()
        return inner
    return wrap


class UsageStore:
    """The answers of one repository and their use (thread-safe; one connection)."""

    def __init__(self, directory: Path, clock: Callable[[], float] = time.time,
                 window: float = USE_WINDOW_SECONDS, keep_wait: float = KEEP_WAIT_SECONDS,
                 ) -> None:
        self.path = Path(directory) / DB_NAME
        self.clock = clock
        self.window = window
        self.keep_wait = keep_wait
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    # --- connection ---------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=SYNAPSE_BUSY_TIMEOUT_MS / 1000,
                                   isolation_level=None, check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                              (str(SCHEMA_VERSION),))
            except sqlite3.Error:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _reset(self, error: sqlite3.DatabaseError) -> None:
        """Drop the connection; a damaged file is moved aside (never deleted)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if type(error) is sqlite3.DatabaseError or "malformed" in str(error):
            move_aside(self.path, str(error))

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: all of it lands or none."""
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _now(self, now: float | None) -> float:
        return self.clock() if now is None else now

    # --- writing --------------------------------------------------------------------------
    @_fail_open(lambda: None)
    def record(self, kind: str, session: str, question: str, files: Sequence[str],
               tokens: int, codebase_tokens: int | None, now: float | None = None,
               ) -> int | None:
        """Keep an answer and the files it returned (best first); its id."""
        with self._write() as db:
            cur = db.execute(
                "INSERT INTO answers(ts, kind, session, question, tokens, codebase_tokens) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (self._now(now), kind, session, question, int(tokens), codebase_tokens))
            answer = int(cur.lastrowid or 0)
            db.executemany("INSERT OR IGNORE INTO returned(answer, rank, file) VALUES (?, ?, ?)",
                           [(answer, i, f) for i, f in enumerate(dict.fromkeys(files), 1)])
        return answer

    @_fail_open(lambda: 0)
    def note(self, events: Iterable[tuple[str, str, float]]) -> int:
        """Credit answers whose window holds each (kind "open" or "edit", file, time);
        returns how many credits were written."""
        written = 0
        with self._write() as db:
            for kind, file, ts in events:
                window = {"f": file, "lo": ts - self.window, "hi": ts}
                if kind == "edit":
                    written += db.execute(
                        "INSERT OR IGNORE INTO touched(answer, file) SELECT id, :f FROM answers "
                        "WHERE settled = 0 AND ts BETWEEN :lo AND :hi", window).rowcount
                column = "edited" if kind == "edit" else "opened"
                written += db.execute(
                    f"UPDATE returned SET {column} = 1 WHERE file = :f AND {column} = 0 AND "
                    "answer IN (SELECT id FROM answers WHERE ts BETWEEN :lo AND :hi)",
                    window).rowcount
        return written

    @_fail_open(lambda: 0)
    def commit(self, changed: Iterable[str], now: float | None = None) -> int:
        """A commit was made: every touched file of an answer not settled yet is kept when
        the commit changes it. Returns how many touched files it resolved. Only unsettled
        answers are visited (answers_open): a settled one has learned what it teaches, and
        visiting every answer ever recorded made each commit slower as usage.db grew."""
        files = sorted(set(changed))
        with self._write() as db:
            db.execute("CREATE TEMP TABLE IF NOT EXISTS committed (file TEXT PRIMARY KEY)")
            db.execute("DELETE FROM committed")
            db.executemany("INSERT OR IGNORE INTO committed VALUES (?)", [(f,) for f in files])
            n = db.execute(
                "UPDATE touched SET kept = (file IN (SELECT file FROM committed)) "
                "WHERE kept IS NULL AND answer IN (SELECT id FROM answers WHERE settled = 0 "
                "AND ts <= ?)",
                (self._now(now),)).rowcount
        return n

    @_fail_open(list)
    def settle(self, now: float | None = None) -> list[Settled]:
        """The answers whose use is now known (window closed, touched files resolved or
        waited on long enough), marked settled: each is returned once."""
        t = self._now(now)
        with self._write() as db:
            rows = db.execute(
                "SELECT id, ts, kind, session, question FROM answers a WHERE settled = 0 "
                "AND ts <= :closed AND (ts <= :waited OR NOT EXISTS (SELECT 1 FROM touched "
                "WHERE answer = a.id AND kept IS NULL)) ORDER BY id",
                {"closed": t - self.window, "waited": t - self.keep_wait}).fetchall()
            out = [Settled(int(i), float(ts), kind, session, q, []) for i, ts, kind, session, q
                   in rows]
            by_id = {s.id: s for s in out}
            if out:
                marks = ",".join("?" * len(out))
                ids = [s.id for s in out]
                for a, rank, f, opened, edited in db.execute(
                        f"SELECT answer, rank, file, opened, edited FROM returned WHERE answer "
                        f"IN ({marks}) ORDER BY answer, rank", ids):
                    by_id[a].returned.append(Returned(f, int(rank), bool(opened), bool(edited)))
                for a, f, kept in db.execute(
                        f"SELECT answer, file, kept FROM touched WHERE answer IN ({marks})", ids):
                    by_id[a].touched[f] = bool(kept)
                db.executemany("UPDATE answers SET settled = 1 WHERE id = ?", [(i,) for i in ids])
        return out

    # --- reading --------------------------------------------------------------------------
    @_fail_open(lambda: None)
    def version(self) -> tuple[int, int] | None:
        """Changes to the answers since this store was opened: rows this connection wrote,
        and SQLite's data_version (moved by any other connection's commit: a CLI answer).
        Equal versions mean an equal savings report, so it is not read again."""
        db = self._db()
        return db.total_changes, int(db.execute("PRAGMA data_version").fetchone()[0])

    @_fail_open(list)
    def answers(self, since: float | None = None, top: int = USE_UNUSED_TOP) -> list[dict[str, Any]]:
        """Every answer (since a time), oldest first, with its use counted in SQL: `returned`
        files, how many were `used` (opened or edited), how many of its first `top` were
        (`used_top`), and how many files its window `touched`. Counted, not listed: the status
        makes this report every minute, and reading each answer's files as JSON took 0.7 s of
        the engine thread at 6,000 answers."""
        rows = self._db().execute(
            "SELECT a.id, a.ts, a.kind, a.tokens, a.codebase_tokens, a.settled, "
            "COALESCE(r.n, 0), COALESCE(r.used, 0), COALESCE(r.used_top, 0), COALESCE(t.n, 0) "
            "FROM answers a "
            "LEFT JOIN (SELECT answer, COUNT(*) AS n, SUM(opened OR edited) AS used, "
            "  SUM(rank <= :top AND (opened OR edited)) AS used_top FROM returned "
            "  GROUP BY answer) r ON r.answer = a.id "
            "LEFT JOIN (SELECT answer, COUNT(*) AS n FROM touched GROUP BY answer) t "
            "  ON t.answer = a.id "
            "WHERE a.ts >= :since ORDER BY a.id", {"top": top, "since": since or 0.0})
        keys = ("id", "ts", "kind", "tokens", "codebase_tokens", "settled", "returned", "used",
                "used_top", "touched")
        return [dict(zip(keys, row, strict=True)) | {"settled": bool(row[5])} for row in rows]
