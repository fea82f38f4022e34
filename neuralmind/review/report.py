"""One review of a pending change: what it probably misses and which decisions it puts at risk.

`review` composes the parts: the change set (changes.py), the files that usually change with
it (missing.py, over the co-change sources of cochange.py) and the ACTIVE decisions whose
governed code it touches (`DecisionStore.at_risk`, on the content as it is now: an editor
buffer's text when one is unsaved, else the file on disk).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.config import REVIEW_MAX_MISSING, REVIEW_MAX_REASONS
from neuralmind.review.changes import ChangeSet
from neuralmind.review.cochange import CoChange
from neuralmind.review.missing import Missing, missing_files

if TYPE_CHECKING:
    from neuralmind.memory.decisions.pending import AtRisk
    from neuralmind.memory.decisions.store import DecisionStore


class PendingContent(Mapping[str, "bytes | None"]):
    """Each changed file's content now, read on demand: the unsaved buffer's text, else the
    file on disk; None when it is deleted."""

    def __init__(self, root: Path, changes: ChangeSet, buffers: Mapping[str, str | None]) -> None:
        self.root = root
        self.files = changes.files
        self.buffers = buffers

    def __getitem__(self, rel: str) -> bytes | None:
        if rel not in self.files:
            raise KeyError(rel)
        text = self.buffers.get(rel)
        if text is not None:
            return text.encode("utf-8")
        try:
            return (self.root / rel).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def __contains__(self, rel: object) -> bool:
        return rel in self.files

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)


@dataclass
class Review:
    """The answer of `neuralmind review`, `neuralmind_review` and `neuralmind/review`."""

    changes: ChangeSet
    min_confidence: float
    missing: list[Missing] = field(default_factory=list)
    decisions_at_risk: list[AtRisk] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"base": self.changes.base, "base_ref": self.changes.base_ref,
                "changed_files": list(self.changes.changed),
                "unsaved_files": list(self.changes.unsaved),
                "missing": [m.to_json() for m in self.missing],
                "decisions_at_risk": [d.to_json() for d in self.decisions_at_risk],
                "min_confidence": self.min_confidence, "notices": list(self.notices)}


def review(root: Path, changes: ChangeSet, sources: Sequence[CoChange],
           decisions: DecisionStore | None, buffers: Mapping[str, str | None],
           min_confidence: float) -> Review:
    """Missing partners and decisions at risk for `changes` (`decisions` None: not checked)."""
    out = Review(changes, min_confidence)
    files = changes.files
    if not files:
        return out

    def exists(rel: str) -> bool:
        return (root / rel).is_file()

    out.missing = missing_files(files, sources, min_confidence, exists, REVIEW_MAX_MISSING,
                                REVIEW_MAX_REASONS)
    if decisions is not None:
        out.decisions_at_risk = decisions.at_risk(changes.base,
                                                  PendingContent(root, changes, buffers))
    return out


def because_text(b: dict[str, Any]) -> str:
    """"usually changes with X (14 of 17 commits)": the words of the editor's diagnostic."""
    return f"usually changes with {b['changed_file']} ({b['together']} of {b['of']} {b['source']})"


def render_text(out: dict[str, Any]) -> str:
    """A review's JSON as the few lines the CLI prints and an agent reads."""
    changed = len(set(out["changed_files"]) | set(out["unsaved_files"]))
    unsaved = f", {len(out['unsaved_files'])} unsaved" if out["unsaved_files"] else ""
    lines = [f"{changed} changed file{'s' * (changed != 1)}{unsaved} against {out['base_ref']} "
             f"({out['base'][:12]})."]
    if out["missing"]:
        lines.append("Probably missed:")
        for m in out["missing"]:
            lines.append(f"- {m['file']} ({m['confidence']:.2f}): {because_text(m['because'][0])}")
            lines += [f"  and {because_text(b)}" for b in m["because"][1:]]
    else:
        lines.append("No file that usually changes with these is missing.")
    if out["decisions_at_risk"]:
        lines.append("Decisions at risk (reconsider before committing):")
        for d in out["decisions_at_risk"]:
            where = f"{d['file']}:{d['line']}" + (f" {d['symbol']}" if d["symbol"] else "")
            lines.append(f"- {where}: governed by '{d['title']}' (id {d['id']}): {d['reason']}")
    return "\n".join(lines)
