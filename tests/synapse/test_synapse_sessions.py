"""Editing events -> co-activation batches, transitions and the question -> files signal."""

from __future__ import annotations

import pytest
from synapse_testkit import T0

from neuralmind import config

LR = config.LEARNING_RATE


def pairs(layer, node: str) -> dict[str, float]:
    return dict(layer.neighbors(node, k=100, now=T0))


def transitions(layer, node: str) -> dict[str, float]:
    return layer.store.transitions_from(node, {"personal": 1.0}, T0)


def test_a_session_is_one_batch_and_consecutive_files_are_transitions(layer):
    ev = layer.editing_event
    ev("s", "session_start", ts=T0)
    ev("s", "open", "a.py", ts=T0)
    ev("s", "open", "b.py", ts=T0 + 1)
    ev("s", "edit", "a.py", ts=T0 + 2)
    ev("s", "save", "a.py", ts=T0 + 3)
    ev("s", "edit", "c.py", ts=T0 + 4)
    assert pairs(layer, "a.py") == {}  # nothing learned before the batch closes
    ev("s", "session_end", ts=T0 + 5)
    assert pairs(layer, "a.py") == pytest.approx({"b.py": LR, "c.py": LR})
    assert pairs(layer, "b.py") == pytest.approx({"a.py": LR, "c.py": LR})
    assert transitions(layer, "a.py") == pytest.approx({"b.py": 1.0, "c.py": 1.0})
    assert transitions(layer, "b.py") == pytest.approx({"a.py": 1.0})
    acts = layer.store.popularity({"personal": 1.0}, now=T0 + 5)
    assert acts == pytest.approx({"a.py": 1.0, "b.py": 1.0, "c.py": 1.0})


def test_revisiting_counts_a_transition_once_per_batch(layer):
    ev = layer.editing_event
    for i, f in enumerate(["a.py", "b.py", "a.py", "b.py", "a.py"]):
        ev("s", "edit", f, ts=T0 + 10 * i)
    layer.flush()
    assert transitions(layer, "a.py") == pytest.approx({"b.py": 1.0})
    assert transitions(layer, "b.py") == pytest.approx({"a.py": 1.0})
    assert pairs(layer, "a.py") == pytest.approx({"b.py": LR})


def test_an_idle_pause_splits_batches(layer):
    ev = layer.editing_event
    ev("s", "edit", "a.py", ts=T0)
    ev("s", "edit", "b.py", ts=T0 + 60)
    ev("s", "edit", "c.py", ts=T0 + 60 + config.SESSION_IDLE_SECONDS + 1)
    ev("s", "edit", "d.py", ts=T0 + 120 + config.SESSION_IDLE_SECONDS)
    ev("s", "session_end", ts=T0 + 200 + config.SESSION_IDLE_SECONDS)
    assert set(pairs(layer, "a.py")) == {"b.py"}
    assert set(pairs(layer, "c.py")) == {"d.py"}
    assert "c.py" not in transitions(layer, "b.py")  # no transition across the pause


def test_idle_sessions_are_closed_by_later_activity_elsewhere(layer):
    layer.editing_event("old", "edit", "a.py", ts=T0)
    layer.editing_event("old", "edit", "b.py", ts=T0 + 1)
    layer.editing_event("new", "edit", "x.py", ts=T0 + config.SESSION_IDLE_SECONDS + 10)
    assert set(pairs(layer, "a.py")) == {"b.py"}
    assert layer.sessions.open_sessions == ["new"]


def test_the_window_slides_past_its_cap(layer):
    cap = config.SESSION_MAX_BATCH_FILES
    names = [f"f{i:03}.py" for i in range(cap + 3)]
    for i, name in enumerate(names):
        layer.editing_event("s", "open", name, ts=T0 + i)
    layer.flush()
    # each file pairs with the files at most cap-1 positions away, never with older ones
    assert set(pairs(layer, names[0])) == set(names[1:cap])
    assert set(pairs(layer, names[cap])) == set(names[1:]) - {names[cap]}
    assert set(pairs(layer, names[-1])) == set(names[3:-1])


def test_frequent_flushes_learn_what_one_flush_would(layer, tmp_path, clock):
    """The LSP server flushes after every quiet second: that must not fragment the session."""
    from neuralmind.synapse.layer import SynapseLayer

    steps = [("open", "a.py"), ("edit", "a.py"), ("edit", "b.py"), ("open", "c.py"),
             ("edit", "a.py"), ("save", "b.py")]
    for i, (kind, f) in enumerate(steps):
        layer.editing_event("s", kind, f, ts=T0 + 10 * i)
        layer.flush("s")
    layer.editing_event("s", "session_end", ts=T0 + 100)
    other = SynapseLayer(tmp_path / "once" / ".neuralmind", tmp_path / "once", clock=clock)
    for i, (kind, f) in enumerate(steps):
        other.editing_event("s", kind, f, ts=T0 + 10 * i)
    other.editing_event("s", "session_end", ts=T0 + 100)
    assert layer.store.dump(now=T0) == other.store.dump(now=T0)
    assert layer.store.dump_transitions(now=T0) == other.store.dump_transitions(now=T0)
    assert layer.store.popularity({"personal": 1.0}, now=T0) == other.store.popularity(
        {"personal": 1.0}, now=T0) == pytest.approx({"a.py": 1.0, "b.py": 1.0, "c.py": 1.0})
    assert pairs(layer, "a.py") == pytest.approx({"b.py": LR, "c.py": LR})
    other.close()


def test_keystroke_bursts_on_one_file_are_one_event(layer):
    for i in range(30):
        layer.editing_event("s", "edit", "a.py", ts=T0 + i * 0.1)
    layer.editing_event("s", "edit", "b.py", ts=T0 + 5)
    layer.flush()
    assert layer.store.stats(now=T0 + 5)["top_pairs"][0]["count"] == 1


@pytest.mark.parametrize("kind, file, msg", [("close", "a.py", "unknown event type"),
                                             ("edit", "", "no file"),
                                             ("open", "../outside.py", "outside")])
def test_malformed_events_raise_value_error(layer, kind, file, msg):
    with pytest.raises(ValueError, match=msg):
        layer.editing_event("s", kind, file, ts=T0)


def test_absolute_paths_become_repo_relative(layer, tmp_path):
    layer.editing_event("s", "edit", str(tmp_path / "pkg" / "a.py"), ts=T0)
    layer.editing_event("s", "edit", "./pkg/b.py", ts=T0)
    layer.flush()
    assert set(pairs(layer, "pkg/a.py")) == {"pkg/b.py"}


def test_a_question_links_its_hits_to_the_files_it_led_to(layer):
    ev = layer.editing_event
    ev("s", "session_start", ts=T0, query="why does the parser drop comments")
    layer.record_query("s", "why does the parser drop comments", ["lexer.py::Lexer.next", "docs.py"], ts=T0)
    ev("s", "open", "parser.py", ts=T0 + 1)
    ev("s", "edit", "parser.py", ts=T0 + 2)
    ev("s", "open", "readme.py", ts=T0 + 3)  # opened only: not something the question led to
    ev("s", "session_end", ts=T0 + 4)
    # hit files <-> edited files, on top of the ordinary co-activation of touched files
    assert pairs(layer, "lexer.py") == pytest.approx({"parser.py": LR})
    assert pairs(layer, "docs.py") == pytest.approx({"parser.py": LR})
    assert pairs(layer, "parser.py") == pytest.approx({"lexer.py": LR, "docs.py": LR, "readme.py": LR})
    assert layer.question_files("parser comments dropped") == [("parser.py", pytest.approx(2 / 3))]  # 2 shared of 3 and 3 tokens
    assert layer.stats(now=T0)["questions"] == 1


def test_hits_provider_supplies_hits_for_replayed_questions(layer):
    asked = []
    layer.hits_provider = lambda q: asked.append(q) or ["util.py::helper"]
    layer.editing_event("s", "session_start", ts=T0, query="speed up the cache")
    layer.editing_event("s", "edit", "cache.py", ts=T0 + 1)
    layer.editing_event("s", "session_end", ts=T0 + 2)
    assert asked == ["speed up the cache"]
    assert pairs(layer, "util.py") == pytest.approx({"cache.py": LR})


def test_a_question_without_edits_is_not_recorded(layer):
    layer.editing_event("s", "session_start", ts=T0, query="just curious about the router")
    layer.editing_event("s", "open", "router.py", ts=T0 + 1)
    layer.editing_event("s", "session_end", ts=T0 + 2)
    assert layer.stats(now=T0)["questions"] == 0
    assert layer.question_files("router") == []


def test_activate_files_records_the_sequence(layer):
    layer.activate_files(["a.py", "b.py", "c.py"], now=T0)
    assert transitions(layer, "a.py") == pytest.approx({"b.py": 1.0})
    assert transitions(layer, "b.py") == pytest.approx({"c.py": 1.0})
    assert pairs(layer, "a.py") == pytest.approx({"b.py": LR, "c.py": LR})
