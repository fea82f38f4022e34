"""Progressive retrieval for agents: search -> timeline -> get, each step cheap, over every
atom type (decisions, lessons, preferences, facts, notes, open loops).

memory_search returns compact rows (~50-100 tokens each) so an agent can pick
candidates before paying for full records; memory_timeline shows what was
remembered around one atom; memory_get returns full records, at most MAX_GET_IDS at
a time so the agent filters first. A decision's row and record keep their shape
(`status` is its ACTIVE / STALE / INVALIDATED); other atoms carry `type`, and their
state as `status` (ACTIVE, PROPOSED, IGNORED, ARCHIVED, REJECTED).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neuralmind.errors import InvalidArgument
from neuralmind.memory import atoms
from neuralmind.memory.atoms import Atom
from neuralmind.memory.decisions.record import Decision, normalise_status
from neuralmind.memory.search import Scope, run_search

if TYPE_CHECKING:
    from neuralmind.memory.decisions.db import DecisionDB

MAX_GET_IDS = 20
TITLE_CHARS = 80
SNIPPET_CHARS = 80
ROW_FILES = 2
MAX_TIMELINE_SIDE = 20
_NOT_FORGOTTEN = "a.state IN ('active', 'proposed')"


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _files(paths: list[str]) -> list[str]:
    files = paths[:ROW_FILES]
    if len(paths) > ROW_FILES:
        files = [*files, f"+{len(paths) - ROW_FILES} more"]
    return files


def compact_row(d: Decision, score: float | None = None) -> dict[str, Any]:
    """One decision in ~50-100 tokens: enough to decide whether to fetch it."""
    row: dict[str, Any] = {
        "id": d.id, "title": _clip(d.title, TITLE_CHARS), "status": d.status,
        "date": d.created_at[:10], "files": _files(d.files_affected),
        "snippet": _clip(d.rationale, SNIPPET_CHARS),
    }
    if score is not None:
        row["score"] = round(score, 3)
    return row


def atom_row(a: Atom, score: float | None = None) -> dict[str, Any]:
    """Any other atom in the same compact shape, with its type."""
    row: dict[str, Any] = {
        "id": a.id, "type": a.type, "title": _clip(a.label, TITLE_CHARS),
        "status": a.state.upper(), "date": a.created_at[:10],
        "files": _files([t for t in a.about if "::" not in t] or a.about),
        "snippet": _clip(a.text, SNIPPET_CHARS),
    }
    if score is not None:
        row["score"] = round(score, 3)
    return row


def search_scope(status: str) -> Scope:
    """ACTIVE: active decisions and atoms not forgotten; STALE/INVALIDATED: those decisions;
    ALL: every atom, forgotten ones included (to find one to restore)."""
    if status == "ALL":
        return "1 = 1", ()
    if status == "ACTIVE":
        return (f"(a.type = 'decision' AND d.status = 'ACTIVE') OR "
                f"(a.type != 'decision' AND {_NOT_FORGOTTEN})"), ()
    return "a.type = 'decision' AND d.status = ?", (status,)


def rows_by_seq(store: DecisionDB, seqs: list[int]) -> dict[int, dict[str, Any]]:
    """seq -> compact row, decisions and other atoms alike."""
    if not seqs:
        return {}
    out = {s: compact_row(d) for s, d in store.by_seq(seqs).items()}
    rest = [s for s in seqs if s not in out]
    if rest:
        with store.read() as conn:
            for a in atoms.load(conn, f"WHERE seq IN ({','.join('?' * len(rest))})", tuple(rest)):
                out[a.seq] = atom_row(a)
    return out


def memory_search(store: DecisionDB, query: str, limit: int = 10, status: str = "ACTIVE",
                  mode: str | None = None) -> dict[str, Any]:
    """Layer 1: compact rows for a query, with the mode that ran."""
    if not (query or "").strip():
        raise InvalidArgument("memory_search needs a query")
    status = normalise_status(status, allow_all=True)
    if limit < 1:
        raise InvalidArgument("limit must be at least 1")
    ranking, ran, _, notice, _, _ = run_search(store.connection(), query, mode,
                                               search_scope(status), limit, store.use_fts,
                                               store.write)
    rows = rows_by_seq(store, [s for s, _ in ranking])
    return {
        "mode": ran, "notice": notice, "status": status,
        "results": [rows[s] | {"score": round(score, 3)} for s, score in ranking if s in rows],
        "next": "memory_get(ids) for rationale, rejected alternatives and evidence; "
                "memory_timeline(id) for what was decided around one",
    }


def memory_timeline(store: DecisionDB, decision_id: str | None = None, query: str | None = None,
                    before: int = 3, after: int = 3, mode: str | None = None) -> dict[str, Any]:
    """Layer 2: atoms recorded just before and after an anchor (an id, or a query's top hit)."""
    if before < 0 or after < 0:
        raise InvalidArgument("before and after must not be negative")
    before, after = min(before, MAX_TIMELINE_SIDE), min(after, MAX_TIMELINE_SIDE)
    notice, ran = "", None
    conn = store.connection()
    if decision_id:
        anchor_id = resolve_any(store, decision_id)
    elif (query or "").strip():
        ranking, ran, _, notice, _, _ = run_search(conn, query or "", mode, search_scope("ALL"),
                                                   1, store.use_fts, store.write)
        if not ranking:
            return {"anchor": None, "before": [], "after": [], "mode": ran, "notice": notice}
        anchor_id = conn.execute("SELECT id FROM atoms WHERE seq = ?",
                                 (ranking[0][0],)).fetchone()[0]
    else:
        raise InvalidArgument("memory_timeline needs a decision id or a query")
    seq = conn.execute("SELECT seq FROM atoms WHERE id = ?", (anchor_id,)).fetchone()[0]
    earlier = [r[0] for r in conn.execute(
        "SELECT seq FROM atoms WHERE seq < ? ORDER BY seq DESC LIMIT ?", (seq, before))]
    later = [r[0] for r in conn.execute(
        "SELECT seq FROM atoms WHERE seq > ? ORDER BY seq LIMIT ?", (seq, after))]
    by_seq = rows_by_seq(store, [seq, *earlier, *later])
    out: dict[str, Any] = {
        "anchor": by_seq[seq],
        "before": [by_seq[s] for s in reversed(earlier) if s in by_seq],
        "after": [by_seq[s] for s in later if s in by_seq],
    }
    if ran:
        out |= {"mode": ran, "notice": notice}
    return out


def resolve_any(store: DecisionDB, id_or_prefix: str) -> str:
    """The full id of any atom for an id or a unique prefix of one (at least 4 characters)."""
    return atoms.resolve(store.connection(), id_or_prefix)


def memory_get(store: DecisionDB, ids: list[str]) -> dict[str, Any]:
    """Layer 3: full records for a shortlist (at most MAX_GET_IDS ids)."""
    ids = [i for i in (ids or []) if str(i).strip()]
    if not ids:
        raise InvalidArgument("memory_get needs at least one id")
    if len(ids) > MAX_GET_IDS:
        raise InvalidArgument(f"memory_get takes at most {MAX_GET_IDS} ids ({len(ids)} given): "
                              "narrow the shortlist with memory_search first")
    full = [resolve_any(store, i) for i in ids]
    with store.read() as conn:
        kinds = dict(conn.execute(f"SELECT id, type FROM atoms WHERE id IN "
                                  f"({','.join('?' * len(full))})", full).fetchall())
        others = {a.id: a.to_json() for a in atoms.load(
            conn, f"WHERE id IN ({','.join('?' * len(full))}) AND type != 'decision'", tuple(full))}
    decisions = {d.id: d.to_json() for d in store.get_many([i for i in full
                                                            if kinds.get(i) == "decision"])}
    return {"records": [decisions.get(i) or others[i] for i in full]}
