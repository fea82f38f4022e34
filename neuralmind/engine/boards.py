"""The observatory's list views: decisions by status, memory atoms, the dream diary.

Decisions carry the reason for their status and, when a commit made them stale, that
commit. Memory atoms come from the memory store's reads (rank, inbox, directives); until
a workspace has a memory store or a diary, the views say what will appear there
(`available: false`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.engine.navigation import status_reason
from neuralmind.memory.atoms import STATES

if TYPE_CHECKING:
    from neuralmind.memory.decisions.store import DecisionStore
    from neuralmind.memory.store import MemoryStore

STATUS_ORDER = ("ACTIVE", "STALE", "INVALIDATED")
STALE_COMMIT = re.compile(r"\bcommit ([0-9a-f]{7,40})\b")
DREAMS_NAME = "DREAMS.md"
DIARY_MAX_CHARS = 200_000      # the newest part of a long diary
ATOM_TEXT_CHARS = 600          # an atom's text on the Memory board (the label leads)
ATOM_STATES = ("active", *(s for s in STATES if s != "active"))   # the board's section order


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


def memory_board(memory: MemoryStore, directives: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Memory atoms by state (decisions have their own board), each with its rank and
    exposure, the inbox of proposed atoms and the standing directives (`directives()`: the
    block agents get, within the workspace's limits). A workspace with no memory.db gets
    the empty state, and none is created for it."""
    if not memory.path.exists():
        return {"available": False, "atoms": [], "inbox": [], "directives": [],
                "note": ("Agent memory (remembered lessons, preferences, facts and open loops, "
                         "with their rank and exposure, the inbox of proposed atoms and the "
                         "standing directives) appears here once something is remembered: "
                         "`neuralmind memory remember`, or an agent's memory tool.")}
    ranked = memory.ranked()
    by_id: dict[str, dict[str, Any]] = {}
    for a, r in ranked:
        by_id[a.id] = {"id": a.id, "type": a.type, "label": a.label,
                       "text": a.text[:ATOM_TEXT_CHARS], "state": a.state, "pinned": a.pinned,
                       "rank": round(r, 4), "exposure": a.exposure, "hubs": a.hubs,
                       "about": a.about, "created_at": a.created_at,
                       "updated_at": a.updated_at}
    block = directives()
    ordered = sorted(by_id.values(), key=lambda x: (_state_order(x["state"]), -x["rank"]))
    return {"available": True, "atoms": ordered, "inbox": memory.inbox(),
            "directives": [by_id[i] for i in (*block["ids"], *block["omitted"]) if i in by_id],
            "counts": {s: sum(1 for x in ordered if x["state"] == s) for s in ATOM_STATES}}


def _state_order(state: str) -> int:
    return ATOM_STATES.index(state) if state in ATOM_STATES else len(ATOM_STATES)


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
