"""DecisionDB: memory.db itself: per-thread connections, transactions, loading and searching.

The helpers that work on stored decisions (audit, scan, governing symbols, transfer,
progressive retrieval) take a DecisionDB; `DecisionStore` (store.py) is the API on top
that records and changes decisions and delegates to those helpers. Connections are
per thread and managed internally (there is no close()); writes are short IMMEDIATE
transactions so concurrent processes queue on the busy timeout instead of failing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from neuralmind.decisions import schema
from neuralmind.decisions.git import Git, GitError
from neuralmind.decisions.record import Decision, normalise_status
from neuralmind.decisions.search import DecisionHits, run_search
from neuralmind.errors import InvalidArgument, NotFound
from neuralmind.repo.learned import learned_dir
from neuralmind.statedir import state_dir

log = logging.getLogger("neuralmind.decisions")

DB_NAME = "memory.db"
FTS_ENV = "NEURALMIND_DECISION_FTS"      # "0" forces the LIKE fallback
_LIST_FIELDS = ("files_affected", "symbols_affected", "rejected_alternatives", "evidence",
                "tags", "depends_on")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class DecisionNotFound(NotFound, KeyError):
    """No decision has that id (or the prefix is ambiguous)."""

    def __str__(self) -> str:
        return str(self.args[0])


class DecisionDB:
    """The stored decisions of one project: read, search, write whole records."""

    def __init__(self, root: Path, fts: bool | None = None, directory: Path | None = None,
                 ) -> None:
        self.root = Path(root).resolve()
        # where memory.db lives: the repository's learned folder, shared by its worktrees
        # (repo/learned.py; the project's .neuralmind/ outside git)
        self.directory = Path(directory) if directory is not None else learned_dir(self.root)
        if fts is None:
            fts = os.environ.get(FTS_ENV, "1") != "0" and schema.fts5_available()
        self.use_fts = bool(fts)
        self._local = threading.local()
        self._init_lock = threading.Lock()
        self._ready = False
        self.read_only_reason: str | None = None   # set when memory.db can only be read

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
        """Create or check the schema; an existing memory.db this process may not write
        (a chmod, a read-only mount) is still read, and every write says why it cannot."""
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
        log.info("decisions are read-only (%s)", why)    # each write says so as its error

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: all of it lands, or none of it."""
        conn = self.connection()
        if self.read_only_reason:
            raise schema.ReadOnlyStore(f"Read-only decision memory: {self.read_only_reason}, so "
                                    "nothing can be recorded or changed (decisions can be read)")
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

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

    # --- loading --------------------------------------------------------------------------
    def load(self, conn: sqlite3.Connection, where: str = "", params: tuple[Any, ...] = ()) -> list[Decision]:
        """Decisions matching a SQL tail (`WHERE ... ORDER BY ...`), fingerprints attached."""
        rows = conn.execute(f"SELECT * FROM decisions {where}", params).fetchall()
        if not rows:
            return []
        prints: dict[str, dict[str, str]] = {}
        ids = [r["id"] for r in rows]
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            for fp in conn.execute(
                    "SELECT decision_id, path, blob FROM decision_fingerprints WHERE decision_id IN "
                    f"({','.join('?' * len(chunk))})", chunk):
                prints.setdefault(fp[0], {})[fp[1]] = fp[2]
        out = []
        for r in rows:
            d = {k: r[k] for k in r.keys() if k != "seq"}  # noqa: SIM118 (a Row iterates values)
            for f in _LIST_FIELDS:
                d[f] = json.loads(d[f])
            d["fingerprints"] = prints.get(r["id"], {})
            out.append(Decision.from_json(d))
        return out

    def decisions(self, status: str = "ALL") -> list[Decision]:
        """Decisions in recording order, optionally of one status."""
        status = normalise_status(status, allow_all=True)
        with self.read() as conn:
            if status == "ALL":
                return self.load(conn, "ORDER BY seq")
            return self.load(conn, "WHERE status = ? ORDER BY seq", (status,))

    def resolve_id(self, id_or_prefix: str) -> str:
        """The full id for an id or a unique prefix of one (at least 4 characters)."""
        key = id_or_prefix.strip()
        conn = self.connection()
        if conn.execute("SELECT 1 FROM decisions WHERE id = ?", (key,)).fetchone():
            return key
        if len(key) >= 4:
            rows = conn.execute("SELECT id FROM decisions WHERE id LIKE ? ESCAPE '\\' LIMIT 2",
                                (key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",)).fetchall()
            if len(rows) == 1:
                return str(rows[0][0])
            if len(rows) > 1:
                raise DecisionNotFound(f"decision id prefix {key!r} is ambiguous")
        raise DecisionNotFound(f"no decision with id {key!r}")

    def get(self, decision_id: str) -> Decision:
        """The full record; DecisionNotFound when there is none."""
        full = self.resolve_id(decision_id)
        with self.read() as conn:
            return self.load(conn, "WHERE id = ?", (full,))[0]

    def get_many(self, ids: list[str]) -> list[Decision]:
        """Full records in the order asked; unknown ids raise DecisionNotFound."""
        full = [self.resolve_id(i) for i in ids]
        with self.read() as conn:
            by_id = {d.id: d for d in self.load(
                conn, f"WHERE id IN ({','.join('?' * len(full))})", tuple(full))} if full else {}
        return [by_id[i] for i in full]

    def by_seq(self, seqs: list[int]) -> dict[int, Decision]:
        if not seqs:
            return {}
        with self.read() as conn:
            rows = conn.execute(f"SELECT seq, id FROM decisions WHERE seq IN ({','.join('?' * len(seqs))})",
                                seqs).fetchall()
            loaded = {d.id: d for d in self.load(
                conn, f"WHERE seq IN ({','.join('?' * len(seqs))})", tuple(seqs))}
        return {int(r[0]): loaded[r[1]] for r in rows}

    def insert(self, d: Decision) -> bool:
        """Insert a complete record as is (import); False when its id already exists."""
        with self.write() as conn:
            if conn.execute("SELECT 1 FROM decisions WHERE id = ?", (d.id,)).fetchone():
                return False
            cur = conn.execute(
                "INSERT INTO decisions (id, title, rationale, decision_type, status, commit_sha, "
                "files_affected, symbols_affected, rejected_alternatives, evidence, confidence, tags, "
                "author, created_at, updated_at, anchored_at, depends_on) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (d.id, d.title, d.rationale, d.decision_type, d.status, d.commit_sha,
                 *(json.dumps(getattr(d, f)) for f in _LIST_FIELDS[:4]), d.confidence,
                 json.dumps(d.tags), d.author, d.created_at, d.updated_at,
                 d.anchored_at or d.created_at, json.dumps(d.depends_on)))
            self._index(conn, int(cur.lastrowid or 0), d)
            self._set_fingerprints(conn, d.id, d.fingerprints)
        return True

    def save(self, conn: sqlite3.Connection, d: Decision) -> None:
        """Write every field of an existing record inside the caller's transaction."""
        d.updated_at = now_iso()
        conn.execute(
            "UPDATE decisions SET title=?, rationale=?, decision_type=?, status=?, commit_sha=?, "
            "files_affected=?, symbols_affected=?, rejected_alternatives=?, evidence=?, confidence=?, "
            "tags=?, updated_at=?, anchored_at=?, depends_on=? WHERE id=?",
            (d.title, d.rationale, d.decision_type, d.status, d.commit_sha,
             *(json.dumps(getattr(d, f)) for f in _LIST_FIELDS[:4]), d.confidence,
             json.dumps(d.tags), d.updated_at, d.anchored_at, json.dumps(d.depends_on), d.id))
        seq = conn.execute("SELECT seq FROM decisions WHERE id = ?", (d.id,)).fetchone()[0]
        self._index(conn, int(seq), d)
        self._set_fingerprints(conn, d.id, d.fingerprints)

    def _index(self, conn: sqlite3.Connection, seq: int, d: Decision) -> None:
        if self.use_fts:
            conn.execute("DELETE FROM decisions_fts WHERE rowid = ?", (seq,))
            conn.execute("INSERT INTO decisions_fts(rowid, title, rationale) VALUES (?, ?, ?)",
                         (seq, d.title, d.rationale))
        else:  # an FTS-capable process re-indexes on its next open
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('fts_dirty', '1')")

    @staticmethod
    def _set_fingerprints(conn: sqlite3.Connection, decision_id: str, prints: dict[str, str]) -> None:
        conn.execute("DELETE FROM decision_fingerprints WHERE decision_id = ?", (decision_id,))
        conn.executemany("INSERT INTO decision_fingerprints VALUES (?, ?, ?)",
                         [(decision_id, p, b) for p, b in sorted(prints.items())])

    # --- searching ------------------------------------------------------------------------
    def search(self, question: str, mode: str | None = None, status: str = "ACTIVE",
               limit: int = 10) -> DecisionHits:
        """Rank decisions for a question; `.mode` is the mode that ran, `.notice` why it differs.

        ValueError for an unknown mode or status; SemanticUnavailable for mode="semantic"
        without the model.
        """
        status = normalise_status(status, allow_all=True)
        if limit < 1:
            raise InvalidArgument("limit must be at least 1")
        conn = self.connection()
        ranking, ran, requested, notice, embedded, terms = run_search(
            conn, question, mode, status, limit, self.use_fts, self.write)
        records = self.by_seq([s for s, _ in ranking])
        pairs = [(records[s], score) for s, score in ranking if s in records]
        return DecisionHits([p[0] for p in pairs], [p[1] for p in pairs], ran, requested, notice,
                            embedded, terms)

    def query(self, question: str, mode: str | None = None, status: str = "ACTIVE",
              limit: int = 10) -> list[Decision]:
        """Just the records of `search` (the seed's Python API)."""
        return self.search(question, mode=mode, status=status, limit=limit).records

    # --- fingerprints -----------------------------------------------------------------------
    def _working_fingerprints(self, files: list[str]) -> dict[str, str]:
        present = [f for f in files if (self.root / f).is_file()]
        if not present:
            return {}
        try:
            blobs = self.git().hash_files([self.root / f for f in present])
        except GitError as e:
            log.info("no fingerprints (%s)", e)
            return {}
        return dict(zip(present, blobs, strict=True)) if len(blobs) == len(present) else {}

    def _commit_fingerprints(self, sha: str, files: list[str]) -> dict[str, str]:
        git = self.git()
        try:
            prefix = git.prefix()
            blobs = git.tree_blobs(sha, [prefix + f for f in files])
        except GitError as e:
            log.info("no fingerprints at %s (%s)", sha, e)
            return {}
        return {p[len(prefix):]: b for p, b in blobs.items()}
