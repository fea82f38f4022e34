"""Deterministic merging: the same events in any order give the same shared state, and
the fold is the synapse store's own maths."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import mirror

from neuralmind.synapse.store import SynapseStore
from neuralmind.team import events as ev
from neuralmind.team.local import TeamLocal
from neuralmind.team.remote import RemoteEvent

FILES = [f"pkg/m{i}.py" for i in range(8)]
DAY = 86400.0


def team_events(seed: int, n: int = 60) -> list[RemoteEvent]:
    """Events of three authors over two months: batches, seeds, weakening, uses, questions
    answers taught."""
    rng = random.Random(seed)
    out, seqs = [], {"ann@1": 0, "ben@2": 0, "cy@3": 0}
    for i in range(n):
        author = rng.choice(sorted(seqs))
        seqs[author] += 1
        ts = 1_700_000_000 + rng.uniform(0, 60 * DAY)
        roll = rng.random()
        if roll < 0.6:
            files = rng.sample(FILES, rng.randint(2, 4))
            kind, payload = ev.BATCH, {
                "ts": ts, "rate": 0.3, "touched": files,
                "pairs": [[a, b] for j, a in enumerate(files) for b in files[j + 1:]],
                "transitions": [[a, b] for a, b in zip(files, files[1:], strict=False)]}
        elif roll < 0.75:
            a, b = rng.sample(FILES, 2)
            kind, payload = ev.SEED, {"ts": ts, "pairs": [[a, b, rng.uniform(0.2, 0.7), 1]],
                                      "activations": [[a, rng.uniform(0, 3)]]}
        elif roll < 0.85:
            a, b = rng.sample(FILES, 2)
            kind, payload = ev.WEAKEN, {"ts": ts, "factor": 0.5, "pairs": [[a, b]]}
        elif roll < 0.9:
            kind, payload = ev.BATCH, {"ts": ts, "rate": 0.3, "touched": [rng.choice(FILES)]}
        elif roll < 0.95:
            kind, payload = ev.QUESTION, {"ts": ts, "tokens": ["invoice", f"q{i}"],
                                          "files": [rng.choice(FILES)], "unused": []}
        else:
            kind, payload = ev.RECORD, {"ts": ts, "type": "decision", "id": f"d{i % 3}",
                                        "record": {"title": f"v{i}"}, "base": None}
        out.append(RemoteEvent(i + 1, author, seqs[author], kind,
                               json.dumps(payload, sort_keys=True)))
    return out


def replay(local: TeamLocal, events: list[RemoteEvent], batch: int) -> None:
    """Deliver `events` (each with its store position) in the given order, `batch` at a
    time."""
    for i in range(0, len(events), batch):
        local.ingest("store", events[i:i + batch])


@pytest.mark.parametrize("seed", [1, 2])
def test_permutations_of_the_same_events_converge_bit_for_bit(seed: int, tmp_path: Path) -> None:
    events = team_events(seed)
    rng = random.Random(seed * 100)
    hashes, weights = set(), []
    for k in range(6):
        order = events[:] if k == 0 else rng.sample(events, len(events))
        local = mirror(tmp_path / f"m{k}")
        replay(local, order, batch=rng.choice([1, 7, 60]))
        hashes.add(local.state_hash())
        assert local.questions_top() == sum(e.kind == ev.QUESTION for e in events) > 0
        weights.append(local.synapse_weights(now=1_700_000_000 + 90 * DAY))
    assert len(hashes) == 1
    assert all(w == weights[0] for w in weights)   # exact float equality
    assert len(weights[0]) > 5


def test_an_event_ahead_of_a_gap_waits_for_it(tmp_path: Path) -> None:
    """Position 1 arriving last: nothing is folded before it, everything after it."""
    events = team_events(3, n=30)
    a, b = mirror(tmp_path / "a"), mirror(tmp_path / "b")
    replay(a, events, batch=30)
    replay(b, events[1:], batch=5)
    assert b.shared_rows() == [] and b.counts()["waiting"] == 29 and b.pulled("store") == 0
    replay(b, events[:1], batch=1)
    assert b.counts()["waiting"] == 0 and b.pulled("store") == 30
    assert a.state_hash() == b.state_hash()


def test_a_clone_meeting_another_store_folds_all_of_its_events(tmp_path: Path) -> None:
    """Positions are one store's numbering: after 30 events from store A, store B's 10
    (other events, positions 1..10) are all folded, not skipped as A's 1..30 (the editor
    met a new store behind a position it had: it pulled 250 events of 6,000)."""
    events = team_events(3, 40)
    fresh = mirror(tmp_path / "fresh")
    fresh.ingest("B", [RemoteEvent(i + 1, e.author, e.seq, e.kind, e.payload)
                       for i, e in enumerate(events[30:])])
    moved = mirror(tmp_path / "moved")
    moved.ingest("A", events[:30])
    assert moved.ingest("B", [RemoteEvent(i + 1, e.author, e.seq, e.kind, e.payload)
                              for i, e in enumerate(events[30:])]) == 10
    assert moved.pulled("B") == 10 and moved.counts()["waiting"] == 0
    both = mirror(tmp_path / "both")
    both.ingest("A", events)
    assert moved.state_hash() == both.state_hash() != fresh.state_hash()
    # a mirror from before positions named their store: its positions are not B's either
    older = mirror(tmp_path / "older")
    older.ingest("A", events[:30])
    with older.connection() as conn:
        conn.execute("DELETE FROM meta WHERE key = 'positions_of'")
    older.ingest("B", [RemoteEvent(i + 1, e.author, e.seq, e.kind, e.payload)
                       for i, e in enumerate(events[30:])])
    assert older.pulled("B") == 10 and older.state_hash() == both.state_hash()


def test_own_events_and_pulled_ones_fold_the_same_as_any_order(tmp_path: Path) -> None:
    """A clone that wrote some events itself (folded at write time, pushed later) ends
    in the same state as a clone that only pulled them."""
    events = team_events(4, n=40)
    writer = mirror(tmp_path / "w")
    clock = iter(range(1, 1000))
    writer.clock = lambda: float(next(clock))
    own = []
    for e in events[:15]:
        seq = writer.write(e.kind, json.loads(e.payload))
        own.append(RemoteEvent(0, writer.author, seq, e.kind, e.payload))
    others = events[15:]
    # the server interleaves: others first, then the writer's once pushed
    server = others[:10] + own + others[10:]
    server = [RemoteEvent(i + 1, e.author, e.seq, e.kind, e.payload)
              for i, e in enumerate(server)]
    before = writer.shared_rows(visible=True)
    assert before and writer.shared_rows() == []     # shown here, not yet the team's
    writer.ingest("store", server)
    reader = mirror(tmp_path / "r")
    replay(reader, list(reversed(server)), batch=4)
    assert writer.state_hash() == reader.state_hash()
    assert writer.counts()["events"] == reader.counts()["events"] == 40
    assert writer.counts()["unechoed"] == 0
    assert writer.shared_rows(visible=True) == writer.shared_rows()  # the overlay is gone


def test_the_fold_is_the_synapse_stores_own_maths(tmp_path: Path) -> None:
    """Learning batches folded by the team mirror give the weights the synapse store
    computes for the same batches in the `shared` namespace."""
    rng = random.Random(9)
    store = SynapseStore(tmp_path / "syn.db")
    local = mirror(tmp_path / "m")
    t = 1_700_000_000.0
    for _ in range(40):
        t += rng.uniform(0, 20 * DAY)
        files = sorted(rng.sample(FILES, 3))
        pairs = [(a, b) for i, a in enumerate(files) for b in files[i + 1:]]
        store.learn_batch(pairs, files, [], "shared", now=t)
        local.learn_batch(pairs, files, [], ts=t)
    now = t + 30 * DAY
    ours = local.synapse_weights(now=now)
    theirs = {(s["a"], s["b"]): s["weight"] for s in store.dump(["shared"], now=now)}
    assert set(theirs) <= set(ours)
    for pair, w in theirs.items():
        assert ours[pair] == pytest.approx(w, rel=1e-12, abs=1e-15)
    counts = {(s["a"], s["b"]): s["count"] for s in store.dump(["shared"], now=now)}
    rows = {tuple(t.split("\x1f")[1:]): c for t, _, c, _ in local.shared_rows("s", visible=True)}
    assert all(rows[p] == c for p, c in counts.items())
    store.close()


def test_a_malformed_local_write_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    local = mirror(tmp_path / "m")
    with pytest.raises(ValueError, match="rate"):
        local.write(ev.BATCH, {"ts": 1.0, "rate": 7, "pairs": [["a", "b"]]})
    assert local.pending_count() == 0 and local.counts()["events"] == 0


def test_a_question_that_is_not_words_and_files_is_kept_unapplied(tmp_path: Path) -> None:
    local = mirror(tmp_path / "m")
    bad = [{"ts": 1.0, "tokens": ["the whole question text"], "files": ["a.py"]},
           {"ts": 1.0, "tokens": ["invoice"], "files": [], "unused": []},
           {"ts": 1.0, "tokens": ["invoice"], "files": ["a\x1fb.py"]}]
    good = {"ts": 2.0, "tokens": ["invoice"], "files": ["a.py"], "unused": ["b.py"]}
    local.ingest("store", [RemoteEvent(i + 1, "ann@1", i + 1, ev.QUESTION, json.dumps(p))
                           for i, p in enumerate([*bad, good])])
    assert local.counts()["malformed"] == 3 and local.pulled("store") == 4
    assert [r[1:] for r in local.questions_after(0, 10)] == [
        ("ann@1", 2.0, "invoice", '["a.py"]', '["b.py"]')]
