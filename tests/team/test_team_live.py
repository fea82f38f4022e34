"""The long-lived sync: NOTIFY wakes a teammate's mirror within seconds; dropped
connections are re-established and missed events caught up; a sync killed with SIGKILL
loses and duplicates nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
from conftest import mirror
from pgcluster import wait_until

from neuralmind.team.identity import RepoIdentity
from neuralmind.team.sync import SyncTask, TeamSync

REPO = RepoIdentity("d" * 40, "example.com/team/shop")


def test_notify_wakes_the_other_clone_and_reconnects_catch_up(team_db: str,
                                                              tmp_path: Path) -> None:
    alice, bob = mirror(tmp_path / "a"), mirror(tmp_path / "b")
    changes: list[int] = []
    # a poll period far beyond the waits below: only NOTIFY can deliver in time
    ta = SyncTask(TeamSync(alice, team_db, REPO), poll_seconds=600)
    tb = SyncTask(TeamSync(bob, team_db, REPO), poll_seconds=600, on_change=changes.append)
    ta.start()
    tb.start()
    try:
        assert wait_until(lambda: ta.status()["connected"] and tb.status()["connected"], 20)
        assert wait_until(lambda: tb._repo_id() is not None, 10)   # LISTEN precedes the sync
        alice.learn_batch([("app/billing.py", "app/users.py")], ["app/billing.py"])
        ta.kick()
        assert wait_until(lambda: bob.counts()["events"] == 1, 10), tb.status()
        assert changes == []            # learning is no news for decision diagnostics
        # each sync's cost is counted (the editor's share of a busy team, in its status)
        cost = tb.status()
        assert cost["rounds"] >= 2 and 0 < cost["busy_cpu_s"] < 60, cost
        assert 0 < cost["longest_round_ms"] < 60_000, cost

        with psycopg.connect(team_db, autocommit=True) as admin:   # drop every connection
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        alice.put_record("decision", "d1", {"title": "after the outage"})
        ta.kick()
        assert wait_until(lambda: bob.counts()["events"] == 2, 30), (ta.status(), tb.status())
        assert bob.record_current("decision", "d1")["record"]["title"] == "after the outage"
        assert wait_until(lambda: changes == [1], 10), changes    # a record is
        assert wait_until(lambda: alice.pending_count() == 0, 10)
        assert alice.state_hash() == bob.state_hash()
    finally:
        ta.stop()
        tb.stop()


PUSHER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from neuralmind import config
    config.TEAM_PUSH_BATCH = 25          # many small transactions: the kill lands mid-sync
    from neuralmind.team.identity import RepoIdentity
    from neuralmind.team.local import TeamLocal
    from neuralmind.team.sync import TeamSync
    local = TeamLocal(Path(sys.argv[1]))
    sync = TeamSync(local, sys.argv[2], RepoIdentity("d" * 40, "example.com/team/shop"))
    print("ready", flush=True)
    while True:
        sync.sync_once()
""")


def test_a_sync_killed_mid_push_loses_and_duplicates_nothing(team_db: str,
                                                             tmp_path: Path) -> None:
    local = mirror(tmp_path / "a")
    n = 1500
    for i in range(n):
        local.learn_batch([], [f"f{i % 50}.py"], ts=float(i))
    local.close()

    def server_count() -> int:
        with psycopg.connect(team_db) as conn:
            try:
                return int(conn.execute("SELECT count(*) FROM neuralmind.events").fetchone()[0])
            except psycopg.errors.UndefinedTable:
                return 0

    proc = subprocess.Popen([sys.executable, "-c", PUSHER, str(tmp_path / "a" / ".neuralmind"),
                             team_db], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert wait_until(lambda: server_count() > 0, 30)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = server_count()
    assert 0 < before <= n
    sync = TeamSync(mirror(tmp_path / "a"), team_db, REPO)
    try:
        report = sync.sync_once()
    finally:
        sync.close()
    assert report.unpushed == 0 and report.head == n
    with psycopg.connect(team_db) as conn:
        seqs = [r[0] for r in conn.execute("SELECT seq FROM neuralmind.events ORDER BY pos")]
    assert sorted(seqs) == list(range(1, n + 1))     # every event once: none lost, none twice
