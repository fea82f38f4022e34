"""Memories that stick: a proposed atom is promoted when its change survives commits, and
rejected when the change is reverted; real git, no clock."""

from __future__ import annotations

from pathlib import Path

from decision_helpers import POOL_PY, commit_all, git, write
from memory_helpers import store_at

from neuralmind import config
from neuralmind.engine import Workspace


def _commits(repo: Path, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        write(repo, f"notes/n{i}.md", f"note {i}\n")
        commit_all(repo, f"unrelated {i}")


def test_promoted_after_its_change_survives_n_commits(repo: Path) -> None:
    store = store_at(repo)
    a = store.remember("acquire now takes the timeout in seconds", "lesson", proposed=True,
                       about=["pool.py::Pool.acquire"])
    loose = store.remember("nothing to do with files", "note", proposed=True)
    assert store.review_proposals().waiting == [a.id, loose.id]    # no commit touched pool.py
    _commits(repo, 2)
    write(repo, "pool.py", POOL_PY.replace("timeout)", "timeout * 1.0)"))
    commit_all(repo, "acquire: seconds")                     # the atom's change
    _commits(repo, config.PROMOTION_COMMITS - 1, start=10)
    assert store.review_proposals().promoted == []           # one commit short
    _commits(repo, 1, start=20)
    report = store.review_proposals()
    assert report.promoted == [a.id] and store.atom(a.id).state == "active"
    assert store.atom(loose.id).state == "proposed"           # no file: waits for a person
    assert store.accept(loose.id).state == "active"


def test_rejected_when_the_change_is_reverted(repo: Path) -> None:
    store = store_at(repo)
    a = store.remember("helper returns two now", "fact", proposed=True, about=["pool.py"])
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 2"))
    change = commit_all(repo, "helper returns two")
    git(repo, "revert", "--no-edit", change)
    assert store.review_proposals().rejected == [a.id]
    assert store.atom(a.id).state == "rejected"
    assert a.id not in [h.atom.id for h in store.recall("helper returns two").hits]
    assert store.restore_atom(a.id).state == "active"         # a person disagrees: back


def test_rejected_when_the_files_are_put_back_by_hand(repo: Path) -> None:
    store = store_at(repo)
    a = store.remember("release appends to the free list", "fact", proposed=True,
                       about=["pool.py::Pool.release"])
    write(repo, "pool.py", POOL_PY.replace("self._free.append(conn)", "self._free.insert(0, conn)"))
    commit_all(repo, "lifo")
    write(repo, "pool.py", POOL_PY)
    commit_all(repo, "back to fifo")
    assert store.review_proposals().rejected == [a.id]


def test_the_server_path_reviews_when_head_moves(repo: Path) -> None:
    ws = Workspace(repo)
    a = ws.remember("pool tuned", "note", proposed=True, about=["pool.py"])
    head = git(repo, "rev-parse", "HEAD")
    write(repo, "pool.py", POOL_PY + "\n# tuned\n")
    commit_all(repo, "tune")
    _commits(repo, config.PROMOTION_COMMITS)
    ws.scan_commits(head)                                     # what the server runs on a move
    assert ws.memory.atom(a.id).state == "active"
