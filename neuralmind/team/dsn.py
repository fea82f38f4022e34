"""Team store connection strings: where the DSN comes from, and keeping secrets out of files.

The DSN is `NEURALMIND_TEAM_DSN` when set, else `team_dsn` from `.neuralmind.toml`. A
password never belongs in either file: libpq reads it from `PGPASSWORD` or `~/.pgpass`
(and TLS from the DSN's `sslmode`), so the DSN we store names only host, port,
database, user and options.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

from psycopg import conninfo
from psycopg import errors as pg_errors

from neuralmind import config
from neuralmind.errors import EngineError

log = logging.getLogger("neuralmind.team")


@dataclass(frozen=True, slots=True)
class TeamDsn:
    dsn: str
    source: str  # "environment" or ".neuralmind.toml"


def parse(dsn: str) -> dict[str, Any]:
    """The DSN's parameters (URI or key=value form); EngineError when malformed."""
    if not dsn or not dsn.strip():
        raise EngineError("invalid_argument", "the team DSN is empty")
    try:
        return conninfo.conninfo_to_dict(dsn.strip())
    except pg_errors.ProgrammingError as e:
        raise EngineError("invalid_argument", f"not a PostgreSQL DSN: {e}") from None


def has_password(dsn: str) -> bool:
    return bool(parse(dsn).get("password"))


def redact(dsn: str) -> str:
    """The DSN for display and logs: any password replaced by ***."""
    try:
        params = parse(dsn)
    except EngineError:
        return "<malformed DSN>"
    if params.get("password"):
        params["password"] = "***"
    return conninfo.make_conninfo(**params)


def storable(dsn: str) -> str:
    """The DSN as it may be written to `.neuralmind.toml`; EngineError when it carries a
    password (that would put a secret into a file teams often commit)."""
    if has_password(dsn):
        raise EngineError("invalid_argument",
                          "the DSN carries a password, which would be written to "
                          ".neuralmind.toml: remove it and put it in ~/.pgpass or PGPASSWORD "
                          f"(or pass the whole DSN in ${config.TEAM_DSN_ENV})")
    return dsn.strip()


def resolve(configured: str) -> TeamDsn | None:
    """The DSN in force: the environment's, else the configured one, else None."""
    env = os.environ.get(config.TEAM_DSN_ENV, "").strip()
    if env:
        return TeamDsn(env, "environment")
    if configured and configured.strip():
        if has_password(configured):
            log.warning(".neuralmind.toml: team_dsn carries a password; move it to "
                        "~/.pgpass or PGPASSWORD")
        return TeamDsn(configured.strip(), ".neuralmind.toml")
    return None


def connect_kwargs() -> dict[str, Any]:
    """Options every team connection uses (a short timeout: an unreachable store must
    not hold up a command, and the server's work goes on without it)."""
    return {"connect_timeout": config.TEAM_CONNECT_TIMEOUT_S, "application_name": "neuralmind"}
