"""Fixtures of the team tests: a real PostgreSQL (never a mock), a fresh database per test.

The server is `$NEURALMIND_TEST_PG_DSN` when set, else a private cluster started for the
session (tests/team/pgcluster.py). Without either the tests FAIL with the apt command.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pgcluster import DSN_ENV, Cluster, ClusterUnavailable
from psycopg import conninfo
from sample_workspace import git, make_repo

from neuralmind.team.local import TeamLocal


class PgServer:
    """The server the tests use, and how to make databases and roles on it."""

    def __init__(self, admin_dsn: str, cluster: Cluster | None) -> None:
        self.admin_dsn = admin_dsn
        self.cluster = cluster

    def dsn(self, dbname: str, **params: str) -> str:
        return conninfo.make_conninfo(self.admin_dsn, dbname=dbname, **params)

    def create_database(self) -> str:
        name = f"nm_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    env = os.environ.get(DSN_ENV, "").strip()
    if env:
        yield PgServer(env, None)
        return
    try:
        cluster = Cluster()
    except ClusterUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    try:
        cluster.start()
        yield PgServer(cluster.dsn(), cluster)
    finally:
        cluster.destroy()


@pytest.fixture
def team_db(pg: PgServer) -> Iterator[str]:
    """The DSN of a fresh, empty database (dropped after the test)."""
    name = pg.create_database()
    try:
        yield pg.dsn(name)
    finally:
        pg.drop_database(name)


def clone(src: Path, dest: Path) -> Path:
    git(dest.parent, "clone", "-q", str(src), str(dest))
    git(dest, "config", "user.email", "t@example.com")
    git(dest, "config", "user.name", "T")
    return dest.resolve()


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A small committed repository with a remote URL (what teammates clone)."""
    root = make_repo(tmp_path / "origin")
    git(root, "remote", "add", "origin", "git@example.com:team/shop.git")
    return root


@pytest.fixture
def two_clones(origin: Path, tmp_path: Path) -> tuple[Path, Path]:
    a, b = clone(origin, tmp_path / "alice"), clone(origin, tmp_path / "bob")
    for c in (a, b):  # both point at the team's remote, as real clones would
        git(c, "remote", "set-url", "origin", "https://example.com/team/shop")
    return a, b


def mirror(root: Path) -> TeamLocal:
    return TeamLocal(root / ".neuralmind")
