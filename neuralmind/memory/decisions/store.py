"""DecisionStore: the engine API of decision memory over `<root>/.neuralmind/memory.db`.

Every operation the CLI, the LSP server and the MCP server offer on decisions is
a method here; they return `Decision` records or small report objects with a
`to_json()`. Storage itself (connections, transactions, loading, search) is
`DecisionDB` (db.py); audit, scans, governing symbols, transfer and progressive
retrieval are modules of their own that work on a DecisionDB.
"""

from __future__ import annotations

import getpass
import logging
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from neuralmind.errors import InvalidArgument
from neuralmind.events import publish
from neuralmind.graph.model import file_of
from neuralmind.memory.decisions.audit import AuditReport, audit
from neuralmind.memory.decisions.db import DecisionDB, DecisionNotFound, now_iso
from neuralmind.memory.decisions.invalidation import ScanReport, scan, scan_since
from neuralmind.memory.decisions.pending import AtRisk, at_risk
from neuralmind.memory.decisions.record import (
    DEFAULT_TYPE,
    Decision,
    clean_list,
    normalise_path,
    normalise_symbol,
)
from neuralmind.memory.decisions.symbols import governing
from neuralmind.memory.decisions.transfer import ImportReport, export_text, import_records, parse
from neuralmind.memory.git import GitError
from neuralmind.memory.retrieval import memory_get, memory_search, memory_timeline

__all__ = ["DecisionNotFound", "DecisionStore"]

log = logging.getLogger("neuralmind.memory")

AUTHOR_ENV = "NEURALMIND_AUTHOR"


class DecisionStore(DecisionDB):
    """Decisions of one project: record, search, audit, amend, invalidate, restore, scan."""

    # --- writing --------------------------------------------------------------------------
    def record(self, title: str, rationale: str, files: list[str] | None = None,
               symbols: list[str] | None = None, decision_type: str = DEFAULT_TYPE,
               rejected: list[str] | None = None, evidence: list[str] | None = None,
               confidence: float = 0.8, tags: list[str] | None = None, commit: str | None = None,
               author: str | None = None, depends_on: list[str] | None = None,
               decision_id: str | None = None, source: str = "") -> Decision:
        """Store a new decision anchored to `commit` (default HEAD) with fingerprints of its files.

        ValueError for bad input (empty title/rationale, confidence outside 0..1, a
        malformed symbol, an unknown commit or dependency); git being unavailable is not
        an error: the decision is then stored without anchor or fingerprints.
        """
        title, rationale = (title or "").strip(), (rationale or "").strip()
        if not title:
            raise InvalidArgument("a decision needs a title")
        if not rationale:
            raise InvalidArgument("a decision needs a rationale")
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
            author=author or os.environ.get(AUTHOR_ENV) or user_name(), created_at=now, updated_at=now,
            anchored_at=now, depends_on=deps, fingerprints=self._working_fingerprints(file_list),
        )
        if not self.insert(d, source):
            raise InvalidArgument(f"a decision with id {d.id!r} already exists")
        log.info("recorded decision %s: %s", d.id, d.title)
        decision_event("recorded", d)
        return d

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
            raise InvalidArgument("a decision cannot depend on itself")
        with self.write() as conn:
            d = self.load(conn, "WHERE id = ?", (full,))[0]
            if title is not None:
                if not title.strip():
                    raise InvalidArgument("a decision needs a title")
                d.title = title.strip()
            if rationale is not None:
                if not rationale.strip():
                    raise InvalidArgument("a decision needs a rationale")
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

    def invalidate(self, decision_id: str, reason: str, superseded_by: str | None = None
                   ) -> Decision:
        """Mark INVALIDATED (a person decided it no longer holds); the reason joins the evidence.
        With `superseded_by` (an atom id) the `supersedes` edge lands in the same transaction,
        so recall shows the newer decision alone."""
        if not (reason or "").strip():
            raise InvalidArgument("invalidate needs a reason")
        full = self.resolve_id(decision_id)
        with self.write() as conn:
            d = self.load(conn, "WHERE id = ?", (full,))[0]
            d.status = "INVALIDATED"
            d.evidence.append(f"Invalidated: {reason.strip()}")
            self.save(conn, d)
            if superseded_by:
                order = conn.execute("SELECT count(*) FROM edges WHERE src = ?",
                                     (superseded_by,)).fetchone()[0]
                conn.execute("INSERT OR IGNORE INTO edges VALUES (?, 'supersedes', 'atom', ?, ?, "
                             "'user', ?)", (superseded_by, full, order, now_iso()))
                self.note("atom", superseded_by)
        decision_event("invalidated", d)
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
        decision_event("restored", d)
        return d

    def reaffirm(self, decision_id: str, contents: dict[str, bytes | None] | None = None,
                 note: str = "") -> Decision:
        """Record that the pending change respects an ACTIVE decision: its governed files are
        fingerprinted as they are now (`contents` overrides the disk, e.g. an editor buffer's
        text), so it is no longer at risk and the scan after a commit storing exactly this
        keeps it ACTIVE. A later edit puts it at risk again."""
        full = self.resolve_id(decision_id)
        current = self.get(full)
        if current.status != "ACTIVE":
            raise InvalidArgument(f"decision {full} is {current.status}: only an ACTIVE decision "
                                  "can be re-affirmed (restore a STALE one instead)")
        git = self.git()
        prints = dict(current.fingerprints)
        for f in current.files_affected:
            data = (contents or {}).get(f) if f in (contents or {}) else _read(self.root / f)
            if data is None:
                prints.pop(f, None)
            else:
                prints[f] = git.hash_data(data, f)
        with self.write() as conn:
            d = self.load(conn, "WHERE id = ?", (full,))[0]
            d.fingerprints = prints
            d.evidence.append(f"Re-affirmed: {note.strip() or 'the pending change respects it'}")
            self.save(conn, d)
        return d

    def supersede(self, decision_id: str, title: str, rationale: str,
                  **fields: Any) -> tuple[Decision, Decision]:
        """Record a new decision that supersedes `decision_id` (by default governing the same
        files and symbols, of the same type and tags) and invalidate the old one; each names
        the other in its evidence (`Supersedes <id>` / `superseded by <id>`), and the new
        atom `supersedes` the old one. Returns (new, old).
        The new record lands first: if the old one cannot then be changed, the error says so
        and nothing is lost."""
        old = self.get(decision_id)
        fields.setdefault("files", old.files_affected)
        fields.setdefault("symbols", old.symbols_affected)
        fields.setdefault("decision_type", old.decision_type)
        fields.setdefault("tags", old.tags)
        fields["evidence"] = [f"Supersedes {old.id}: {old.title}", *(fields.get("evidence") or [])]
        new = self.record(title, rationale, **fields)
        old = self.invalidate(old.id, f"superseded by {new.id}: {new.title}", superseded_by=new.id)
        return new, old

    def at_risk(self, base: str | None, pending: Mapping[str, bytes | None]) -> list[AtRisk]:
        """ACTIVE decisions the pending content of changed files touches (see pending.py)."""
        return at_risk(self, base, pending)

    # --- attention, staleness, transfer ----------------------------------------------------
    def audit(self, stale: bool = False, orphaned: bool = False) -> AuditReport:
        """Every decision with its attention reasons; `stale`/`orphaned` keep those needing it."""
        return audit(self, stale=stale, orphaned=orphaned)

    def scan(self, commit: str = "HEAD") -> ScanReport:
        """Mark STALE what `commit` (default HEAD) changed; git problems land in `.error`."""
        return scan(self, commit)

    def scan_since(self, base: str) -> list[ScanReport]:
        """Scan each first-parent commit after `base` up to HEAD (the server calls this when HEAD moves)."""
        return scan_since(self, base)

    def governing(self, file: str, status: str = "ALL") -> list[dict[str, Any]]:
        """Decisions governing `file` with their symbols' current line ranges (editor diagnostics)."""
        return governing(self, file, status)

    def export(self, fmt: str = "json") -> str:
        return export_text(self, fmt)

    def import_text(self, text: str, fmt: str | None = None) -> ImportReport:
        """Import an export (json or md); ids already present are skipped."""
        return import_records(self, parse(text, fmt))

    # --- progressive retrieval for agents ----------------------------------------------------
    def memory_search(self, query: str, limit: int = 10, status: str = "ACTIVE",
                      mode: str | None = None) -> dict[str, Any]:
        return memory_search(self, query, limit=limit, status=status, mode=mode)

    def memory_timeline(self, decision_id: str | None = None, query: str | None = None,
                        before: int = 3, after: int = 3, mode: str | None = None) -> dict[str, Any]:
        return memory_timeline(self, decision_id, query, before=before, after=after, mode=mode)

    def memory_get(self, ids: list[str]) -> dict[str, Any]:
        return memory_get(self, ids)

    # --- git helpers ----------------------------------------------------------------------
    def _files(self, files: list[str] | None, symbols: list[str]) -> list[str]:
        out = [p for p in (normalise_path(self.root, f) for f in clean_list(files)) if p]
        for s in symbols:
            path = file_of(s)
            if path not in out:
                out.append(path)
        return out

    def _anchor(self, commit: str | None) -> str | None:
        git = self.git()
        try:
            return git.resolve(commit or "HEAD")
        except GitError as e:
            if commit and "not in this repository" in str(e):
                raise InvalidArgument(str(e)) from None
            if commit:
                log.info("cannot check commit %s (%s); stored as given", commit, e)
                return commit
            log.info("no git anchor for the decision: %s", e)
            return None

def decision_event(change: str, d: Decision) -> None:
    """Tell the event bus (the observatory pulses the files a decision governs)."""
    publish("decision", change=change, id=d.id, title=d.title, status=d.status,
            files=list(d.files_affected))


def _check_confidence(value: float) -> float:
    try:
        c = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"confidence must be a number between 0 and 1, not {value!r}") from None
    if not 0.0 <= c <= 1.0:
        raise InvalidArgument(f"confidence must be between 0 and 1, not {c}")
    return c


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def user_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
