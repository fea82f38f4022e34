"""Savings from the event log: tokens served against replaced per day, precision by use."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuralmind.engine import activity
from neuralmind.events import Event
from neuralmind.events.log import EventLogWriter

DAY = 86_400.0
T0 = 1_800_000_000.0            # a fixed day, so the test does not depend on today


class Log:
    """Events appended by the real writer, each at the time the test says."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.writer = EventLogWriter(root)
        self.count = 0

    def at(self, ts: float, kind: str, **data: object) -> None:
        self.count += 1
        self.writer.append(Event(f"test-{self.count}", kind, ts, "test 1", dict(data)))

    def savings(self) -> dict:
        assert self.writer.flush()
        return activity.savings(self.root)


@pytest.fixture
def log(tmp_path: Path) -> Log:
    return Log(tmp_path)


def test_precision_counts_served_files_the_asker_then_worked_on(log: Log) -> None:
    at = log.at
    at(T0, "query", source="lsp-1", files=["a.py", "b.py", "c.py", "d.py"], tokens=900,
       replaced=12_000)
    at(T0 + 60, "file_activity", session="lsp-1", action="edit", file="a.py")
    at(T0 + 90, "editor", session="lsp-1", file="c.py")
    at(T0 + 120, "file_activity", session="mcp:other", action="edit", file="b.py")  # not the asker
    at(T0 + 2 * 3600, "file_activity", session="lsp-1", action="edit", file="d.py")  # too late
    at(T0 + 300, "query", source="mcp:claude", files=["x.py"], tokens=400, replaced=5_000)
    at(T0 + DAY, "query", source="cli", files=["a.py"], tokens=300, replaced=2_000)
    s = log.savings()
    assert [d["day"] for d in s["days"]] == ["2027-01-15", "2027-01-16"]
    first, second = s["days"]
    assert (first["queries"], first["served"], first["replaced"]) == (2, 1300, 17_000)
    assert (first["files_served"], first["files_used"], first["precision"]) == (4, 2, 0.5)
    assert second["precision"] is None                 # nobody worked after the CLI question
    assert s["channels"]["editor"] == {"queries": 1, "observed": 1, "served": 4, "used": 2,
                                       "precision": 0.5}
    assert s["channels"]["agent"]["observed"] == 0     # the agent did nothing afterwards
    assert s["totals"] == {"queries": 3, "served": 1600, "replaced": 19_000}
    assert s["since"] == T0


def test_an_empty_log_has_no_savings(tmp_path: Path) -> None:
    assert activity.savings(tmp_path) == {"days": [], "channels": {}, "since": None,
                                          "totals": {"queries": 0, "served": 0, "replaced": 0}}
