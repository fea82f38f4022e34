"""DecisionStore: the engine API of decision memory over `<root>/.neuralmind/memory.db`.

Every operation the CLI, the LSP server and the MCP server offer on decisions is
a method here; they return `Decision` records or small report objects with a
`to_json()`. Connections are per thread and managed internally (there is no
close()); writes are short IMMEDIATE transactions so concurrent processes queue
on the busy timeout instead of failing.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import logging
import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.decisions import schema
from neuralmind.decisions.git import Git, GitError
from neuralmind.decisions.record import (
    DEFAULT_TYPE,
    Decision,
    clean_list,
    normalise_path,
    normalise_status,
    normalise_symbol,
)
from neuralmind.decisions.search import SearchResult, run_search
from neuralmind.statedir import state_dir

if TYPE_CHECKING:
    from neuralmind.decisions.audit import AuditReport
    from neuralmind.decisions.invalidation import ScanReport
    from neuralmind.decisions.transfer import ImportReport

log = logging.getLogger("neuralmind.decisions")

DB_NAME = "memory.db"
FTS_ENV = "NEURALMIND_DECISION_FTS"      # "0" forces the LIKE fallback
AUTHOR_ENV = "NEURALMIND_AUTHOR"
_LIST_FIELDS = ("files_affected", "symbols_affected", "rejected_alternatives", "evidence",
                "tags", "depends_on")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class DecisionNotFound(KeyError):
    """No decision has that id (or the prefix is ambiguous)."""

    def __str__(self) -> str:
        return str(self.args[0])


class DecisionStore:
    """Decisions of one project: record, search, audit, amend, invalidate, restore, scan."""

    def __init__(self, root: Path, fts: bool | None = None) -> None:
        self.root = Path(root).resolve()
        if fts is None:
            fts = os.environ.get(FTS_ENV, "1") != "0" and schema.fts5_available()
        self.use_fts = bool(fts)
        self._local = threading.local()
        self._init_lock = threading.Lock()
        self._ready = False
        self.read_only_reason: str | None = None   # set when memory.db can only be read

    @property
    def path(self) -> Path:
        return self.root / ".neuralmind" / DB_NAME

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

    # --- writing --------------------------------------------------------------------------
    def record(self, title: str, rationale: str, files: list[str] | None = None,
               symbols: list[str] | None = None, decision_type: str = DEFAULT_TYPE,
               rejected: list[str] | None = None, evidence: list[str] | None = None,
               confidence: float = 0.8, tags: list[str] | None = None, commit: str | None = None,
               author: str | None = None, depends_on: list[str] | None = None,
               decision_id: str | None = None) -> Decision:
        """Store a new decision anchored to `commit` (default HEAD) with fingerprints of its files.

        ValueError for bad input (empty title/rationale, confidence outside 0..1, a
        malformed symbol, an unknown commit or dependency); git being unavailable is not
        an error: the decision is then stored without anchor or fingerprints.
        """
        title, rationale = (title or "").strip(), (rationale or "").strip()
        if not title:
            raise ValueError("a decision needs a title")
        if not rationale:
            raise ValueError("a decision needs a rationale")
        confidence = _check_confidence(confidence)
        symbol_list = [normalise_symbol(self.root, s) for s in clean_list(symbols)]
        file_list = self._files(files, symbol_list)
        deps = [self.resolve_id(d) for d in clean_list(depends_on)]
        anchor = self._anchor(commit)
        now = now_iso()
        d = Decision(
            id=decision_id or uuid.uuid4().hex[:16], title=title, rationale=rationale,
            decision_type=(decision_type or DEFAULT_TYPE).strip(), status="ACTIVE", commit_sha=anchor,
            files_affected=file_list, symbols_affected=symbol_list,
            rejected_alternatives=clean_list(rejected), evidence=clean_list(evidence),
            confidence=confidence, tags=clean_list(tags),
            author=author or os.environ.get(AUTHOR_ENV) or _user(), created_at=now, updated_at=now,
            anchored_at=now, depends_on=deps, fingerprints=self._working_fingerprints(file_list),
        )
        if not self.insert(d):
            raise ValueError(f"a decision with id {d.id!r} already exists")
        log.info("recorded decision %s: %s", d.id, d.title)
        return d

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

    def amend(self, decision_id: str, title: str | None = None, rationale: str | None = None,
              evidence: list[str] | None = None, rejected: list[str] | None = None,
              files: list[str] | None = None, symbols: list[str] | None = None,
              tags: list[str] | None = None, confidence: float | None = None,
              decision_type: str | None = None, depends_on: list[str] | None = None) -> Decision:
        """Change a decision: scalars replace, evidence and rejected alternatives append.

        Fingerprints are taken again from the working tree; the vector is refreshed
        by the next semantic search because the embedded text changed.
        """
        full = self.resolve_id(decision_id)
        symbol_list = None if symbols is None else [normalise_symbol(self.root, s) for s in clean_list(symbols)]
        deps = None if depends_on is None else [self.resolve_id(x) for x in clean_list(depends_on)]
        if deps and full in deps:
            raise ValueError("a decision cannot depend on itself")
        with self.write() as conn:
            d = self.load(conn, "WHERE id = ?", (full,))[0]
            if title is not None:
                if not title.strip():
                    raise ValueError("a decision needs a title")
                d.title = title.strip()
            if rationale is not None:
                if not rationale.strip():
                    raise ValueError("a decision needs a rationale")
                d.rationale = rationale.strip()
            d.evidence = clean_list(d.evidence + clean_list(evidence))
            d.rejected_alternatives = clean_list(d.rejected_alternatives + clean_list(rejected))
            if symbol_list is not None:
                d.symbols_affected = symbol_list
            if files is not None or symbol_list is not None:
                d.files_affected = self._files(d.files_affected if files is None else files,
                                               d.symbols_affected)
            if tags is not None:
                d.tags = clean_list(tags)
            if confidence is not None:
                d.confidence = _check_confidence(confidence)
            if decision_type:
                d.decision_type = decision_type.strip()
            if deps is not None:
                d.depends_on = deps
            d.fingerprints = self._working_fingerprints(d.files_affected)
            self.save(conn, d)
        return d

    def invalidate(self, decision_id: str, reason: str) -> Decision:
        """Mark INVALIDATED (a person decided it no longer holds); the reason joins the evidence."""
        if not (reason or "").strip():
            raise ValueError("invalidate needs a reason")
        full = self.resolve_id(decision_id)
        with self.write() as conn:
            d = self.load(conn, "WHERE id = ?", (full,))[0]
            d.status = "INVALIDATED"
            d.evidence.append(f"Invalidated: {reason.strip()}")
            self.save(conn, d)
        return d

    def restore(self, decision_id: str, commit: str | None = None) -> Decision:
        """Make a STALE or INVALIDATED decision ACTIVE again, re-anchored to `commit` (default HEAD).

        Fingerprints are taken from that commit's tree. An explicit commit git cannot
        resolve is a GitError; with no git at all the default restores without anchor.
        """
        full = self.resolve_id(decision_id)
        git = self.git()
        try:
            sha: str | None = git.resolve(commit or "HEAD")
        except GitError:
            if commit:
                raise
            sha = None
        current = self.get(full)
        prints = self._commit_fingerprints(sha, current.files_affected) if sha else \
            self._working_fingerprints(current.files_affected)
        with self.write() as conn:
            d = self.load(conn, "WHERE id = ?", (full,))[0]
            d.status = "ACTIVE"
            d.commit_sha = sha
            d.anchored_at = now_iso()
            d.fingerprints = prints
            d.evidence.append(f"Restored at commit {sha[:12]}" if sha else "Restored (no git commit)")
            self.save(conn, d)
        return d

    # --- searching ------------------------------------------------------------------------
    def search(self, question: str, mode: str | None = None, status: str = "ACTIVE",
               limit: int = 10) -> SearchResult:
        """Rank decisions for a question; `.mode` is the mode that ran, `.notice` why it differs.

        ValueError for an unknown mode or status; SemanticUnavailable for mode="semantic"
        without the model.
        """
        status = normalise_status(status, allow_all=True)
        if limit < 1:
            raise ValueError("limit must be at least 1")
        conn = self.connection()
        ranking, ran, requested, notice, embedded, terms = run_search(
            conn, question, mode, status, limit, self.use_fts, self.write)
        records = self.by_seq([s for s, _ in ranking])
        pairs = [(records[s], score) for s, score in ranking if s in records]
        return SearchResult([p[0] for p in pairs], [p[1] for p in pairs], ran, requested, notice,
                            embedded, terms)

    def query(self, question: str, mode: str | None = None, status: str = "ACTIVE",
              limit: int = 10) -> list[Decision]:
        """Just the records of `search` (the seed's Python API)."""
        return self.search(question, mode=mode, status=status, limit=limit).records

    # --- attention, staleness, transfer ----------------------------------------------------
    def audit(self, stale: bool = False, orphaned: bool = False) -> AuditReport:
        """Every decision with its attention reasons; `stale`/`orphaned` keep those needing it."""
        from neuralmind.decisions.audit import audit

        return audit(self, stale=stale, orphaned=orphaned)

    def scan(self, commit: str = "HEAD") -> ScanReport:
        """Mark STALE what `commit` (default HEAD) changed; git problems land in `.error`."""
        from neuralmind.decisions.invalidation import scan

        return scan(self, commit)

    def scan_since(self, base: str) -> list[ScanReport]:
        """Scan each first-parent commit after `base` up to HEAD (the server calls this when HEAD moves)."""
        from neuralmind.decisions.invalidation import scan_since

        return scan_since(self, base)

    def governing(self, file: str, status: str = "ALL") -> list[dict[str, Any]]:
        """Decisions governing `file` with their symbols' current line ranges (editor diagnostics)."""
        from neuralmind.decisions.symbols import governing

        return governing(self, file, status)

    def export(self, fmt: str = "json") -> str:
        from neuralmind.decisions.transfer import export_text

        return export_text(self, fmt)

    def import_text(self, text: str, fmt: str | None = None) -> ImportReport:
        """Import an export (json or md); ids already present are skipped."""
        from neuralmind.decisions.transfer import import_records, parse

        return import_records(self, parse(text, fmt))

    # --- progressive retrieval for agents ----------------------------------------------------
    def memory_search(self, query: str, limit: int = 10, status: str = "ACTIVE",
                      mode: str | None = None) -> dict[str, Any]:
        from neuralmind.decisions.retrieval import memory_search

        return memory_search(self, query, limit=limit, status=status, mode=mode)

    def memory_timeline(self, decision_id: str | None = None, query: str | None = None,
                        before: int = 3, after: int = 3, mode: str | None = None) -> dict[str, Any]:
        from neuralmind.decisions.retrieval import memory_timeline

        return memory_timeline(self, decision_id, query, before=before, after=after, mode=mode)

    def memory_get(self, ids: list[str]) -> dict[str, Any]:
        from neuralmind.decisions.retrieval import memory_get

        return memory_get(self, ids)

    # --- git helpers ----------------------------------------------------------------------
    def _files(self, files: list[str] | None, symbols: list[str]) -> list[str]:
        out = [p for p in (normalise_path(self.root, f) for f in clean_list(files)) if p]
        for s in symbols:
            path = s.split("::", 1)[0]
            if path not in out:
                out.append(path)
        return out

    def _anchor(self, commit: str | None) -> str | None:
        git = self.git()
        try:
            return git.resolve(commit or "HEAD")
        except GitError as e:
            if commit and "not in this repository" in str(e):
                raise ValueError(str(e)) from None
            if commit:
                log.info("cannot check commit %s (%s); stored as given", commit, e)
                return commit
            log.info("no git anchor for the decision: %s", e)
            return None

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


def _check_confidence(value: float) -> float:
    try:
        c = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"confidence must be a number between 0 and 1, not {value!r}") from None
    if not 0.0 <= c <= 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {c}")
    return c


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
