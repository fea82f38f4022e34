"""Replay: a JSON-lines stream of editing events fed to the learning path.

One event per line: {"session", "type", "file"?, "ts"?, "query"?}, `ts` in epoch
seconds or ISO-8601. A malformed line is reported (with its number) and skipped;
the rest of the stream is still learned from.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neuralmind.synapse.layer import SynapseLayer


def replay(layer: SynapseLayer, lines: Iterable[str],
           bad_line: Callable[[int, str], None]) -> dict[str, Any]:
    """Feed each JSON line to `layer.editing_event`; `bad_line(number, why)` for each one
    skipped. Returns {"events", "sessions", "bad_lines"}."""
    last_ts: dict[str, float] = {}
    sessions: set[str] = set()
    events = bad = 0
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            session, kind, file, ts, query = _parse_event(raw)
            ts = ts if ts is not None else last_ts.get(session)
            layer.editing_event(session, kind, file, ts=ts, query=query)
        except ValueError as e:
            bad += 1
            bad_line(lineno, str(e))
            continue
        if ts is not None:
            last_ts[session] = ts
        sessions.add(session)
        events += 1
    layer.close_sessions()
    return {"events": events, "sessions": len(sessions), "bad_lines": bad}


def _parse_event(raw: str) -> tuple[str, str, str, float | None, str | None]:
    try:
        ev = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON ({e.msg})") from None
    if not isinstance(ev, dict):
        raise ValueError("expected a JSON object")
    kind = ev.get("type")
    if not isinstance(kind, str):
        raise ValueError("missing 'type'")
    session = ev.get("session")
    if isinstance(session, int) and not isinstance(session, bool):
        session = str(session)
    if not isinstance(session, str) or not session:
        raise ValueError("missing 'session'")
    file = ev.get("file", "")
    if file is None:
        file = ""
    if not isinstance(file, str):
        raise ValueError("'file' must be a string")
    query = ev.get("query")
    if query is not None and not isinstance(query, str):
        raise ValueError("'query' must be a string")
    return session, kind, file, _parse_ts(ev.get("ts")), query


def _parse_ts(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"'ts' is not ISO-8601: {value!r}") from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.timestamp()
    raise ValueError("'ts' must be an ISO-8601 string or epoch seconds")
