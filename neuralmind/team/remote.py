"""The PostgreSQL side of the team store: repositories, pushing and fetching events.

Connections are autocommit; every multi-statement step is an explicit transaction.
A push takes the repository row's lock, appends only the events whose (author, seq)
is new (a re-sent batch after a crash is a no-op), numbers them after the head and
notifies the repository's channel, all in one transaction: readers never see a gap
and never see half a batch.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import psycopg

from neuralmind.errors import CodedError, EngineError
from neuralmind.team import dsn as dsn_mod
from neuralmind.team.identity import RepoIdentity
from neuralmind.team.pg_schema import SCHEMA, channel, migrate

log = logging.getLogger("neuralmind.team")


@dataclass(frozen=True, slots=True)
class OutEvent:
    """One event as pushed: the outbox's own numbering and the payload as JSON text."""

    author: str
    seq: int
    kind: str
    payload: str


@dataclass(frozen=True, slots=True)
class RemoteEvent:
    pos: int
    author: str
    seq: int
    kind: str
    payload: str           # JSON text, parsed by the local mirror


@dataclass(frozen=True, slots=True)
class PushResult:
    inserted: int
    duplicates: int
    head: int


class Unreachable(CodedError):
    """The team store cannot be reached now (network, server down, auth): retried later."""

    code = "team_unreachable"


def open_connection(dsn: str, autocommit: bool = True) -> psycopg.Connection:
    """A connection to the team store; `Unreachable` says why there is none."""
    try:
        return psycopg.connect(dsn, autocommit=autocommit, **dsn_mod.connect_kwargs())
    except psycopg.OperationalError as e:
        raise Unreachable(f"cannot reach the team store {dsn_mod.redact(dsn)}: "
                          f"{_first_line(e)}") from None


def _first_line(e: BaseException) -> str:
    """libpq's message without its per-address preamble (the last line says why)."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else type(e).__name__


class RemoteStore:
    """The team store as seen through one connection, for one repository."""

    def __init__(self, conn: psycopg.Connection, repo_id: int, store_id: str) -> None:
        self.conn = conn
        self.repo_id = repo_id
        self.store_id = store_id

    @classmethod
    def open(cls, dsn: str, identity: RepoIdentity, create: bool = True) -> RemoteStore:
        """Connect, migrate when needed (and allowed) and find the repository's row.

        With `create` False (a reader) an unknown repository is EngineError `not_found`."""
        conn = open_connection(dsn)
        try:
            migrate(conn)
            store_id = conn.execute(
                f"SELECT value FROM {SCHEMA}.meta WHERE key = 'store_id'").fetchone()[0]
            repo_id = _repo_id(conn, identity, create)
        except BaseException:
            conn.close()
            raise
        return cls(conn, repo_id, str(store_id))

    def close(self) -> None:
        self.conn.close()

    @property
    def key(self) -> str:
        """Which store and repository local positions refer to."""
        return f"{self.store_id}/{self.repo_id}"

    @property
    def role(self) -> str:
        row = self.conn.execute("SELECT current_user").fetchone()
        return str(row[0]) if row else ""

    def may_push(self) -> bool:
        row = self.conn.execute(
            "SELECT has_table_privilege(%s, 'INSERT')", (f"{SCHEMA}.events",)).fetchone()
        return bool(row and row[0])

    # --- events --------------------------------------------------------------------------
    def push(self, events: list[OutEvent]) -> PushResult:
        """Append the new ones of `events` after the head, in one transaction; notify."""
        if not events:
            return PushResult(0, 0, self.head())
        try:
            with self.conn.transaction():
                head = self.conn.execute(
                    f"SELECT head FROM {SCHEMA}.repos WHERE id = %s FOR UPDATE",
                    (self.repo_id,)).fetchone()[0]
                rows = self.conn.execute(
                    f"""INSERT INTO {SCHEMA}.events (repo_id, pos, author, seq, kind, payload)
                    SELECT %(repo)s, %(head)s + row_number() OVER (ORDER BY u.ord),
                           u.author, u.seq, u.kind, u.payload::jsonb
                    FROM unnest(%(authors)s::text[], %(seqs)s::bigint[], %(kinds)s::text[],
                                %(payloads)s::text[]) WITH ORDINALITY
                         AS u(author, seq, kind, payload, ord)
                    WHERE NOT EXISTS (SELECT 1 FROM {SCHEMA}.events e WHERE e.repo_id = %(repo)s
                                      AND e.author = u.author AND e.seq = u.seq)
                    RETURNING pos""",
                    {"repo": self.repo_id, "head": head,
                     "authors": [e.author for e in events], "seqs": [e.seq for e in events],
                     "kinds": [e.kind for e in events],
                     "payloads": [e.payload for e in events]}).fetchall()
                inserted = len(rows)
                if inserted:
                    head += inserted
                    self.conn.execute(f"UPDATE {SCHEMA}.repos SET head = %s WHERE id = %s",
                                      (head, self.repo_id))
                    self.conn.execute("SELECT pg_notify(%s, %s)",
                                      (channel(self.repo_id), str(head)))
        except psycopg.errors.InsufficientPrivilege:
            raise EngineError("read_only", f"the team store role {self.role!r} may pull but "
                              "not push (it is a reader)") from None
        return PushResult(inserted, len(events) - inserted, head)

    def head(self) -> int:
        row = self.conn.execute(f"SELECT head FROM {SCHEMA}.repos WHERE id = %s",
                                (self.repo_id,)).fetchone()
        return int(row[0]) if row else 0

    def fetch(self, after: int, limit: int) -> list[RemoteEvent]:
        """Events after position `after`, in order, at most `limit`."""
        rows = self.conn.execute(
            f"SELECT pos, author, seq, kind, payload::text FROM {SCHEMA}.events "
            "WHERE repo_id = %s AND pos > %s ORDER BY pos LIMIT %s",
            (self.repo_id, after, limit)).fetchall()
        return [RemoteEvent(int(p), a, int(s), k, pl) for p, a, s, k, pl in rows]

    def counts(self) -> dict[str, Any]:
        row = self.conn.execute(
            f"SELECT count(*), count(DISTINCT author) FROM {SCHEMA}.events WHERE repo_id = %s",
            (self.repo_id,)).fetchone()
        return {"events": int(row[0]), "authors": int(row[1]), "head": self.head()}


def _repo_id(conn: psycopg.Connection, identity: RepoIdentity, create: bool) -> int:
    row = conn.execute(f"SELECT id FROM {SCHEMA}.repos WHERE first_commit = %s AND remote = %s",
                       (identity.first_commit, identity.remote)).fetchone()
    if row:
        return int(row[0])
    if not create:
        raise EngineError("not_found", "the team store has nothing for this repository yet "
                          f"({json.dumps(identity.to_json())})")
    try:
        conn.execute(f"INSERT INTO {SCHEMA}.repos (first_commit, remote) VALUES (%s, %s) "
                     "ON CONFLICT (first_commit, remote) DO NOTHING",
                     (identity.first_commit, identity.remote))
        row = conn.execute(f"SELECT id FROM {SCHEMA}.repos WHERE first_commit = %s "
                           "AND remote = %s", (identity.first_commit, identity.remote)).fetchone()
    except psycopg.errors.InsufficientPrivilege:
        raise EngineError("not_found", "the team store has nothing for this repository yet, "
                          "and this role may not register it (a reader)") from None
    return int(row[0])
