"""A session that never pauses (an editor open for days) keeps bounded memory of what it has
learned, and ordinary sessions learn exactly what they learned with unbounded memory."""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

from neuralmind.synapse.sessions import (
    SESSION_MEMORY_FILES,
    SESSION_MEMORY_PAIRS,
    Batch,
    Question,
    SessionTracker,
)
from neuralmind.synapse.store import SynapseStore

T0 = 1_700_000_000.0


def _stream(n: int, hot: int, cold: int, seed: int) -> list[tuple[str, str]]:
    """(kind, file): 80 % of events on a small hot set, the rest spread over `cold` files."""
    rng = random.Random(seed)
    hot_files = [f"src/hot/module_{i:03d}.py" for i in range(hot)]
    cold_files = [f"src/pkg{i // 100:02d}/cold_module_{i:04d}.py" for i in range(cold)]
    return [("edit" if i % 3 else "open",
             rng.choice(hot_files) if rng.random() < 0.8 else rng.choice(cold_files))
            for i in range(n)]


def _feed(tracker: SessionTracker, events: list[tuple[str, str]], start: int = 0) -> None:
    """One session, an event a second (never idle), a flush every 50 events as the editor's
    quiet-second flushes do, and a question every 10,000 events."""
    for i, (kind, file) in enumerate(events, start):
        if i % 10_000 == 0:
            tracker.question("editor", f"question {i}", [f"src/hot/module_{i % 7:03d}.py"],
                             ts=T0 + i)
        tracker.event("editor", kind, file, ts=T0 + i)
        if i % 50 == 49:
            tracker.flush("editor")


def test_a_session_that_never_pauses_stays_bounded() -> None:
    learned = {"pairs": 0, "batches": 0}

    def count(batch: Batch) -> None:        # keeps nothing per event: only the tracker grows
        learned["pairs"] += len(batch.pairs)
        learned["batches"] += 1

    tracker = SessionTracker(count, lambda q: None)
    events = _stream(100_000, hot=20, cold=3_000, seed=1)
    _feed(tracker, events[:20_000])                     # warm-up: the memory fills
    tracemalloc.start()
    try:
        _feed(tracker, events[20_000:], start=20_000)
        grown, _ = tracemalloc.get_traced_memory()      # live blocks allocated after warm-up
    finally:
        tracemalloc.stop()
    session = tracker._sessions["editor"]
    assert len(session.learned) <= SESSION_MEMORY_PAIRS + 300      # + one window's pairs
    assert len(session.seen_transitions) <= SESSION_MEMORY_PAIRS + 300
    assert len(session.counted) <= SESSION_MEMORY_FILES + 25
    assert len(session.last_edit) <= 25 and len(session.window) <= 25
    assert len(session.question_files) <= SESSION_MEMORY_FILES
    # unbounded, the sets held ~265,000 pairs after 100k events (~16 MB more than here)
    assert grown < 3_000_000, f"{grown / 1e6:.1f} MB allocated and kept after warm-up"
    assert learned["pairs"] > 100_000 and learned["batches"] > 2_000   # it kept learning


def _record(memory_pairs: int, memory_files: int, events: list[tuple[str, str]],
            ) -> tuple[list[Batch], list[Question]]:
    batches: list[Batch] = []
    questions: list[Question] = []
    tracker = SessionTracker(batches.append, questions.append,
                             memory_pairs=memory_pairs, memory_files=memory_files)
    _feed(tracker, events)
    tracker.close_all()
    return batches, questions


def test_ordinary_sessions_learn_exactly_what_unbounded_memory_learned(tmp_path: Path) -> None:
    """80 files in one never-idle session: the 25-file window slides and files come back, yet
    the batches, and so the weights in a real store, equal those of unbounded memory."""
    events = _stream(30_000, hot=15, cold=65, seed=2)
    bounded = _record(SESSION_MEMORY_PAIRS, SESSION_MEMORY_FILES, events)
    unbounded = _record(10**9, 10**9, events)
    assert bounded == unbounded
    assert sum(len(b.pairs) for b in bounded[0]) > 1_000      # the window really slid

    dumps = []
    for name, (batches, _) in (("bounded", bounded), ("unbounded", unbounded)):
        store = SynapseStore(tmp_path / name / "synapses.db")
        for b in batches:
            store.learn_batch(b.pairs, b.touched, b.transitions, "personal", b.ts)
        dumps.append((store.dump(now=T0), store.dump_transitions(now=T0)))
        store.close()
    assert dumps[0] == dumps[1] and dumps[0][0]


def _revisit(memory_pairs: int) -> int:
    """a.py and b.py together, then 35 other files (they leave the window), then back."""
    batches: list[Batch] = []
    tracker = SessionTracker(batches.append, lambda q: None, memory_pairs=memory_pairs)
    files = ["a.py", "b.py", *(f"other{i:02d}.py" for i in range(35)), "a.py", "b.py"]
    for i, f in enumerate(files):
        tracker.event("s", "open", f, ts=T0 + i)
        tracker.flush()
    return [p for b in batches for p in b.pairs].count(("a.py", "b.py"))


def test_past_its_memory_a_long_forgotten_pair_is_learned_once_more() -> None:
    """The price of the bound, shown on a memory of two windows' pairs (600): a pair that left
    the window and was pushed out by newer ones is reinforced again when it comes back. With
    the real memory (10,000 pairs) or an unbounded one it is learned once per session."""
    assert _revisit(600) == 2
    assert _revisit(SESSION_MEMORY_PAIRS) == _revisit(10**9) == 1
