"""Audit: which decisions need a person's attention, and why.

Reasons: `stale` (a commit changed what it governs), `invalidated`, `age` (ACTIVE
but not recorded, amended or restored for STALE_DAYS), `orphaned` (its anchor
commit is not in the repository any more, e.g. after a rebase and gc).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from neuralmind.memory.clock import parse
from neuralmind.memory.decisions.record import Decision
from neuralmind.memory.git import GitError

if TYPE_CHECKING:
    from neuralmind.memory.decisions.db import DecisionDB

STALE_DAYS = 90


@dataclass
class AuditEntry:
    decision: Decision
    attention: list[str]
    conflict: list[dict[str, Any]] | None = None   # concurrent team versions (team store)

    def to_json(self) -> dict[str, Any]:
        out = self.decision.to_json() | {"attention": self.attention}
        return out | {"conflict": self.conflict} if self.conflict else out


@dataclass
class AuditReport:
    entries: list[AuditEntry] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def to_json(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.entries]


def audit(store: DecisionDB, stale: bool = False, orphaned: bool = False,
          now: datetime | None = None) -> AuditReport:
    """All decisions with their attention reasons; `stale`/`orphaned` keep only those that need it."""
    report = AuditReport()
    decisions = store.decisions("ALL")
    missing: set[str] = set()
    anchors = [d.commit_sha for d in decisions if d.commit_sha]
    if anchors:
        try:
            missing = store.git().missing_commits(anchors)
        except GitError as e:
            report.notices.append(f"orphan check skipped: {e}")
    cutoff = (now or datetime.now(UTC)) - timedelta(days=STALE_DAYS)
    for d in decisions:
        reasons: list[str] = []
        if d.status == "STALE":
            reasons.append("stale")
        elif d.status == "INVALIDATED":
            reasons.append("invalidated")
        elif _older_than(d.updated_at or d.created_at, cutoff):
            reasons.append("age")
        if d.commit_sha and d.commit_sha in missing:
            reasons.append("orphaned")
        wanted = ((stale and any(r in ("stale", "age") for r in reasons))
                  or (orphaned and "orphaned" in reasons))
        if wanted or not (stale or orphaned):
            report.entries.append(AuditEntry(d, reasons))
    return report


def _older_than(stamp: str, cutoff: datetime) -> bool:
    t = parse(stamp)
    return t is not None and t < cutoff.timestamp()
