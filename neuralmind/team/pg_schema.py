"""The team store's tables in PostgreSQL, and their versioned migrations.

Everything lives in the `neuralmind` schema, so a database shared with other
applications stays tidy. Migrations run in one transaction under an advisory lock:
two teammates connecting at once do not both migrate, and a failed step leaves the
store exactly as it was (PostgreSQL's DDL is transactional).

`events` is append-only (a trigger refuses UPDATE and DELETE, whoever asks): it is
the team's memory, and every machine's shared state is a fold of it. `pos` is dense
per repository and assigned under the repository row's lock, so positions become
visible in order and "everything after position N" never skips an event.

Roles: `neuralmind_reader` may read everything (pull); `neuralmind_writer` may also
append events and publish snapshots. Both are NOLOGIN groups created when the
migrating user may create roles; grant them to login roles (README, "Share with your
team").
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

import psycopg

from neuralmind.errors import EngineError

SCHEMA = "neuralmind"
READER_ROLE = "neuralmind_reader"
WRITER_ROLE = "neuralmind_writer"
CHANNEL_PREFIX = "neuralmind_team_"
_LOCK_KEY = 0x6E6D7465616D  # "nmteam": the advisory lock that serialises migrations

Migration = tuple[int, Callable[[psycopg.Connection], None]]

V1 = f"""
CREATE TABLE {SCHEMA}.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE {SCHEMA}.repos (
    id bigserial PRIMARY KEY,
    first_commit text NOT NULL,
    remote text NOT NULL,
    head bigint NOT NULL DEFAULT 0,            -- the last event position of this repository
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (first_commit, remote)
);
CREATE TABLE {SCHEMA}.events (
    repo_id bigint NOT NULL REFERENCES {SCHEMA}.repos (id),
    pos bigint NOT NULL,                       -- dense per repository: catch-up by sequence
    author text NOT NULL,                      -- one outbox (a clone), not a person
    seq bigint NOT NULL,                       -- that outbox's own counter
    kind text NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_id, pos),
    UNIQUE (repo_id, author, seq)              -- a re-sent event is the same event
);
CREATE FUNCTION {SCHEMA}.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'neuralmind.events is append-only';
END $$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON {SCHEMA}.events
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.refuse_change();
CREATE TABLE {SCHEMA}.snapshots (
    id bigserial PRIMARY KEY,
    repo_id bigint NOT NULL REFERENCES {SCHEMA}.repos (id),
    commit_sha text NOT NULL,
    author text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    manifest jsonb NOT NULL,                   -- files: name, bytes, sha256, parts
    bytes bigint NOT NULL,                     -- stored (compressed) size
    UNIQUE (repo_id, commit_sha)
);
CREATE TABLE {SCHEMA}.snapshot_chunks (
    snapshot_id bigint NOT NULL REFERENCES {SCHEMA}.snapshots (id) ON DELETE CASCADE,
    name text NOT NULL,
    part integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (snapshot_id, name, part)
);
"""

# Group roles and their rights; skipped (with the reason kept in meta) when the
# migrating user may not create roles: an owner can run this SQL later.
V1_ROLES = f"""
DO $$
DECLARE may boolean;
BEGIN
    SELECT rolsuper OR rolcreaterole INTO may FROM pg_roles WHERE rolname = current_user;
    IF may THEN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{READER_ROLE}') THEN
            CREATE ROLE {READER_ROLE} NOLOGIN;
        END IF;
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{WRITER_ROLE}') THEN
            CREATE ROLE {WRITER_ROLE} NOLOGIN IN ROLE {READER_ROLE};
        END IF;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = '{READER_ROLE}') THEN
        GRANT USAGE ON SCHEMA {SCHEMA} TO {READER_ROLE};
        GRANT SELECT ON ALL TABLES IN SCHEMA {SCHEMA} TO {READER_ROLE};
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = '{WRITER_ROLE}') THEN
        GRANT INSERT ON {SCHEMA}.repos, {SCHEMA}.events, {SCHEMA}.snapshots,
            {SCHEMA}.snapshot_chunks TO {WRITER_ROLE};
        GRANT UPDATE (head) ON {SCHEMA}.repos TO {WRITER_ROLE};
        GRANT DELETE ON {SCHEMA}.snapshots, {SCHEMA}.snapshot_chunks TO {WRITER_ROLE};
        GRANT USAGE ON ALL SEQUENCES IN SCHEMA {SCHEMA} TO {WRITER_ROLE};
    END IF;
END $$;
"""


def _v1(conn: psycopg.Connection) -> None:
    """Repositories, the append-only event log, index snapshots; roles when allowed."""
    conn.execute(V1)
    conn.execute(f"INSERT INTO {SCHEMA}.meta VALUES ('store_id', %s)", (uuid.uuid4().hex,))
    conn.execute(V1_ROLES)


MIGRATIONS: Sequence[Migration] = ((1, _v1),)
SCHEMA_VERSION = MIGRATIONS[-1][0]


def read_version(conn: psycopg.Connection) -> int:
    exists = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.meta",)).fetchone()
    if not exists or exists[0] is None:
        return 0
    row = conn.execute(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: psycopg.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the store to the last migration's version in one transaction; return it.

    EngineError when the store is newer than this NeuralMind, or when this role may not
    migrate it (a reader, or a writer facing an old store: its owner must connect once)."""
    target = migrations[-1][0]
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        current = read_version(conn)
        if current > target:
            raise EngineError("team_schema", f"the team store has schema v{current}, newer than "
                              f"this NeuralMind's (v{target}): upgrade NeuralMind")
        if current == target:
            return current
        try:
            if current == 0:
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            for version, step in migrations:
                if version > current:
                    step(conn)
                    conn.execute(
                        f"INSERT INTO {SCHEMA}.meta VALUES ('schema_version', %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(version),))
        except psycopg.errors.InsufficientPrivilege as e:
            raise EngineError("team_schema", (
                f"the team store needs schema v{target} (it has v{current}) and this role may "
                f"not create it ({e.diag.message_primary}): connect once as the database's "
                "owner") ) from None
    return target


def channel(repo_id: int) -> str:
    """The NOTIFY channel of one repository's events."""
    return f"{CHANNEL_PREFIX}{int(repo_id)}"
