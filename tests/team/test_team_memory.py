"""Decisions and team-visible memory through the team store: a write and its event commit
together in memory.db, two stores converge on the same records, concurrent edits of one
decision are both kept and `decisions audit` shows the conflict, and a sync killed with
SIGKILL loses and duplicates nothing. Real git clones, real SQLite, real PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
import pytest
from pgcluster import wait_until
from test_team_cli import nm

from neuralmind import outbox
from neuralmind.engine import Workspace
from neuralmind.events import bus
from neuralmind.repo.learned import HOME_ENV


def workspaces(clones: tuple[Path, Path], dsn: str,
               monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, Workspace]:
    """Alice's and Bob's engines: two machines (each its own learned folder), one store."""
    monkeypatch.setenv("NEURALMIND_TEAM_DSN", dsn)
    out = []
    for p in clones:
        monkeypatch.setenv(HOME_ENV, home(p))
        out.append(Workspace(p))
        out[-1].memory.connection()        # memory.db in this machine's learned folder
    return out[0], out[1]


def home(clone: Path) -> str:
    return str(clone.parent / f"{clone.name}-home")


def queued(ws: Workspace) -> list[dict]:
    """The record events waiting in memory.db's outbox."""
    conn = sqlite3.connect(ws.memory.path)
    try:
        if not outbox.installed(conn):
            return []
        return [json.loads(p) for (p,) in conn.execute(
            "SELECT payload FROM team_outbox ORDER BY seq")]
    finally:
        conn.close()


def sync(*team: Workspace) -> None:
    for ws in team:
        ws.team.sync()


def test_team_visible_writes_queue_their_event_in_the_same_transaction(
        team_db: str, two_clones: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    alice, _ = workspaces(two_clones, team_db, monkeypatch)
    mem = alice.memory
    lesson = mem.remember("Run migrations with --plan first", "lesson", hubs=["db"])
    mem.remember("remember to buy milk", "note")                        # personal
    proposed = mem.remember("Retry the flaky payment test once", "lesson", proposed=True)
    d = mem.record("Money in integer cents", "Floats round.", files=["app/billing.py"])
    assert [(e["type"], e["id"], e["base"]) for e in queued(alice)] == [
        ("memory", lesson.id, None), ("decision", d.id, None)]
    assert queued(alice)[1]["record"]["status"] == "ACTIVE"

    mem.rate(lesson.id, "useful")          # feedback is this machine's own use: no event
    mem.accept(proposed.id)                # a person accepted it: now it is the team's
    mem.invalidate(d.id, "we use Decimal now")
    events = queued(alice)
    conn = sqlite3.connect(mem.path)
    me = outbox.author(conn)
    conn.close()
    assert [(e["id"], e["base"]) for e in events[2:]] == [(proposed.id, None), (d.id, [me, 2])]
    assert events[-1]["record"]["status"] == "INVALIDATED"     # edited from its version 2

    def broken(conn: sqlite3.Connection, changes: list) -> None:
        raise RuntimeError("disk full")

    mem.add_write_hook(broken)
    with pytest.raises(RuntimeError):
        mem.remember("Never stored", "lesson")
    mem.write_hooks.remove(broken)
    assert len(queued(alice)) == len(events)               # neither the atom nor its event
    assert not any(a.label == "Never stored" for a, _ in mem.ranked())


def test_two_stores_converge_on_decisions_and_team_memory(
        team_db: str, two_clones: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    alice, bob = workspaces(two_clones, team_db, monkeypatch)
    d = alice.memory.record("Money in integer cents", "Floats round.", files=["app/billing.py"],
                            tags=["money"])
    lesson = alice.memory.remember("Run migrations with --plan first", "lesson", hubs=["db"],
                                   about=["app/users.py"])
    pref = alice.memory.remember("Answer in British English", "preference")
    alice.memory.pin(pref.id)
    note = alice.memory.remember("my local scratch note", "note")
    theirs = bob.memory.record("One pool per process", "Opening costs 40 ms.")
    alice.team.local.put_record("memory", "broken1", {      # fails after its atom row
        "type": "lesson", "label": "L", "text": "T", "links": [["no-such-kind", "x"]]})
    heard: list[tuple[str, str, str, list[str]]] = []     # the observatory's refresh signal
    stop = bus.subscribe(lambda e: heard.append((e.kind, e.data.get("change", ""),
                                                 e.data.get("id", ""), e.data.get("files"))))
    sync(alice, bob, alice)
    for ws in (alice, bob):       # a malformed version is kept in the log, applied nowhere
        with pytest.raises(KeyError):
            ws.memory.atom("broken1")

    got = bob.memory.get(d.id)
    assert (got.title, got.status, got.files_affected, got.tags, got.commit_sha) == (
        d.title, "ACTIVE", ["app/billing.py"], ["money"], d.commit_sha)
    assert got.fingerprints == d.fingerprints and got.fingerprints
    shared = bob.memory.atom(lesson.id)
    assert (shared.type, shared.text, shared.hubs, shared.about) == (
        "lesson", lesson.text, ["db"], ["app/users.py"])
    assert bob.memory.atom(pref.id).pinned                       # a directive on bob's side too
    with pytest.raises(KeyError):
        bob.memory.atom(note.id)                                 # personal notes stay home
    assert alice.memory.get(theirs.id).title == "One pool per process"
    applied = sorted(h for h in heard if h[1] == "team")
    assert applied == sorted([("decision", "team", d.id, ["app/billing.py"]),
                              ("memory", "team", lesson.id, ["app/users.py"]),
                              ("memory", "team", pref.id, []),
                              ("decision", "team", theirs.id, [])])   # once each, no echo
    assert [d.id for d in bob.memory.search("integer cents", mode="keyword").records] == [d.id]
    assert queued(alice) == queued(bob) == []         # applying a teammate's version sends nothing
    assert alice.team.local.state_hash() == bob.team.local.state_hash()

    bob.memory.amend(d.id, title="Money in integer cents, always")
    alice.memory.forget(lesson.id)
    heard.clear()
    sync(bob, alice, bob)
    stop()
    assert ("memory", "deleted", lesson.id, []) in heard
    assert [h[:3] for h in heard if h[1] == "team"] == [("decision", "team", d.id)]
    assert alice.memory.get(d.id).title == "Money in integer cents, always"
    with pytest.raises(KeyError):
        bob.memory.atom(lesson.id)                                # forgotten for the team
    history = alice.team.local.record_history("decision", d.id)
    assert [v["record"]["title"] for v in history] == [d.title, "Money in integer cents, always"]
    assert alice.team.local.conflicts() == []                     # edits in turn: no conflict
    assert queued(alice) == queued(bob) == []


def test_a_concurrent_edit_is_kept_and_shown_by_decisions_audit(
        team_db: str, two_clones: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    alice, bob = workspaces(two_clones, team_db, monkeypatch)
    d = alice.memory.record("Cache for 60 s", "The upstream allows it.")
    sync(alice, bob)
    alice.memory.amend(d.id, title="Cache for 30 s")          # both edit the same version
    bob.memory.invalidate(d.id, "the upstream forbids caching")
    sync(alice, bob, alice)                                   # bob's edit is later in order
    for ws in (alice, bob):
        got = ws.memory.get(d.id)
        assert (got.title, got.status) == ("Cache for 60 s", "INVALIDATED")
        (entry,) = [e for e in ws.decisions_audit().entries if e.decision.id == d.id]
        assert "conflict" in entry.attention
        assert [(v["title"], v["status"], v["current"]) for v in entry.conflict] == [
            ("Cache for 30 s", "ACTIVE", False), ("Cache for 60 s", "INVALIDATED", True)]
    assert alice.team.local.state_hash() == bob.team.local.state_hash()
    text = nm("decisions", "audit", cwd=alice.root,
              env={"NEURALMIND_TEAM_DSN": os.environ["NEURALMIND_TEAM_DSN"],
                   HOME_ENV: home(alice.root)}).stdout
    assert "(invalidated, conflict)" in text
    assert "conflict: kept [ACTIVE] Cache for 30 s" in text
    assert "conflict: shown [INVALIDATED] Cache for 60 s" in text


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from neuralmind import config
    config.TEAM_PUSH_BATCH = 10          # many small transactions: the kill lands mid-sync
    from neuralmind.engine import Workspace
    ws = Workspace(Path(sys.argv[1]))
    for i in range(int(sys.argv[2])):
        ws.memory.remember(f"lesson number {i}", "lesson")
    print("ready", flush=True)
    while True:
        ws.team.sync()
""")


def test_a_sync_killed_mid_push_loses_and_duplicates_no_record(
        team_db: str, two_clones: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    n = 150
    env = {**os.environ, "NEURALMIND_TEAM_DSN": team_db, HOME_ENV: home(two_clones[0])}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(two_clones[0]), str(n)],
                            stdout=subprocess.PIPE, text=True, env=env)

    def on_server() -> list[tuple[str, int]]:
        with psycopg.connect(team_db) as conn:
            try:
                return [(a, int(s)) for a, s in conn.execute(
                    "SELECT author, seq FROM neuralmind.events ORDER BY pos")]
            except psycopg.errors.UndefinedTable:
                return []
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert wait_until(lambda: len(on_server()) > 0, 60)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert 0 < len(on_server()) <= n
    alice, bob = workspaces(two_clones, team_db, monkeypatch)
    sync(alice, bob)
    events = on_server()
    assert len(events) == len(set(events)) == n                # every version once
    assert sorted(s for _, s in events) == list(range(1, n + 1))
    labels = {a.label for a, _ in bob.memory.ranked()}
    assert labels == {f"lesson number {i}" for i in range(n)}
    assert queued(alice) == [] and alice.team.local.pending_count() == 0
