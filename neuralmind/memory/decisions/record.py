"""The decision record, a search result of them, and the normalisation of what users type."""

from __future__ import annotations

import posixpath
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from neuralmind.errors import InvalidArgument
from neuralmind.graph.model import node_id, split_node_id

STATUSES = ("ACTIVE", "STALE", "INVALIDATED")
DEFAULT_TYPE = "architecture"


@dataclass(slots=True)
class Decision:
    """One recorded decision. Paths are project-relative with '/' separators."""

    id: str
    title: str
    rationale: str
    decision_type: str = DEFAULT_TYPE
    status: str = "ACTIVE"
    commit_sha: str | None = None          # the commit the decision is anchored to
    files_affected: list[str] = field(default_factory=list)
    symbols_affected: list[str] = field(default_factory=list)   # "path::Qualified.name"
    rejected_alternatives: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    confidence: float = 0.8
    tags: list[str] = field(default_factory=list)
    author: str = ""
    created_at: str = ""                   # ISO-8601 UTC
    updated_at: str = ""
    anchored_at: str = ""                  # when recorded or last restored
    depends_on: list[str] = field(default_factory=list)
    fingerprints: dict[str, str] = field(default_factory=dict)  # path -> git blob id

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Decision:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})

    def symbols_in(self, path: str) -> list[str]:
        """Qualified names this decision governs inside `path`."""
        return [qual for path_, qual in map(split_node_id, self.symbols_affected) if path_ == path]


def normalise_path(root: Path, raw: str) -> str:
    """Project-relative '/' path for what a user typed (relative, ./x, absolute, backslashes)."""
    text = raw.strip().replace("\\", "/")
    p = Path(text)
    if p.is_absolute():
        try:
            text = p.resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            text = p.as_posix()
    norm = posixpath.normpath(text)
    return "" if norm == "." else norm


def normalise_symbol(root: Path, raw: str) -> str:
    """`path::Qualified.name` with its path part normalised; ValueError when malformed."""
    path, qual = split_node_id(raw.strip())
    if not path.strip() or not qual.strip():
        raise InvalidArgument(f"symbol {raw!r} is not of the form path::Qualified.name")
    return node_id(normalise_path(root, path), qual.strip())


def clean_list(values: list[str] | tuple[str, ...] | None) -> list[str]:
    """Stripped, non-empty, first occurrence kept."""
    out: list[str] = []
    for v in values or []:
        s = str(v).strip()
        if s and s not in out:
            out.append(s)
    return out


def normalise_status(value: str | None, allow_all: bool = False) -> str:
    """Upper-cased status; ValueError naming the valid ones otherwise."""
    s = (value or "ACTIVE").strip().upper()
    valid = (*STATUSES, "ALL") if allow_all else STATUSES
    if s not in valid:
        raise InvalidArgument(f"unknown status {value!r} (expected one of {', '.join(valid)})")
    return s


@dataclass
class DecisionHits:
    """Ranked decisions and how they were ranked."""

    records: list[Decision]
    scores: list[float]
    mode: str                   # the mode that ran
    requested: str              # the mode that was asked for
    notice: str = ""            # why they differ, when they do
    embedded: int = 0           # decision texts embedded by this search (cache misses)
    terms: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode, "requested_mode": self.requested, "notice": self.notice,
            "results": [r.to_json() | {"score": round(s, 4)} for r, s in zip(self.records, self.scores, strict=True)],
        }
