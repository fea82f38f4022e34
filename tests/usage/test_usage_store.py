"""The answer-use store on a real SQLite file: windows, kept files, settling once."""

from __future__ import annotations

import time
from pathlib import Path

from neuralmind.engine.use import AnswerUse
from neuralmind.graph.graph import Graph
from neuralmind.usage.report import savings
from neuralmind.usage.store import UsageStore

T0 = 1_800_000_000.0     # 2027-01-15


def _store(tmp_path: Path) -> UsageStore:
    return UsageStore(tmp_path, window=100.0, keep_wait=1000.0)


def test_credits_fall_in_the_window_and_a_commit_says_what_was_kept(tmp_path: Path) -> None:
    store = _store(tmp_path)
    a = store.record("context", "s1", "how are invoices rounded", ["billing.py", "tax.py",
                     "users.py"], 800, 50_000, now=T0)
    b = store.record("search", "s2", "password reset", ["users.py"], 40, 50_000, now=T0 + 500)
    store.note([("open", "tax.py", T0 + 10), ("edit", "billing.py", T0 + 20),
                ("edit", "notes.py", T0 + 30),            # touched, not returned
                ("open", "users.py", T0 + 200)])          # after a's window: not credited
    assert store.settle(now=T0 + 150) == []                 # touched files wait for a commit
    store.commit(["billing.py"], now=T0 + 160)
    [settled] = store.settle(now=T0 + 170)
    assert settled.id == a and settled.question == "how are invoices rounded"
    assert [(r.file, r.opened, r.edited) for r in settled.returned] == [
        ("billing.py", False, True), ("tax.py", True, False), ("users.py", False, False)]
    assert settled.touched == {"billing.py": True, "notes.py": False}
    assert settled.kept == ["billing.py"]
    assert store.settle(now=T0 + 180) == []                 # settled once
    [late] = store.settle(now=T0 + 700)                     # nothing touched: window is enough
    assert late.id == b and late.touched == {} and not late.returned[0].used


def test_uncommitted_work_settles_after_the_wait_with_nothing_kept(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.record("context", "s", "q", ["a.py"], 10, None, now=T0)
    store.note([("edit", "a.py", T0 + 1)])
    assert store.settle(now=T0 + 900) == []
    [s] = store.settle(now=T0 + 1001)
    assert s.touched == {"a.py": False} and s.kept == []


def test_savings_per_day_and_overall(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.record("context", "s", "q1", ["a.py", "b.py"], 1000, 90_000, now=T0)
    store.record("context", "s", "q2", ["c.py"], 500, None, now=T0 + 86_400)
    store.record("search", "s", "q3", ["d.py"], 50, 100_000, now=T0 + 86_400 + 10)
    store.note([("edit", "a.py", T0 + 5)])
    store.commit(["a.py"], now=T0 + 50)
    store.settle(now=T0 + 86_400 * 2)
    report = savings(store.answers(), codebase_now=100_000)
    assert [d["day"] for d in report["days"]] == ["2027-01-15", "2027-01-16"]
    overall = report["overall"]
    assert overall["answers"] == 3 and overall["tokens_served"] == 1550
    assert overall["codebase_tokens"] == 90_000 + 100_000 + 100_000
    assert overall["tokens_saved"] == 290_000 - 1550
    assert overall["by_kind"] == {"context": 2, "search": 1}
    assert overall["settled"] == 3 and overall["acted_on"] == 1
    assert overall["files_used_per_answer"] == 1.0
    assert overall["precision_at_5"] == 0.5                 # 1 of its 2 returned files
    assert report["days"][1]["acted_on"] == 0 and report["days"][1]["precision_at_5"] is None
    assert sorted(report["kinds"]) == ["context", "search"]
    assert report["kinds"]["context"]["answers"] == 2
    assert report["kinds"]["context"]["precision_at_5"] == 0.5
    assert report["kinds"]["search"]["acted_on"] == 0


def test_the_version_moves_with_every_change_and_with_another_writer(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = store.version()
    assert store.version() == first                          # reading changes nothing
    store.record("context", "s", "q", ["a.py"], 10, None, now=T0)
    recorded = store.version()
    assert recorded != first
    store.note([("open", "z.py", T0 + 1)])                   # credits nothing: no change
    assert store.version() == recorded
    store.note([("open", "a.py", T0 + 1)])
    assert store.version() != recorded
    credited = store.version()
    other = _store(tmp_path)                                 # a CLI answering beside the server
    other.record("search", "cli", "q2", ["b.py"], 5, None, now=T0 + 2)
    other.close()
    assert store.version() != credited


def test_a_damaged_store_is_moved_aside_and_answers_go_on(tmp_path: Path) -> None:
    (tmp_path / "usage.db").write_bytes(b"this is not a database" * 100)
    store = _store(tmp_path)
    assert store.record("context", "s", "q", ["a.py"], 1, None, now=T0) is None
    assert any(p.name.startswith("usage.db.corrupt-") for p in tmp_path.iterdir())
    assert store.record("context", "s", "q", ["a.py"], 1, None, now=T0) is not None


def test_unused_files_are_those_ranked_above_the_first_used_one() -> None:
    from neuralmind.engine.use import unused_files
    from neuralmind.usage.store import Returned, Settled

    def settled(used: set[str], touched: dict[str, bool]) -> Settled:
        files = ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]
        return Settled(1, T0, "context", "s", "q",
                       [Returned(f, i, f in used, False) for i, f in enumerate(files, 1)], touched)

    assert unused_files(settled({"c.py"}, {})) == ["a.py", "b.py"]
    assert unused_files(settled(set(), {"b.py": True})) == ["a.py"]          # touched counts
    assert unused_files(settled(set(), {"z.py": True})) == ["a.py", "b.py", "c.py", "d.py",
                                                             "e.py"]        # none used: top 5
    assert unused_files(settled({"a.py"}, {})) == []


def test_the_engine_reads_the_report_again_only_when_answers_changed(tmp_path: Path) -> None:
    use = AnswerUse(tmp_path / "learned", tmp_path, tmp_path, lambda: None, window=100.0)
    graph = Graph()
    first = use.savings(graph, count=True)                   # an empty workspace counts 0 tokens
    assert first["overall"]["answers"] == 0 and first["codebase_tokens_now"] == 0
    assert use.savings(graph, count=False) is first          # nothing changed: not read again
    use.record("context", "s", "q", {"hits": [{"file": "a.py", "line": 1}], "tokens": 40})
    second = use.savings(graph, count=False)
    assert second is not first and second["overall"]["answers"] == 1
    assert second["overall"]["codebase_tokens"] == 0
    use.note([("open", "a.py", time.time())])
    third = use.savings(graph, count=False)
    assert third is not second and third["overall"]["answers"] == 1
    assert use.savings(graph, count=False) is third
