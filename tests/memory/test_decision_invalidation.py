"""scan: staleness after commits in real temporary git repositories."""

from __future__ import annotations

from pathlib import Path

from decision_helpers import POOL_PY, commit_all, git, write

from neuralmind.memory.decisions.store import DecisionStore


def _status(store: DecisionStore, decision_id: str) -> str:
    return store.get(decision_id).status


def test_file_touch_marks_stale_with_evidence(repo: Path) -> None:
    store = DecisionStore(repo)
    pool = store.record("Pool connections", "Costly connects.", files=["pool.py"])
    readme = store.record("Short readme", "Docs live elsewhere.", files=["README.md"])
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    head = commit_all(repo, "change helper")
    report = store.scan()
    assert report.error == "" and report.commit == head and report.changed == ["pool.py"]
    assert [o.id for o in report.stale] == [pool.id]
    d = store.get(pool.id)
    assert d.status == "STALE"
    assert d.evidence[-1] == (f"Marked STALE: commit {head[:12]} changed pool.py "
                              "since this decision was recorded")
    assert _status(store, readme.id) == "ACTIVE"


def test_scan_is_idempotent(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Pool connections", "Costly connects.", files=["pool.py"])
    t = store.record("Pool acquire waits", "Bounded wait.", symbols=["pool.py::Pool.acquire"])
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    commit_all(repo, "change helper")
    first = store.scan()
    snapshot = [x.to_json() for x in store.decisions()]
    second = store.scan()
    assert [o.id for o in first.stale] == [d.id] and [o.id for o in first.touched] == [t.id]
    assert second.stale == [] and second.cascaded == []
    assert [x.to_json() for x in store.decisions()] == snapshot     # no duplicate evidence lines


def test_commit_carrying_the_decision_keeps_it_active(repo: Path) -> None:
    store = DecisionStore(repo)
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 42"))
    carried = store.record("Helper returns 42", "The answer.", files=["pool.py"])  # fingerprints the edit
    commit_all(repo, "helper returns 42")
    report = store.scan()
    assert _status(store, carried.id) == "ACTIVE"
    assert [o.reason for o in report.carried] == ["commit stores the fingerprinted blobs"]
    # a further edit after recording is not carried
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 43"))
    commit_all(repo, "helper returns 43")
    store.scan()
    assert _status(store, carried.id) == "STALE"


def test_edit_after_recording_in_the_same_commit_is_not_carried(repo: Path) -> None:
    store = DecisionStore(repo)
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 42"))
    d = store.record("Helper returns 42", "The answer.", files=["pool.py"])
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 7"))
    commit_all(repo, "helper returns 7")
    store.scan()
    assert _status(store, d.id) == "STALE"


def test_decision_anchored_to_head_is_left_alone(repo: Path) -> None:
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    commit_all(repo, "change helper")
    store = DecisionStore(repo)
    d = store.record("Recorded after the commit", "Describes the new helper.", files=["pool.py"])
    report = store.scan()
    assert _status(store, d.id) == "ACTIVE" and report.carried[0].reason == "anchored to this commit"


def test_renames_count_both_paths(repo: Path) -> None:
    store = DecisionStore(repo)
    old = store.record("Old path", "Governs the old name.", files=["pool.py"])
    new = store.record("New path", "Governs the new name.", files=["db/pool.py"])
    (repo / "db").mkdir()
    git(repo, "mv", "pool.py", "db/pool.py")
    head = commit_all(repo, "move pool")
    report = store.scan()
    assert set(report.changed) == {"pool.py", "db/pool.py"}
    assert _status(store, old.id) == "STALE" and _status(store, new.id) == "STALE"
    assert f"commit {head[:12]} changed pool.py" in store.get(old.id).evidence[-1]


def test_merge_counts_everything_it_brought_in(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Pool connections", "Costly connects.", files=["pool.py"])
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, "pool.py", POOL_PY + "\n\ndef more():\n    return 3\n")
    commit_all(repo, "feature work")
    git(repo, "checkout", "-q", "main")
    write(repo, "other.txt", "main moves on\n")
    commit_all(repo, "main work")
    store.scan()
    assert _status(store, d.id) == "ACTIVE"                     # main's own commit did not touch it
    git(repo, "merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    report = store.scan()
    assert "pool.py" in report.changed and _status(store, d.id) == "STALE"


def test_subdirectory_project(repo: Path) -> None:
    write(repo, "svc/app.py", "def main():\n    return 0\n")
    write(repo, "svc/notes.md", "notes\n")
    commit_all(repo, "add svc")
    store = DecisionStore(repo / "svc")                         # project root below the toplevel
    app = store.record("App entry", "main returns 0.", files=["app.py"])
    notes = store.record("Notes", "Free text.", files=["notes.md"])
    write(repo, "pool.py", "outside = True\n")                 # outside the project
    write(repo, "svc/app.py", "def main():\n    return 1\n")
    commit_all(repo, "change both")
    report = store.scan()
    assert report.changed == ["app.py"]
    assert _status(store, app.id) == "STALE" and _status(store, notes.id) == "ACTIVE"


def test_cascade_to_dependents(repo: Path) -> None:
    store = DecisionStore(repo)
    base = store.record("Pool connections", "Costly connects.", files=["pool.py"])
    mid = store.record("Pool size ten", "Based on the pool.", depends_on=[base.id])
    top = store.record("Timeouts of 5 s", "Based on the size.", depends_on=[mid.id])
    free = store.record("Unrelated", "Nothing to do with it.")
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    commit_all(repo, "change")
    report = store.scan()
    assert {o.id for o in report.cascaded} == {mid.id, top.id}
    assert [_status(store, x.id) for x in (base, mid, top, free)] == ["STALE", "STALE", "STALE", "ACTIVE"]
    assert store.get(top.id).evidence[-1].startswith(f"Marked STALE: depends on {mid.id}")


def test_symbol_level_change_elsewhere_is_touched_not_governed(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Acquire waits at most timeout", "Bounded wait.", symbols=["pool.py::Pool.acquire"])
    write(repo, "pool.py", POOL_PY.replace("self._free.append(conn)", "self._free.insert(0, conn)"))
    head = commit_all(repo, "release is LIFO")
    report = store.scan()
    got = store.get(d.id)
    assert got.status == "ACTIVE" and [o.id for o in report.touched] == [d.id]
    assert got.evidence[-1].startswith(f"touched, not governed: {head[:12]}")


def test_symbol_level_comment_and_whitespace_change_inside_is_not_governed(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Acquire waits at most timeout", "Bounded wait.", symbols=["pool.py::Pool.acquire"])
    edited = POOL_PY.replace("        # wait at most `timeout` seconds\n",
                             "        # never wait longer than `timeout`\n        # (seconds)\n\n")
    edited = edited.replace("return self._take(timeout)", "return self._take( timeout )")
    write(repo, "pool.py", edited)
    commit_all(repo, "comments only")
    store.scan()
    assert store.get(d.id).status == "ACTIVE"
    write(repo, "pool.py", edited.replace("self._take( timeout )", "self._take(timeout * 2)"))
    commit_all(repo, "real change")
    store.scan()
    assert store.get(d.id).status == "STALE"


def test_symbol_level_line_shift_above_is_not_a_change(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Helper returns one", "Contract.", symbols=["pool.py::helper"])
    write(repo, "pool.py", "import os\n\n" + POOL_PY)          # every line of helper moves down
    commit_all(repo, "import os")
    store.scan()
    assert store.get(d.id).status == "ACTIVE"


def test_comment_only_change_of_a_file_level_decision(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Pool module", "Whole file governed.", files=["pool.py"])
    write(repo, "pool.py", POOL_PY.replace("# wait at most", "# waits at most"))
    commit_all(repo, "typo")
    report = store.scan()
    assert store.get(d.id).status == "ACTIVE" and [o.id for o in report.touched] == [d.id]


def test_unknown_symbol_is_conservatively_governed(repo: Path) -> None:
    store = DecisionStore(repo)
    d = store.record("Ghost", "Names a symbol that does not exist.", symbols=["pool.py::Nope.never"])
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    commit_all(repo, "change")
    store.scan()
    assert store.get(d.id).status == "STALE"


def test_scan_since_covers_every_commit_head_moved_over(repo: Path) -> None:
    store = DecisionStore(repo)
    base = git(repo, "rev-parse", "HEAD")
    d = store.record("Pool connections", "Costly connects.", files=["pool.py"])
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    touching = commit_all(repo, "touches pool")
    write(repo, "README.md", "# later\n")
    commit_all(repo, "later commit")
    assert store.scan().stale == []                          # HEAD alone does not see it
    reports = store.scan_since(base)
    assert [r.commit for r in reports][0] == touching and len(reports) == 2
    assert store.get(d.id).status == "STALE"
    assert store.scan_since("not-a-commit")[0].commit == git(repo, "rev-parse", "HEAD")


def test_symbol_level_in_javascript(repo: Path) -> None:
    js = "class Cart {\n  total(items) {\n    // sum of prices\n    return items.reduce((a, b) => a + b, 0);\n  }\n}\n"
    write(repo, "cart.js", js)
    commit_all(repo, "cart")
    store = DecisionStore(repo)
    d = store.record("Totals are plain sums", "No rounding in total.", symbols=["cart.js::Cart.total"])
    write(repo, "cart.js", js.replace("// sum of prices", "/* sum of all prices */"))
    commit_all(repo, "comment")
    store.scan()
    assert store.get(d.id).status == "ACTIVE"
    write(repo, "cart.js", js.replace("a + b, 0", "a + b, 1"))
    commit_all(repo, "off by one")
    store.scan()
    assert store.get(d.id).status == "STALE"
