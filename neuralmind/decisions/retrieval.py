"""Progressive retrieval for agents: search -> timeline -> get, each step cheap.

memory_search returns compact rows (~50-100 tokens each) so an agent can pick
candidates before paying for full records; memory_timeline shows what was
decided around one decision; memory_get returns full records, at most
MAX_GET_IDS at a time so the agent filters first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neuralmind.decisions.record import Decision, normalise_status
from neuralmind.errors import InvalidArgument

if TYPE_CHECKING:
    from neuralmind.decisions.db import DecisionDB

MAX_GET_IDS = 20
TITLE_CHARS = 80
SNIPPET_CHARS = 80
ROW_FILES = 2
MAX_TIMELINE_SIDE = 20


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def compact_row(d: Decision, score: float | None = None) -> dict[str, Any]:
    """One decision in ~50-100 tokens: enough to decide whether to fetch it."""
    files = d.files_affected[:ROW_FILES]
    if len(d.files_affected) > ROW_FILES:
        files = [*files, f"+{len(d.files_affected) - ROW_FILES} more"]
    row: dict[str, Any] = {
        "id": d.id, "title": _clip(d.title, TITLE_CHARS), "status": d.status,
        "date": d.created_at[:10], "files": files,
        "snippet": _clip(d.rationale, SNIPPET_CHARS),
    }
    if score is not None:
        row["score"] = round(score, 3)
    return row


def memory_search(store: DecisionDB, query: str, limit: int = 10, status: str = "ACTIVE",
                  mode: str | None = None) -> dict[str, Any]:
    """Layer 1: compact rows for a query, with the mode that ran."""
    if not (query or "").strip():
        raise InvalidArgument("memory_search needs a query")
    status = normalise_status(status, allow_all=True)
    result = store.search(query, mode=mode, status=status, limit=limit)
    return {
        "mode": result.mode, "notice": result.notice, "status": status,
        "results": [compact_row(d, s) for d, s in zip(result.records, result.scores, strict=True)],
        "next": "memory_get(ids) for rationale, rejected alternatives and evidence; "
                "memory_timeline(id) for what was decided around one",
    }


def memory_timeline(store: DecisionDB, decision_id: str | None = None, query: str | None = None,
                    before: int = 3, after: int = 3, mode: str | None = None) -> dict[str, Any]:
    """Layer 2: decisions recorded just before and after an anchor (an id, or a query's top hit)."""
    if before < 0 or after < 0:
        raise InvalidArgument("before and after must not be negative")
    before, after = min(before, MAX_TIMELINE_SIDE), min(after, MAX_TIMELINE_SIDE)
    notice, ran = "", None
    if decision_id:
        anchor_id = store.resolve_id(decision_id)
    elif (query or "").strip():
        found = store.search(query or "", mode=mode, status="ALL", limit=1)
        ran, notice = found.mode, found.notice
        if not found.records:
            return {"anchor": None, "before": [], "after": [], "mode": ran, "notice": notice}
        anchor_id = found.records[0].id
    else:
        raise InvalidArgument("memory_timeline needs a decision id or a query")
    conn = store.connection()
    seq = conn.execute("SELECT seq FROM decisions WHERE id = ?", (anchor_id,)).fetchone()[0]
    earlier = [r[0] for r in conn.execute(
        "SELECT seq FROM decisions WHERE seq < ? ORDER BY seq DESC LIMIT ?", (seq, before))]
    later = [r[0] for r in conn.execute(
        "SELECT seq FROM decisions WHERE seq > ? ORDER BY seq LIMIT ?", (seq, after))]
    by_seq = store.by_seq([seq, *earlier, *later])
    out: dict[str, Any] = {
        "anchor": compact_row(by_seq[seq]),
        "before": [compact_row(by_seq[s]) for s in reversed(earlier) if s in by_seq],
        "after": [compact_row(by_seq[s]) for s in later if s in by_seq],
    }
    if ran:
        out |= {"mode": ran, "notice": notice}
    return out


def memory_get(store: DecisionDB, ids: list[str]) -> dict[str, Any]:
    """Layer 3: full records for a shortlist (at most MAX_GET_IDS ids)."""
    ids = [i for i in (ids or []) if str(i).strip()]
    if not ids:
        raise InvalidArgument("memory_get needs at least one id")
    if len(ids) > MAX_GET_IDS:
        raise InvalidArgument(f"memory_get takes at most {MAX_GET_IDS} ids ({len(ids)} given): "
                         "narrow the shortlist with memory_search first")
    return {"records": [d.to_json() for d in store.get_many(ids)]}
