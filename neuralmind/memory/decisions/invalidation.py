"""Staleness after a commit: which ACTIVE decisions a commit changed the ground under.

`scan` diffs a commit (default HEAD) against its first parent, so a merge counts
everything it brought in and a rename counts both paths. An ACTIVE decision
governing a changed file, recorded before the commit, goes STALE — unless the
commit carries it (it is anchored to that commit, or the commit stores every
changed governed file exactly as fingerprinted), or the change touches none of
the symbols it names / only comments and whitespace ("touched, not governed").
Dependents of a decision that went STALE follow it. Everything is decided first
and written in one transaction; if git cannot answer any question, nothing changes.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from neuralmind.config import MAX_SCAN_COMMITS
from neuralmind.events import publish
from neuralmind.memory.decisions.record import Decision
from neuralmind.memory.decisions.symbols import Verdict, classify
from neuralmind.memory.git import Change, Git, GitError

if TYPE_CHECKING:
    from neuralmind.memory.decisions.db import DecisionDB

log = logging.getLogger("neuralmind.memory")

TOUCHED_PREFIX = "touched, not governed: "


@dataclass
class Outcome:
    """What the scan concluded for one decision."""

    id: str
    title: str
    files: list[str]
    reason: str


@dataclass
class ScanReport:
    commit: str | None = None
    parent: str | None = None
    branch: str | None = None
    changed: list[str] = field(default_factory=list)      # project-relative
    stale: list[Outcome] = field(default_factory=list)
    cascaded: list[Outcome] = field(default_factory=list)
    touched: list[Outcome] = field(default_factory=list)  # touched, not governed
    carried: list[Outcome] = field(default_factory=list)  # the commit carries the decision
    notices: list[str] = field(default_factory=list)
    error: str = ""                                        # git could not answer: nothing changed

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def scan(store: DecisionDB, commit: str = "HEAD") -> ScanReport:
    """Mark STALE what `commit` invalidated; never raises GitError (it lands in `.error`)."""
    report = ScanReport()
    git = store.git()
    try:
        plan = _plan(store, git, commit, report)
    except GitError as e:
        report.error = str(e)
        report.stale, report.cascaded, report.touched, report.carried = [], [], [], []
        report.notices.append("no decision status was changed")
        log.warning("decision scan skipped: %s", e)
        return report
    _apply(store, report, plan)
    return report


def scan_since(store: DecisionDB, base: str | None,
               max_commits: int = MAX_SCAN_COMMITS) -> list[ScanReport]:
    """Scan every first-parent commit after `base` up to HEAD, oldest first: HEAD moved by
    more than one commit (a pull, commits made while no hook ran, the server noticing HEAD
    move). With no `base`, or one that is not an ancestor of HEAD (a reset or rebase), only
    HEAD is scanned; past `max_commits`, only the newest. Each report's `commit` is the one
    scanned (the last is HEAD); outside git, one report with the `error`."""
    git = store.git()
    try:
        head = git.head()
        if base and git.commit_exists(base) and git.is_ancestor(base, head):
            shas = git.out("rev-list", "--first-parent", "--reverse", f"{base}..{head}").split()
        else:
            shas = [head]
    except GitError as e:
        return [ScanReport(error=str(e), notices=["no decision status was changed"])]
    if len(shas) > max_commits:
        skipped = len(shas) - max_commits
        shas = shas[-max_commits:]
        log.info("scanning the last %d of %d new commits", max_commits, max_commits + skipped)
    reports = [scan(store, sha) for sha in shas]
    for report, sha in zip(reports, shas, strict=True):
        report.commit = report.commit or sha
    return reports


def _plan(store: DecisionDB, git: Git, commit: str, report: ScanReport) -> dict[str, str]:
    """Decide every change without writing; returns id -> new evidence line for each STALE."""
    head = git.head() if commit == "HEAD" else git.resolve(commit)
    report.commit = head
    report.branch = git.branch()
    rebasing = git.rebase_in_progress() if report.branch is None else None
    if rebasing is not None:
        report.notices.append(f"a rebase{' of ' + rebasing if rebasing else ''} is in progress "
                              f"(HEAD detached at replayed commit {head[:12]}); scanning that "
                              "commit only")
    elif report.branch is None:
        report.notices.append(f"HEAD is detached at {head[:12]}; scanning that commit")
    prefix = git.prefix()
    parents = git.parents(head)
    report.parent = parents[0] if parents else None
    changes: dict[str, Change] = {}
    for ch in git.diff(report.parent, head):
        for p in ch.paths:
            if p.startswith(prefix):
                changes[p[len(prefix):]] = ch
    report.changed = sorted(changes)
    if not changes:
        return {}
    short = head[:12]
    commit_time = git.commit_time(head)
    new_evidence: dict[str, str] = {}
    verdicts: dict[tuple[str, tuple[str, ...]], Verdict] = {}
    active = store.decisions("ACTIVE")
    for d in active:
        governed = [f for f in d.files_affected if f in changes]
        if not governed:
            continue
        if d.commit_sha and head.startswith(d.commit_sha):
            report.carried.append(Outcome(d.id, d.title, governed, "anchored to this commit"))
            continue
        if not _recorded_before(git, d, head, commit_time):
            report.carried.append(Outcome(d.id, d.title, governed, "recorded after this commit"))
            continue
        if _fingerprints_carry(git, d, head, prefix, governed):
            report.carried.append(Outcome(d.id, d.title, governed, "commit stores the fingerprinted blobs"))
            continue
        hit, why = [], []
        for f in governed:
            key = (f, tuple(d.symbols_in(f)))
            if key not in verdicts:   # several decisions often govern one file: parse it once
                verdicts[key] = (classify(git, report.parent, head, changes[f], prefix, list(key[1]))
                                 if report.parent else Verdict(True, "first commit"))
            if verdicts[key].governed:
                hit.append(f)
            else:
                why.append(f"{f}: {verdicts[key].why}")
        if hit:
            files = ", ".join(hit)
            report.stale.append(Outcome(d.id, d.title, hit, f"commit {short} changed {files}"))
            new_evidence[d.id] = (f"Marked STALE: commit {short} changed {files} "
                                  "since this decision was recorded")
        else:
            report.touched.append(Outcome(d.id, d.title, governed, "; ".join(why)))
    _cascade(active, new_evidence, report, short)
    report.touched = [o for o in report.touched if o.id not in new_evidence]
    return new_evidence


def _recorded_before(git: Git, d: Decision, head: str, commit_time: int) -> bool:
    """Was the decision recorded (or restored) before `head` was committed?"""
    if d.commit_sha and git.commit_exists(d.commit_sha) and git.is_ancestor(d.commit_sha, head):
        return True
    try:  # no usable anchor (recorded outside git, or on another line of history): use time
        anchored = datetime.fromisoformat(d.anchored_at or d.created_at).timestamp()
    except ValueError:
        return True
    return commit_time >= int(anchored)


def _fingerprints_carry(git: Git, d: Decision, head: str, prefix: str, governed: list[str]) -> bool:
    """True when the commit stores every changed governed file exactly as fingerprinted."""
    if not d.fingerprints or any(f not in d.fingerprints for f in governed):
        return False
    blobs = git.tree_blobs(head, [prefix + f for f in governed])
    return all(blobs.get(prefix + f) == d.fingerprints[f] for f in governed)


def _cascade(active: list[Decision], new_evidence: dict[str, str], report: ScanReport, short: str) -> None:
    """Dependents (depends_on) of a decision going STALE go STALE too, transitively."""
    by_id = {d.id: d for d in active}
    queue = deque(new_evidence)
    while queue:
        cause = queue.popleft()
        title = by_id[cause].title if cause in by_id else cause
        for d in active:
            if cause in d.depends_on and d.id not in new_evidence:
                new_evidence[d.id] = (f"Marked STALE: depends on {cause} ({title}), "
                                      f"which commit {short} made stale")
                report.cascaded.append(Outcome(d.id, d.title, [], f"depends on {cause}"))
                queue.append(d.id)


def _apply(store: DecisionDB, report: ScanReport, new_evidence: dict[str, str]) -> None:
    """Write every conclusion in one transaction; re-checks status so concurrent edits win."""
    if not new_evidence and not report.touched:
        return
    touched_line = f"{TOUCHED_PREFIX}{(report.commit or '')[:12]}"
    staled: list[Decision] = []
    with store.write() as conn:
        for d in store.load(conn, "WHERE status = 'ACTIVE'"):
            if d.id in new_evidence:
                d.status = "STALE"
                d.evidence.append(new_evidence[d.id])
                store.save(conn, d)
                staled.append(d)
            elif any(o.id == d.id for o in report.touched):
                mine = next(o for o in report.touched if o.id == d.id)
                if not any(e.startswith(touched_line) for e in d.evidence):
                    d.evidence.append(f"{touched_line} ({mine.reason})")
                    store.save(conn, d)
    for d in staled:        # told once the transaction committed
        publish("decision", change="stale", id=d.id, title=d.title, status=d.status,
                files=list(d.files_affected), commit=report.commit, reason=new_evidence[d.id])
