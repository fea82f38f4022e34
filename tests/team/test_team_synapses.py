"""The synapse layer wired to the team store: shared learning goes into the synapse store's
own outbox in the same transaction, teammates' learning comes back into `shared`, and
local-only namespaces never leave the machine. Real SQLite, real git, real PostgreSQL."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import mirror
from sample_workspace import git

from neuralmind import outbox
from neuralmind.engine import Workspace
from neuralmind.repo.learned import HOME_ENV
from neuralmind.synapse.layer import SynapseLayer
from neuralmind.synapse.questions import question_tokens
from neuralmind.team import compaction, fold
from neuralmind.team.bridge import SynapseBridge
from neuralmind.team.remote import RemoteEvent

BILL, USERS, STORE = "app/billing.py", "app/users.py", "app/storage.py"
NOW = time.time() + 3600.0     # weights are compared at one moment (they decay)


def learn(layer: SynapseLayer, *files: str, session: str = "s") -> None:
    """One editing batch over `files` (edits in one window, then flushed)."""
    for f in files:
        layer.editing_event(session, "edit", f)
    layer.flush(session)


def outbox_rows(layer: SynapseLayer) -> list[tuple[str, dict]]:
    conn = sqlite3.connect(layer.store.path)
    try:
        return [(k, json.loads(p)) for k, p in conn.execute(
            "SELECT kind, payload FROM team_outbox ORDER BY seq")]
    except sqlite3.OperationalError:
        return []          # never shared: no outbox at all
    finally:
        conn.close()


def shared_pairs(layer: SynapseLayer) -> dict[tuple[str, str], float]:
    return {(s["a"], s["b"]): s["weight"] for s in layer.store.dump(["shared"], now=NOW)}


def sharing_layer(root: Path) -> SynapseLayer:
    layer = SynapseLayer(root / ".neuralmind", root)
    layer.share = True
    return layer


def test_shared_learning_and_its_event_commit_together_or_not_at_all(origin: Path) -> None:
    layer = sharing_layer(origin)
    learn(layer, BILL, USERS)
    assert set(layer.store.stats()["namespaces"]) == {"personal", "shared"}
    ((kind, payload),) = outbox_rows(layer)
    assert kind == outbox.BATCH and payload["pairs"] == [[BILL, USERS]]
    assert payload["touched"] == [BILL, USERS] and payload["transitions"] == [[BILL, USERS]]

    # the outbox refuses the next entry: the learning write is rolled back with it
    conn = sqlite3.connect(layer.store.path)
    conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON team_outbox "
                 "BEGIN SELECT RAISE(ABORT, 'outbox refused'); END")
    conn.commit()
    before = layer.store.dump(now=NOW)
    learn(layer, STORE, USERS)
    assert "outbox refused" in (layer.last_skipped() or "")
    assert layer.store.dump(now=NOW) == before and len(outbox_rows(layer)) == 1
    conn.execute("DROP TRIGGER refuse")
    conn.commit()
    conn.close()
    learn(layer, STORE, USERS, session="t")
    assert len(outbox_rows(layer)) == 2 and (STORE, USERS) in shared_pairs(layer)
    layer.close()


def test_branch_and_unshared_learning_stay_local(origin: Path) -> None:
    git(origin, "checkout", "-q", "-b", "feature/x")
    layer = sharing_layer(origin)
    learn(layer, BILL, USERS)
    assert layer.namespace == "branch:feature/x"
    assert outbox_rows(layer) == [] and shared_pairs(layer) == {}
    git(origin, "checkout", "-q", "main")
    quiet = SynapseLayer(origin / ".neuralmind", origin)      # no team configured
    learn(quiet, BILL, STORE)
    assert outbox_rows(quiet) == [] and shared_pairs(quiet) == {}
    layer.close()
    quiet.close()


def test_feedback_and_seeds_are_shared_once(origin: Path) -> None:
    layer = sharing_layer(origin)
    layer.feedback(BILL, True, [USERS])
    layer.feedback(BILL, False)
    kinds = [k for k, _ in outbox_rows(layer)]
    assert kinds == [outbox.BATCH, outbox.WEAKEN]
    assert outbox_rows(layer)[1][1]["pairs"] == [[BILL, USERS]]
    for i in range(2):      # co-change history: three files changed together twice
        for f in (BILL, USERS, STORE):
            (origin / f).write_text((origin / f).read_text() + f"# {i}\n")
        git(origin, "commit", "-qam", f"change {i}")
    layer.seed_cochange()
    seeds = [p for k, p in outbox_rows(layer) if k == outbox.SEED]
    sent = {tuple(p[:2]) for s in seeds for p in s["pairs"]}
    assert {(BILL, STORE), (BILL, USERS), (STORE, USERS)} <= sent
    assert any(s["activations"] for s in seeds)
    layer.seed_cochange()      # the same history again: nothing new to send
    assert len([k for k, _ in outbox_rows(layer) if k == outbox.SEED]) == len(seeds)
    layer.close()


def test_the_bridge_collects_once_and_shows_the_teams_state(origin: Path, tmp_path: Path,
                                                            ) -> None:
    layer = sharing_layer(origin)
    local = mirror(tmp_path / "mirror")
    bridge = SynapseBridge(local, lambda: layer)
    learn(layer, BILL, USERS)
    author = outbox.author(sqlite3.connect(layer.store.path))
    # a process killed after the mirror took the event and before the store dropped it
    local.collect(author, outbox.pending(sqlite3.connect(layer.store.path), 10))
    bridge.exchange()
    assert local.pending_count() == 1 and outbox_rows(layer) == []
    assert local.counts()["unechoed"] == 1

    # a teammate's batch arrives (position 1), then ours comes back (position 2)
    theirs = {"ts": NOW - 3600.0, "rate": 0.5, "pairs": [[STORE, USERS]], "touched": [],
              "transitions": [[STORE, USERS]]}
    mine = local.pending()[0]
    local.ingest("store", [RemoteEvent(1, "bob@1", 1, outbox.BATCH, json.dumps(theirs)),
                           RemoteEvent(2, mine.author, mine.seq, mine.kind, mine.payload)])
    assert bridge.exchange() > 0
    team = {tuple(t.split(fold.SEP)[1:]): w for t, w, _, _ in local.shared_rows(fold.SYNAPSE)}
    shown = shared_pairs(layer)
    assert set(shown) == {(BILL, USERS), (STORE, USERS)} == set(team)
    assert layer.store.transitions_from(STORE, {"shared": 1.0})   # the teammate's step
    assert bridge.exchange() == 0                                  # nothing changed since

    # a new synapses.db (deleted, salvaged) is given the whole team state back
    layer.close()
    for p in origin.joinpath(".neuralmind").glob("synapses.db*"):
        p.unlink()
    fresh = sharing_layer(origin)
    bridge = SynapseBridge(local, lambda: fresh)
    assert bridge.exchange() >= 2 and set(shared_pairs(fresh)) == set(team)
    fresh.close()


def test_a_backlog_is_collected_whole_a_batch_at_a_time(origin: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """After an outage the outbox holds more than one push batch: every event reaches the
    mirror, in order, and none stays in synapses.db."""
    monkeypatch.setattr("neuralmind.config.TEAM_PUSH_BATCH", 2)
    layer = sharing_layer(origin)
    pairs = [(BILL, USERS), (STORE, USERS), (BILL, STORE), (USERS, BILL), (STORE, BILL)] * 2
    for i, pair in enumerate(pairs):
        learn(layer, *pair, session=f"s{i}")
    local = mirror(tmp_path / "mirror")
    SynapseBridge(local, lambda: layer).exchange()
    assert outbox_rows(layer) == []
    queued = local.pending()
    assert [e.seq for e in queued] == list(range(1, 11))
    assert [json.loads(e.payload)["touched"] for e in queued] == [list(p) for p in pairs]
    layer.close()


def test_the_structural_prior_stays_a_floor(origin: Path, tmp_path: Path) -> None:
    layer = sharing_layer(origin)
    layer.seed_structural([(f"{BILL}::compute_invoice_total", f"{USERS}::authenticate_user", 9)])
    prior = shared_pairs(layer)[(BILL, USERS)]
    local = mirror(tmp_path / "mirror")
    weak = {"ts": NOW - 3600.0, "rate": 0.01, "pairs": [[BILL, USERS]], "touched": [], "transitions": []}
    local.ingest("store", [RemoteEvent(1, "bob@1", 1, outbox.BATCH, json.dumps(weak))])
    SynapseBridge(local, lambda: layer).exchange()
    assert shared_pairs(layer)[(BILL, USERS)] == pytest.approx(prior)
    layer.close()


def test_compaction_keeps_the_state_and_still_recognises_old_events(tmp_path: Path) -> None:
    local = mirror(tmp_path / "m")
    events = [RemoteEvent(i + 1, f"dev{i % 3}@x", i // 3 + 1, outbox.BATCH,
                          json.dumps({"ts": float(i), "rate": 0.3, "touched": [f"f{i % 7}.py"]}))
              for i in range(60)]
    local.ingest("store", events)
    before = (local.state_hash(), local.counts()["events"])
    assert compaction.compact_all(local, "store") == 60 and local.counts()["compacted"] == 60
    assert (local.state_hash(), local.counts()["events"]) == before
    local.ingest("store", events)                 # re-sent: nothing applied twice
    local.reset_pulled("store")                   # a rebuilt store numbers them anew
    renumbered = [RemoteEvent(e.pos + 100, e.author, e.seq, e.kind, e.payload) for e in events]
    local.ingest("store", [RemoteEvent(i + 1, e.author, e.seq, e.kind, e.payload)
                           for i, e in enumerate(renumbered)])
    assert local.pulled("store") == 60 and local.state_hash() == before[0]
    extra = RemoteEvent(61, "dev9@x", 1, outbox.BATCH,
                        json.dumps({"ts": 99.0, "rate": 0.3, "touched": ["z.py"]}))
    local.ingest("store", [extra])                # and what follows folds as usual
    assert local.pulled("store") == 61 and local.state_hash() != before[0]


def test_two_clones_learn_from_each_other_through_the_store(
        team_db: str, two_clones: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEURALMIND_TEAM_DSN", team_db)
    workspaces = []
    for p in two_clones:    # two developers, two machines: clones on one machine share memory
        monkeypatch.setenv(HOME_ENV, str(p.parent / f"{p.name}-home"))
        workspaces.append(Workspace(p))
        assert workspaces[-1].learned.is_relative_to(p.parent / f"{p.name}-home")
    alice_ws, bob_ws = workspaces
    alice, bob = alice_ws.synapses, bob_ws.synapses
    assert alice.share and bob.share
    learn(alice, BILL, USERS)
    learn(bob, USERS, STORE)
    learn(bob, BILL, STORE)
    assert bob_ws.team.status()["local"]["unpushed"] == 2     # still in synapses.db
    for ws in (alice_ws, bob_ws, alice_ws):
        ws.team.sync()
    for layer in (alice, bob):
        assert set(shared_pairs(layer)) == {(BILL, USERS), (STORE, USERS), (BILL, STORE)}
    assert shared_pairs(alice) == shared_pairs(bob)
    assert bob_ws.team.status()["local"]["unpushed"] == 0
    assert alice_ws.team.local.state_hash() == bob_ws.team.local.state_hash()
    # alice's next-likely after billing now knows bob's billing -> storage habit
    assert STORE in dict(alice.next_likely_file(BILL, k=5))
    assert {(s["a"], s["b"]) for s in alice.store.dump(["personal"])} == {(BILL, USERS)}
    for layer in (alice, bob):
        layer.close()


def test_what_an_answers_use_taught_one_clone_ranks_for_the_other(
        team_db: str, two_clones: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers scored by use are shared (#20): a file kept after alice's answer, and one
    her answer returned that the work never used, move the question -> files association
    bob's ranking reads (`question_files`, context/retrieve.py); her question's text and
    session stay on her machine."""
    monkeypatch.setenv("NEURALMIND_TEAM_DSN", team_db)
    workspaces = []
    for p in two_clones:    # two machines: each its own learned folder
        monkeypatch.setenv(HOME_ENV, str(p.parent / f"{p.name}-home"))
        workspaces.append(Workspace(p))
        assert workspaces[-1].learned.is_relative_to(p.parent / f"{p.name}-home")
    alice_ws, bob_ws = workspaces
    question = "Where is the invoice total rounded, Alice's secret ticket 4711?"
    t0 = time.time() - 7200.0
    alice_ws.use.record("context", "alice-session", question,
                        {"hits": [{"file": STORE, "line": 1}, {"file": BILL, "line": 3}]}, now=t0)
    alice_ws.use.note([("edit", BILL, t0 + 60.0)])
    assert bob_ws.synapses.question_files("invoice total rounding") == []
    assert alice_ws.use.commit_made([BILL], now=t0 + 3600.0) == 1     # kept: settles, learns
    assert [k for k, _ in outbox_rows(alice_ws.synapses)] == [outbox.QUESTION]
    for ws in (alice_ws, bob_ws, alice_ws, bob_ws):
        ws.team.sync()

    scores = bob_ws.synapses.store.question_scores("how is the invoice total rounded")
    assert scores[BILL] > 0 > scores[STORE]              # kept lifts it, unused lowers it
    assert [f for f, _ in bob_ws.synapses.question_files("invoice total rounding")] == [BILL]
    conn = sqlite3.connect(bob_ws.synapses.store.path)
    rows = conn.execute("SELECT session, query, hits FROM questions").fetchall()
    conn.close()
    assert [(s.startswith("team:"), h) for s, _, h in rows] == [(True, "[]")]
    # her question's words (what ranking matches on), not its text
    assert rows[0][1] == " ".join(question_tokens(question)) != question
    assert "alice-session" not in json.dumps(rows)
    # alice shows her own question once (not again as a teammate's); both agree
    conn = sqlite3.connect(alice_ws.synapses.store.path)
    assert conn.execute("SELECT count(*), min(session) FROM questions").fetchone() == (
        1, "alice-session")
    conn.close()
    assert alice_ws.team.local.state_hash() == bob_ws.team.local.state_hash()
    bob_ws.team.sync()                                    # shown once, whatever the rounds
    assert len(bob_ws.synapses.store.question_scores("invoice")) == 2
    conn = sqlite3.connect(bob_ws.synapses.store.path)
    assert conn.execute("SELECT count(*) FROM questions").fetchone()[0] == 1
    conn.close()
    for ws in (alice_ws, bob_ws):
        ws.synapses.close()
