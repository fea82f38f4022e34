"""DecisionDB: decisions as atoms of memory.db: loading, searching and writing whole records.

A decision is an atom of type `decision` (label = title, text = rationale, hubs = tags,
`about` edges = its files then its symbols) plus its `decision_records` row (status,
anchor commit, alternatives, evidence, confidence, dependencies) and its fingerprints.
The helpers that work on stored decisions (audit, scan, governing symbols, transfer,
progressive retrieval) take a DecisionDB; `DecisionStore` (store.py) is the API on top
that records and changes decisions and delegates to those helpers.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from typing import Any

from neuralmind.errors import InvalidArgument, NotFound
from neuralmind.memory import atoms
from neuralmind.memory.atoms import Atom
from neuralmind.memory.clock import now_iso
from neuralmind.memory.db import MemoryDB
from neuralmind.memory.decisions.record import Decision, DecisionHits, normalise_status
from neuralmind.memory.git import GitError
from neuralmind.memory.search import run_search

__all__ = ["DecisionDB", "DecisionNotFound", "now_iso"]

log = logging.getLogger("neuralmind.memory")

_JSON_FIELDS = ("rejected_alternatives", "evidence", "depends_on")
# The decision shape, unqualified names included: callers' tails say `id`, `seq`, `status`.
DECISION_ROWS = (
    "SELECT a.seq, a.id, a.label AS title, a.text AS rationale, d.decision_type, d.status, "
    "d.commit_sha, d.rejected_alternatives, d.evidence, d.confidence, a.author, a.created_at, "
    "a.updated_at, d.anchored_at, d.depends_on FROM atoms a JOIN decision_records d "
    "ON d.atom_id = a.id")


class DecisionNotFound(NotFound, KeyError):
    """No decision has that id (or the prefix is ambiguous)."""

    def __str__(self) -> str:
        return str(self.args[0])


class DecisionDB(MemoryDB):
    """The stored decisions of one project: read, search, write whole records."""

    # --- loading --------------------------------------------------------------------------
    def load(self, conn: sqlite3.Connection, where: str = "", params: tuple[Any, ...] = ()) -> list[Decision]:
        """Decisions matching a SQL tail (`WHERE ... ORDER BY ...`), fingerprints attached."""
        rows = conn.execute(f"{DECISION_ROWS} {where}", params).fetchall()
        if not rows:
            return []
        ids = [r["id"] for r in rows]
        prints: dict[str, dict[str, str]] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            for fp in conn.execute(
                    "SELECT decision_id, path, blob FROM decision_fingerprints WHERE decision_id IN "
                    f"({','.join('?' * len(chunk))})", chunk):
                prints.setdefault(fp[0], {})[fp[1]] = fp[2]
        hubs, about, _ = atoms.links_of(conn, ids)
        out = []
        for r in rows:
            d = {k: r[k] for k in r.keys() if k != "seq"}  # noqa: SIM118 (a Row iterates values)
            for f in _JSON_FIELDS:
                d[f] = json.loads(d[f])
            targets = about.get(r["id"], [])
            d["files_affected"] = [t for kind, t in targets if kind == "file"]
            d["symbols_affected"] = [t for kind, t in targets if kind == "symbol"]
            d["tags"] = hubs.get(r["id"], [])
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
        if conn.execute("SELECT 1 FROM decision_records WHERE atom_id = ?", (key,)).fetchone():
            return key
        if len(key) >= 4:
            rows = conn.execute("SELECT atom_id FROM decision_records WHERE atom_id LIKE ? "
                                "ESCAPE '\\' LIMIT 2", (_like_prefix(key),)).fetchall()
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
            loaded = self.load(conn, f"WHERE seq IN ({','.join('?' * len(seqs))})", tuple(seqs))
            seq_of = dict(conn.execute(
                f"SELECT id, seq FROM atoms WHERE seq IN ({','.join('?' * len(seqs))})", seqs))
        return {int(seq_of[d.id]): d for d in loaded}

    # --- writing --------------------------------------------------------------------------
    def insert(self, d: Decision, source: str = "") -> bool:
        """Insert a complete record as is (import); False when its id already exists."""
        with self.write() as conn:
            if conn.execute("SELECT 1 FROM atoms WHERE id = ?", (d.id,)).fetchone():
                return False
            seq = atoms.insert_row(conn, Atom(
                id=d.id, type="decision", label=d.title, text=d.rationale, state="active",
                author=d.author, source=source or "decisions", created_at=d.created_at,
                updated_at=d.updated_at))
            conn.execute("INSERT INTO decision_records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (d.id, d.decision_type, d.status, d.commit_sha,
                          *self._record_values(d)))
            self._links(conn, seq, d, d.created_at)
        return True

    def save(self, conn: sqlite3.Connection, d: Decision) -> None:
        """Write every field of an existing record inside the caller's transaction."""
        d.updated_at = now_iso()
        conn.execute("UPDATE atoms SET label = ?, text = ?, updated_at = ? WHERE id = ?",
                     (d.title, d.rationale, d.updated_at, d.id))
        conn.execute(
            "UPDATE decision_records SET decision_type=?, status=?, commit_sha=?, "
            "rejected_alternatives=?, evidence=?, confidence=?, anchored_at=?, depends_on=? "
            "WHERE atom_id=?",
            (d.decision_type, d.status, d.commit_sha, *self._record_values(d), d.id))
        seq = conn.execute("SELECT seq FROM atoms WHERE id = ?", (d.id,)).fetchone()[0]
        self._links(conn, int(seq), d, d.updated_at)

    @staticmethod
    def _record_values(d: Decision) -> tuple[Any, ...]:
        return (json.dumps(d.rejected_alternatives), json.dumps(d.evidence), d.confidence,
                d.anchored_at or d.created_at, json.dumps(d.depends_on))

    def _links(self, conn: sqlite3.Connection, seq: int, d: Decision, now: str) -> None:
        """Hubs (its tags), `about` edges (files, then symbols), text index, fingerprints."""
        atoms.set_hubs(conn, d.id, d.tags, now)
        atoms.set_about(conn, d.id, [*d.files_affected, *d.symbols_affected], now)
        atoms.index_text(conn, self.use_fts, seq, d.title, d.tags, d.rationale)
        conn.execute("DELETE FROM decision_fingerprints WHERE decision_id = ?", (d.id,))
        conn.executemany("INSERT INTO decision_fingerprints VALUES (?, ?, ?)",
                         [(d.id, p, b) for p, b in sorted(d.fingerprints.items())])
        self.note("atom", d.id)

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
            conn, question, mode, _decision_scope(status), limit, self.use_fts, self.write)
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


def _decision_scope(status: str) -> tuple[str, tuple[str, ...]]:
    """The search scope of decision search: decisions, of one status or all."""
    if status == "ALL":
        return "a.type = 'decision'", ()
    return "a.type = 'decision' AND d.status = ?", (status,)


def _like_prefix(key: str) -> str:
    return key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
