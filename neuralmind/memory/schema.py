"""The memory.db schema, its version, and opening a connection safely.

One SQLite file per project in WAL mode: readers never block the writer, and a
busy timeout makes concurrent writers (the editor's server, a stdio MCP process,
the CLI, a post-commit hook) wait for each other instead of failing.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from neuralmind import outbox
from neuralmind.errors import CodedError
from neuralmind.memory import migrate
from neuralmind.memory.tables import FTS_TABLE, FTS_VIEW, SCHEMA_VERSION, TABLES
from neuralmind.statedir import move_aside

log = logging.getLogger("neuralmind.memory")

BUSY_TIMEOUT_MS = 15_000


class StoreError(CodedError):
    """The memory store cannot be opened or used; the message says why."""

    code = "store_unavailable"


class ReadOnlyStore(StoreError):
    """A write to memory that is only readable (read-only folder or disk)."""

    code = "read_only"


def fts5_available() -> bool:
    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(a)")
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return False
    return True


def connect(path: Path) -> sqlite3.Connection:
    """An autocommit connection (transactions are explicit) with WAL and a busy timeout."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def writable(path: Path) -> bool:
    """Whether this process may write the database and create its -wal/-shm files.

    `os.access` sees both a chmod (for a non-root user) and a read-only mount (for anyone)."""
    return os.access(path.parent, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that never writes, for a memory.db in a folder this process cannot write.

    `mode=ro` still reads the write-ahead log but needs a `-shm` file it may create; when
    it cannot (no -shm yet in a read-only folder) the file is opened immutable, which reads
    only the main file: decisions still in an unmerged -wal are then missing, and we say so.
    A store of an older schema cannot be upgraded in place here: it is read through an
    upgraded copy in memory, and the file is left exactly as it is."""
    try:
        conn = _uri_connect(path, "mode=ro")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the WAL index
    except sqlite3.OperationalError as e:
        if _is_damage(e):
            raise
        conn = _uri_connect(path, "immutable=1")
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            log.warning("%s is read without its write-ahead log (%s): the newest decisions may "
                        "be missing until the folder is writable again", path, e)
    conn.row_factory = sqlite3.Row
    version = migrate.version_of(conn)
    if version is None:
        conn.close()
        raise StoreError(f"{path} holds no decisions and its folder is not writable")
    if version > SCHEMA_VERSION:
        conn.close()
        raise StoreError(f"memory.db has schema version {version}; this NeuralMind knows "
                         f"{SCHEMA_VERSION}: upgrade NeuralMind")
    if version < SCHEMA_VERSION:
        conn = _upgraded_copy(conn, fts5_available())
    return conn


def _upgraded_copy(old: sqlite3.Connection, use_fts: bool) -> sqlite3.Connection:
    """An in-memory copy of an older store, migrated: the read-only file is never touched."""
    copy = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        old.backup(copy)
    finally:
        old.close()
    copy.row_factory = sqlite3.Row
    _create(copy, use_fts)
    log.info("memory.db has an older schema and cannot be upgraded here (read-only): read "
             "through an upgraded copy in memory")
    return copy


def fts_current(conn: sqlite3.Connection) -> bool:
    """The FTS index exists and no FTS-less writer left it behind (read-only: cannot rebuild)."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name='atoms_fts'").fetchone()
    dirty = conn.execute("SELECT value FROM meta WHERE key='fts_dirty'").fetchone()
    return exists is not None and not (dirty and dirty[0] == "1")


def initialise(path: Path, use_fts: bool) -> None:
    """Create, check or upgrade the schema; a file that is not a database is moved aside,
    never deleted.

    A database SQLite finds damaged (`quick_check`: a truncated file, a bad page) is rebuilt
    from the rows it can still read, and the damaged file is moved aside. An older schema is
    migrated in one IMMEDIATE transaction (`migrate.py`): all of it, or nothing."""
    if path.exists():
        problem = _damage(path)
        if problem:
            salvage(path, problem, use_fts)
    try:
        conn = connect(path)
    except sqlite3.DatabaseError as e:
        if not _is_damage(e):    # a read-only or full folder: the file itself is fine
            raise StoreError(f"{path} cannot be opened for writing: {e}") from e
        move_aside(path, str(e))
        conn = connect(path)
    try:
        try:
            _create(conn, use_fts)
        except sqlite3.DatabaseError as e:
            if "not a database" not in str(e) and "malformed" not in str(e):
                raise
            conn.close()
            move_aside(path, str(e))
            conn = connect(path)
            _create(conn, use_fts)
    finally:
        conn.close()


SALVAGED_TABLES = ("meta", "atoms", "hubs", "atom_hubs", "edges", "decision_records",
                   "decision_fingerprints", "atom_vectors", "pending", "ratings")
# created on first use by the team write hook (memory/sharing.py), so not in TABLES: the
# outbox (its meta table with it) and the versions this machine shows are learned memory too
SALVAGED_IF_PRESENT = ("team_outbox", "team_records")
_OUTBOX = "team_outbox"


def _damage(path: Path) -> str | None:
    """Why SQLite cannot trust the file (None when `quick_check` passes)."""
    try:
        conn = _read_only(path)
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            found = [r[0] for r in conn.execute("PRAGMA quick_check(5)").fetchall()]
        finally:
            conn.close()
    except sqlite3.DatabaseError as e:
        return str(e) if _is_damage(e) else None   # not ours to judge: connect() reports it
    return None if found == ["ok"] else "; ".join(str(f) for f in found)


def salvage(path: Path, problem: str, use_fts: bool) -> dict[str, int]:
    """Copy every readable row of a damaged memory.db into a new one, move the damaged file
    aside (never deleted) and put the new one in its place. Returns rows copied per table.

    The new file has the damaged one's schema (an older one is migrated on the next open,
    from what was saved), so every table copies column for column."""
    fresh = path.with_name(f".{path.name}.salvage")
    for leftover in (fresh, fresh.with_name(fresh.name + "-wal"), fresh.with_name(fresh.name + "-shm")):
        leftover.unlink(missing_ok=True)
    copied: dict[str, int] = {}
    new = connect(fresh)
    try:
        try:
            old = _read_only(path)
        except sqlite3.DatabaseError:
            old = None
        legacy = old is not None and _is_v1(old)
        if legacy:
            migrate.create_v1(new)
        else:
            _create(new, use_fts)
        if old is not None:
            try:
                new.execute("BEGIN IMMEDIATE")
                for table in (migrate.V1_SALVAGED if legacy else SALVAGED_TABLES):
                    copied[table] = _copy_readable(old, new, table)
                copied.update(_copy_team_tables(old, new))
                if use_fts and not legacy:
                    rebuild_fts(new)
                new.execute("COMMIT")
            finally:
                old.close()
        new.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        new.close()
    if move_aside(path, problem) is None:       # a read-only folder: keep the original
        fresh.unlink(missing_ok=True)
        raise StoreError(f"{path} is damaged ({problem}) and cannot be moved aside")
    for suffix in ("-wal", "-shm"):
        move_aside(path.with_name(path.name + suffix), problem)
    os.replace(fresh, path)
    log.warning("%s was damaged (%s); rebuilt from its readable rows: %s atoms, %s decisions "
                "recovered", path, problem, copied.get("atoms", 0),
                copied.get("decision_records", copied.get("decisions", 0)))
    return copied


def _copy_team_tables(old: sqlite3.Connection, new: sqlite3.Connection) -> dict[str, int]:
    """The team tables the damaged file had, with their readable rows; the outbox keeps
    its author and numbering when they are readable (`outbox.carry`)."""
    copied: dict[str, int] = {}
    for table in SALVAGED_IF_PRESENT:
        try:
            row = old.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                              (table,)).fetchone()
        except sqlite3.DatabaseError:
            row = None
        if not (row and row[0]):
            continue
        if table == _OUTBOX:
            if not outbox.carry(old, new):
                log.warning("memory.db's team outbox numbering was unreadable: its unpushed "
                            "events go out under a new author")
        else:
            new.execute(row[0])
        copied[table] = _copy_readable(old, new, table)
    return copied


def _is_v1(conn: sqlite3.Connection) -> bool:
    """Whether a (possibly damaged) file has the schema-1 layout: a `decisions` table."""
    try:
        row = conn.execute("SELECT type FROM sqlite_master WHERE name = 'decisions'").fetchone()
    except sqlite3.DatabaseError:
        return False
    return row is not None and row[0] == "table"


def _read_only(path: Path) -> sqlite3.Connection:
    """Reads (WAL included) that never write: a damaged file is kept exactly as found."""
    return _uri_connect(path, "mode=ro")


def _uri_connect(path: Path, options: str) -> sqlite3.Connection:
    """Open `path` through a URI (quoted: a `?` or `#` in a folder name is no option)."""
    return sqlite3.connect(f"file:{quote(str(path))}?{options}", uri=True,
                           timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)


def _copy_readable(old: sqlite3.Connection, new: sqlite3.Connection, table: str) -> int:
    """Rows of `table` in rowid order; past an unreadable page, seek ahead in growing steps."""
    cols = [r[1] for r in new.execute(f"PRAGMA table_info({table})").fetchall()]
    names = ", ".join(cols)
    select = f"SELECT rowid, {names} FROM {table} WHERE rowid > ? ORDER BY rowid"
    insert = f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({', '.join('?' * len(cols))})"
    last, copied, misses = -(2 ** 63), 0, 0
    while misses < 40:
        try:
            for row in old.execute(select, (last,)):
                new.execute(insert, row[1:])
                last, copied = row[0], copied + 1
            break
        except sqlite3.DatabaseError:
            misses += 1
            last = max(last, 0) + 2 ** misses     # skip the damaged stretch
    return copied


def _is_damage(e: sqlite3.DatabaseError) -> bool:
    """Corrupt or not a database (moved aside), as opposed to an unwritable folder or disk."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (11, 26)      # SQLITE_CORRUPT, SQLITE_NOTADB
    return type(e) is sqlite3.DatabaseError


def _create(conn: sqlite3.Connection, use_fts: bool) -> None:
    """The current schema, in one IMMEDIATE transaction; an older store is migrated inside it."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = migrate.version_of(conn)
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(f"memory.db has schema version {version}; this NeuralMind knows "
                             f"{SCHEMA_VERSION}: upgrade NeuralMind")
        if version is not None and version < SCHEMA_VERSION:
            try:
                migrate.migrate_v1(conn)
            except sqlite3.OperationalError as e:
                if "no such module" in str(e):
                    raise StoreError(f"memory.db needs an upgrade this SQLite cannot run ({e})"
                                     ) from e
                raise
        for statement in TABLES.split(";"):
            if statement.strip():
                conn.execute(statement)
        if version != SCHEMA_VERSION:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                         (str(SCHEMA_VERSION),))
        if use_fts:
            exists = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name='atoms_fts'").fetchone()
            dirty = conn.execute("SELECT value FROM meta WHERE key='fts_dirty'").fetchone()
            conn.execute(FTS_TABLE)
            conn.execute(FTS_VIEW)
            if not exists or (dirty and dirty[0] == "1"):
                rebuild_fts(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def rebuild_fts(conn: sqlite3.Connection) -> None:
    """Re-index every atom (after writes made by a process without FTS5)."""
    conn.execute("DELETE FROM atoms_fts")
    conn.execute("INSERT INTO atoms_fts(rowid, label, hubs, text) "
                 "SELECT a.seq, a.label, coalesce((SELECT group_concat(hub, ' ') FROM atom_hubs "
                 "WHERE atom_id = a.id), ''), a.text FROM atoms a")
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('fts_dirty', '0')")
