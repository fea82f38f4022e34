"""The in-process bus: nothing is built when nobody listens; subscribers get every event."""

from __future__ import annotations

import threading

import pytest

from neuralmind.events import KINDS, Event, EventBus


def test_publish_without_listener_or_writer_builds_nothing() -> None:
    bus = EventBus()
    assert not bus.active
    assert bus.publish("query", question="x") is None
    assert bus.publish("no-such-kind") is None       # not even checked: nothing is done


def test_subscribers_get_events_with_ids_unique_to_the_process() -> None:
    bus, other = EventBus(), EventBus()
    seen: list[Event] = []
    unsubscribe = bus.subscribe(seen.append)
    bus.set_label("cli")
    a = bus.publish("query", question="how", files=["a.py"])
    b = bus.publish("editor", session="s", file="a.py")
    assert a is not None and b is not None
    assert seen == [a, b]
    assert a.id != b.id and bus.own(a.id) and not other.own(a.id)
    assert a.origin.startswith("cli ") and a.data == {"question": "how", "files": ["a.py"]}
    assert Event.from_json(a.to_json()) == a
    unsubscribe()
    assert bus.publish("query") is None and len(seen) == 2


def test_unknown_kind_is_refused_when_someone_listens() -> None:
    bus = EventBus()
    bus.subscribe(lambda e: None)
    with pytest.raises(ValueError, match="unknown event kind"):
        bus.publish("telemetry")
    assert {"synapse", "file_activity", "query", "memory", "decision", "index", "editor",
            "hook"} <= KINDS


def test_a_failing_subscriber_does_not_break_the_publisher_or_the_others() -> None:
    bus = EventBus()
    seen: list[str] = []

    def broken(e: Event) -> None:
        raise RuntimeError("boom")

    bus.subscribe(broken)
    bus.subscribe(lambda e: seen.append(e.kind))
    assert bus.publish("index", phase="started") is not None
    assert seen == ["index"]


def test_publishing_from_many_threads_keeps_ids_unique() -> None:
    bus = EventBus()
    ids: list[str] = []
    lock = threading.Lock()

    def keep(e: Event) -> None:
        with lock:
            ids.append(e.id)

    bus.subscribe(keep)
    threads = [threading.Thread(target=lambda: [bus.publish("request", n=i) for i in range(500)])
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ids) == 2000 and len(set(ids)) == 2000


def test_from_json_rejects_what_is_not_an_event() -> None:
    assert Event.from_json(["x"]) is None
    assert Event.from_json({"id": "a-1", "kind": "nope", "ts": 1.0}) is None
    assert Event.from_json({"id": 3, "kind": "query", "ts": 1.0}) is None
    e = Event.from_json({"id": "a-1", "kind": "query", "ts": 1, "data": "x"})
    assert e is not None and e.data == {} and e.ts == 1.0
