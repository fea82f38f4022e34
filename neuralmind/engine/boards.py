"""The observatory's list views: decisions by status, memory atoms, the dream diary.

Decisions carry the reason for their status and, when a commit made them stale, that
commit. Memory atoms and the diary belong to the memory component: until a workspace
has them, the views say what will appear there (`available: false`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.engine.navigation import status_reason

if TYPE_CHECKING:
    from neuralmind.memory.decisions.store import DecisionStore

STATUS_ORDER = ("ACTIVE", "STALE", "INVALIDATED")
STALE_COMMIT = re.compile(r"\bcommit ([0-9a-f]{7,40})\b")
DREAMS_NAME = "DREAMS.md"
DIARY_MAX_CHARS = 200_000      # the newest part of a long diary


def decision_board(decisions: DecisionStore) -> dict[str, Any]:
    """Every decision grouped by status, newest first, with its reason and stale commit."""
    groups: dict[str, list[dict[str, Any]]] = {s: [] for s in STATUS_ORDER}
    for d in decisions.decisions("ALL"):
        reason = status_reason(d.evidence)
        commit = STALE_COMMIT.search(reason) if d.status == "STALE" else None
        groups.setdefault(d.status, []).append({
            "id": d.id, "title": d.title, "status": d.status, "type": d.decision_type,
            "reason": reason, "stale_commit": commit.group(1) if commit else None,
            "anchor": d.commit_sha, "files": d.files_affected, "symbols": d.symbols_affected,
            "author": d.author, "created_at": d.created_at, "updated_at": d.updated_at,
            "rationale": d.rationale})
    for items in groups.values():
        items.sort(key=lambda x: (x["updated_at"] or "", x["id"]), reverse=True)
    return {"statuses": list(groups), "groups": groups,
            "counts": {s: len(v) for s, v in groups.items()}}


def memory_board(root: Path) -> dict[str, Any]:
    """Memory atoms by state, with rank, exposure, the inbox and the directives."""
    return {"available": False, "atoms": [], "inbox": [], "directives": [],
            "note": ("Agent memory (remembered lessons, preferences, facts and open loops, "
                     "with their rank and exposure, the inbox of proposed atoms and the "
                     "standing directives) appears here once this NeuralMind has the "
                     "memory store.")}


def dream_diary(state: Path) -> dict[str, Any]:
    """The entries of `.neuralmind/DREAMS.md`, newest first: a heading and its text each."""
    path = Path(state) / DREAMS_NAME
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return {"available": False, "entries": [],
                "note": ("Dreams (the consolidation passes that merge, link and summarise "
                         "memories) write a dated entry here each time they run.")}
    text = text[-DIARY_MAX_CHARS:]
    entries: list[dict[str, str]] = []
    for block in re.split(r"(?m)^(?=## )", text):
        head, _, body = block.partition("\n")
        if head.startswith("## "):
            entries.append({"title": head[3:].strip(), "body": body.strip()})
    entries.reverse()
    return {"available": True, "entries": entries}
