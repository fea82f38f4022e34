"""The PostgreSQL side: migrations, the append-only log, idempotent pushes, catch-up."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest
from conftest import mirror

from neuralmind.errors import EngineError
from neuralmind.team import pg_schema
from neuralmind.team.identity import RepoIdentity
from neuralmind.team.remote import OutEvent, RemoteStore
from neuralmind.team.sync import TeamSync

REPO = RepoIdentity("a" * 40, "example.com/team/shop")


def test_migrations_run_once_in_one_transaction_even_when_racing(team_db: str) -> None:
    versions: list[int] = []
    errors: list[BaseException] = []

    def connect() -> None:
        try:
            with psycopg.connect(team_db, autocommit=True) as conn:
                versions.append(pg_schema.migrate(conn))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=connect) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and versions == [pg_schema.SCHEMA_VERSION] * 4
    with psycopg.connect(team_db) as conn:
        assert pg_schema.read_version(conn) == pg_schema.SCHEMA_VERSION
        assert conn.execute("SELECT count(*) FROM neuralmind.meta WHERE key = 'store_id'"
                            ).fetchone()[0] == 1


def test_a_failing_migration_leaves_the_store_as_it_was(team_db: str) -> None:
    def broken(conn: psycopg.Connection) -> None:
        conn.execute("CREATE TABLE neuralmind.half_done (x int)")
        raise RuntimeError("step 2 exploded")

    with psycopg.connect(team_db, autocommit=True) as conn:
        pg_schema.migrate(conn)
        with pytest.raises(RuntimeError, match="exploded"):
            pg_schema.migrate(conn, [*pg_schema.MIGRATIONS, (2, broken)])
        assert pg_schema.read_version(conn) == 1
        assert conn.execute("SELECT to_regclass('neuralmind.half_done')").fetchone()[0] is None


def test_a_newer_store_is_refused(team_db: str) -> None:
    with psycopg.connect(team_db, autocommit=True) as conn:
        pg_schema.migrate(conn)
        conn.execute("UPDATE neuralmind.meta SET value = '99' WHERE key = 'schema_version'")
        with pytest.raises(EngineError, match="newer than this NeuralMind"):
            pg_schema.migrate(conn)


def test_pushes_are_idempotent_and_positions_dense(team_db: str) -> None:
    remote = RemoteStore.open(team_db, REPO)
    try:
        batch = [OutEvent("alice@1", s, "retrieval.used", f'{{"ts": {s}, "node": "a.py"}}')
                 for s in range(1, 6)]
        first = remote.push(batch)
        again = remote.push(batch[2:] + [OutEvent("alice@1", 6, "retrieval.used",
                                                  '{"ts": 6, "node": "b.py"}')])
        assert (first.inserted, first.duplicates, first.head) == (5, 0, 5)
        assert (again.inserted, again.duplicates, again.head) == (1, 3, 6)
        got = remote.fetch(0, 100)
        assert [e.pos for e in got] == [1, 2, 3, 4, 5, 6]
        assert [e.seq for e in got] == [1, 2, 3, 4, 5, 6]
        assert [e.pos for e in remote.fetch(4, 1)] == [5]
    finally:
        remote.close()


def test_the_event_log_is_append_only(team_db: str) -> None:
    remote = RemoteStore.open(team_db, REPO)
    try:
        remote.push([OutEvent("alice@1", 1, "retrieval.used", '{"ts": 1, "node": "a.py"}')])
        for sql in ("UPDATE neuralmind.events SET kind = 'x'", "DELETE FROM neuralmind.events"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                remote.conn.execute(sql)
    finally:
        remote.close()


def test_two_clones_exchange_events_through_the_store(team_db: str, tmp_path: Path) -> None:
    alice, bob = mirror(tmp_path / "a"), mirror(tmp_path / "b")
    alice.learn_batch([("app/billing.py", "app/users.py")], ["app/billing.py"], ts=1000.0)
    alice.put_record("decision", "d1", {"title": "Money in cents"}, ts=1001.0)
    sa, sb = TeamSync(alice, team_db, REPO), TeamSync(bob, team_db, REPO)
    try:
        ra = sa.sync_once()
        assert (ra.pushed, ra.pulled, ra.head, ra.unpushed) == (2, 0, 2, 0)
        rb = sb.sync_once()
        assert (rb.pushed, rb.pulled, rb.position) == (0, 2, 2)
        assert bob.state_hash() == alice.state_hash()
        assert bob.record_current("decision", "d1")["record"]["title"] == "Money in cents"
        assert sb.sync_once().pulled == 0          # nothing is applied twice
        assert bob.counts()["events"] == 2
    finally:
        sa.close()
        sb.close()


def test_a_crash_between_push_and_acknowledge_duplicates_nothing(team_db: str,
                                                                  tmp_path: Path) -> None:
    alice = mirror(tmp_path / "a")
    for i in range(3):
        alice.learn_batch([], [f"f{i}.py"], ts=float(i))
    remote = RemoteStore.open(team_db, REPO)
    try:   # the server commits, the process dies before the outbox is acknowledged
        remote.push(alice.pending())
    finally:
        remote.close()
    sync = TeamSync(alice, team_db, REPO)
    try:
        report = sync.sync_once()
    finally:
        sync.close()
    assert (report.pushed, report.duplicates, report.head, report.unpushed) == (0, 3, 3, 0)
    assert alice.counts()["events"] == 3


def test_a_malformed_peer_event_is_kept_but_not_applied(team_db: str, tmp_path: Path) -> None:
    remote = RemoteStore.open(team_db, REPO)
    try:
        remote.push([OutEvent("mallory@1", 1, "synapse.batch", '{"ts": "soon", "pairs": 3}'),
                     OutEvent("mallory@1", 2, "synapse.batch",
                              '{"ts": 5, "rate": 0.5, "touched": ["ok.py"]}'),
                     # a kind no version sends now (a per-node use count, never shown)
                     OutEvent("mallory@1", 3, "retrieval.used", '{"ts": 6, "node": "ok.py"}')])
    finally:
        remote.close()
    bob = mirror(tmp_path / "b")
    sync = TeamSync(bob, team_db, REPO)
    try:
        assert sync.sync_once().pulled == 3
    finally:
        sync.close()
    assert bob.counts()["malformed"] == 2 and bob.counts()["events"] == 3
    assert [r[0] for r in bob.shared_rows()] == ["a\x1fok.py"] and bob.counts()["waiting"] == 0


def test_an_unreachable_store_is_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    alice = mirror(tmp_path / "a")
    alice.learn_batch([], ["x.py"], ts=1.0)
    sync = TeamSync(alice, "host=127.0.0.1 port=1 dbname=x user=x connect_timeout=2", REPO)
    with pytest.raises(EngineError, match="cannot reach the team store") as e:
        sync.sync_once()
    assert e.value.code == "team_unreachable"
    assert alice.pending_count() == 1
