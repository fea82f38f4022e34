"""Access: a writer role pushes, a reader role pulls but cannot push; TLS via sslmode;
passwords come from ~/.pgpass (PGPASSFILE) and never from a stored DSN."""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest
from conftest import PgServer, mirror

from neuralmind.errors import EngineError
from neuralmind.team import pg_schema
from neuralmind.team.identity import RepoIdentity
from neuralmind.team.remote import OutEvent, RemoteStore
from neuralmind.team.sync import TeamSync

REPO = RepoIdentity("c" * 40, "example.com/team/shop")


def login_role(pg: PgServer, group: str) -> tuple[str, str]:
    name, password = f"nm_{group.split('_')[-1]}_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    with psycopg.connect(pg.admin_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}' IN ROLE {group}")
    return name, password


def test_writer_pushes_and_reader_only_pulls(pg: PgServer, team_db: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with psycopg.connect(team_db, autocommit=True) as conn:   # the owner sets the store up
        pg_schema.migrate(conn)
    writer, wpass = login_role(pg, pg_schema.WRITER_ROLE)
    reader, rpass = login_role(pg, pg_schema.READER_ROLE)
    dbname = psycopg.conninfo.conninfo_to_dict(team_db)["dbname"]
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"*:*:{dbname}:{writer}:{wpass}\n*:*:{dbname}:{reader}:{rpass}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    monkeypatch.delenv("PGPASSWORD", raising=False)
    w_dsn = psycopg.conninfo.make_conninfo(team_db, user=writer)
    r_dsn = psycopg.conninfo.make_conninfo(team_db, user=reader)

    alice, bob = mirror(tmp_path / "a"), mirror(tmp_path / "b")
    alice.learn_batch([], ["app/billing.py"], ts=1.0)
    s = TeamSync(alice, w_dsn, REPO)
    try:
        assert s.sync_once().pushed == 1
    finally:
        s.close()

    bob.learn_batch([], ["app/users.py"], ts=2.0)
    s = TeamSync(bob, r_dsn, REPO)
    try:
        report = s.sync_once()
    finally:
        s.close()
    assert report.read_only and report.pulled == 1 and report.pushed == 0
    assert report.unpushed == 1                     # kept, not lost, for a writer role later
    remote = RemoteStore.open(r_dsn, REPO, create=False)
    try:
        with pytest.raises(EngineError, match="may pull but not push") as e:
            remote.push([OutEvent("x@1", 1, "retrieval.used", '{"ts": 1, "node": "a"}')])
        assert e.value.code == "read_only"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            remote.conn.execute("DELETE FROM neuralmind.snapshots")
    finally:
        remote.close()


def test_a_reader_cannot_register_a_new_repository(pg: PgServer, team_db: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    with psycopg.connect(team_db, autocommit=True) as conn:
        pg_schema.migrate(conn)
    reader, rpass = login_role(pg, pg_schema.READER_ROLE)
    monkeypatch.setenv("PGPASSWORD", rpass)
    with pytest.raises(EngineError, match="nothing for this repository"):
        RemoteStore.open(psycopg.conninfo.make_conninfo(team_db, user=reader), REPO)


def test_a_wrong_password_is_unreachable_not_a_crash(pg: PgServer, team_db: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    writer, _ = login_role(pg, pg_schema.WRITER_ROLE)
    monkeypatch.setenv("PGPASSWORD", "wrong")
    with pytest.raises(EngineError, match="password authentication failed") as e:
        RemoteStore.open(psycopg.conninfo.make_conninfo(team_db, user=writer), REPO)
    assert e.value.code == "team_unreachable"


def test_tls_is_chosen_by_the_dsn_sslmode(pg: PgServer, team_db: str, tmp_path: Path) -> None:
    with psycopg.connect(pg.admin_dsn) as conn:
        if conn.execute("SHOW ssl").fetchone()[0] != "on":
            pytest.fail("the test server has TLS off (the private cluster turns it on when "
                        "openssl is installed)")
    remote = RemoteStore.open(psycopg.conninfo.make_conninfo(team_db, sslmode="require"), REPO)
    try:
        assert remote.conn.info.pgconn.ssl_in_use
    finally:
        remote.close()
    # verify-full checks the self-signed certificate against a CA we do not have: refused
    with pytest.raises(EngineError, match="cannot reach the team store"):
        RemoteStore.open(psycopg.conninfo.make_conninfo(
            team_db, sslmode="verify-full", sslrootcert=str(tmp_path / "none.crt")), REPO)
