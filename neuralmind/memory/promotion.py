"""Memories that stick: a proposed atom is promoted when the work it describes survives.

An atom an agent proposes starts `proposed`, with the git HEAD of that moment and `about`
edges to the files it talks about. Each time HEAD moves, `review` looks at the commits
since: the first one that changes any of those files is the atom's change. When
PROMOTION_COMMITS more commits have followed it on the first-parent line and it was not
reverted, the atom becomes `active`. It is `rejected` when the change is reverted: a later
commit says "This reverts commit <sha>" (git revert), or the files are back to the blobs
they had before it. A person can accept or reject at any time (the inbox). Atoms about no
file wait for a person. Git trouble changes nothing (it is retried at the next move).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neuralmind import config
from neuralmind.memory import atoms
from neuralmind.memory.git import Git, GitError

if TYPE_CHECKING:
    from neuralmind.memory.db import MemoryDB

log = logging.getLogger("neuralmind.memory")


@dataclass
class PromotionReport:
    promoted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"promoted": self.promoted, "rejected": self.rejected, "waiting": self.waiting,
                "error": self.error}


def review(store: MemoryDB, needed: int | None = None) -> PromotionReport:
    """Promote or reject the proposed atoms whose change HEAD now settles."""
    needed = config.PROMOTION_COMMITS if needed is None else needed
    report = PromotionReport()
    with store.read() as conn:
        proposed = atoms.load(conn, "WHERE state = 'proposed' AND proposed_head IS NOT NULL "
                                    "ORDER BY seq")
    if not proposed:
        return report
    git = store.git()
    try:
        head, prefix = git.head(), git.prefix()
        verdicts = {a.id: _verdict(git, a, head, prefix, needed) for a in proposed}
    except GitError as e:
        report.error = str(e)
        log.info("promotion review skipped: %s", e)
        return report
    changes = {i: v for i, v in verdicts.items() if v in ("active", "rejected")}
    report.waiting = [i for i, v in verdicts.items() if v == "waiting"]
    if changes:
        now = store.clock.iso()
        with store.write() as conn:
            for atom_id, state in changes.items():
                cur = conn.execute("UPDATE atoms SET state = ?, updated_at = ? WHERE id = ? AND "
                                   "state = 'proposed'", (state, now, atom_id))
                if cur.rowcount:
                    conn.execute("INSERT INTO ratings VALUES (?, ?, 'git', ?)",
                                 (atom_id, "promoted" if state == "active" else "rejected", now))
                    store.note("atom", atom_id)
                    (report.promoted if state == "active" else report.rejected).append(atom_id)
    return report


def _files(a: atoms.Atom) -> list[str]:
    return list(dict.fromkeys(t.split("::", 1)[0] for t in a.about))


def _verdict(git: Git, a: atoms.Atom, head: str, prefix: str, needed: int) -> str:
    """active, rejected or waiting."""
    files = _files(a)
    base = a.proposed_head
    if not files or not base or not git.commit_exists(base) or not git.is_ancestor(base, head):
        return "waiting"
    paths = [prefix + f for f in files]
    commits = git.out("rev-list", "--first-parent", "--reverse", f"{base}..{head}", "--",
                      *paths).split()
    if not commits:
        return "waiting"
    change = commits[0]
    if _reverted(git, change, head, paths):
        return "rejected"
    after = int(git.out("rev-list", "--first-parent", "--count", f"{change}..{head}") or 0)
    return "active" if after >= needed else "waiting"


def _reverted(git: Git, change: str, head: str, paths: list[str]) -> bool:
    log_text = git.out("log", "--first-parent", "--format=%B", f"{change}..{head}")
    if f"This reverts commit {change}" in log_text:
        return True
    if change == head:
        return False
    parents = git.parents(change)
    before = git.tree_blobs(parents[0], paths) if parents else {}
    changed = git.tree_blobs(change, paths)
    now = git.tree_blobs(head, paths)
    touched = [p for p in paths if before.get(p) != changed.get(p)]
    return bool(touched) and all(now.get(p) == before.get(p) for p in touched)
