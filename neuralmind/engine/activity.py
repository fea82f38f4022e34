"""What the engine tells the event bus about questions, and what the event log says back.

A `query` event carries the files a pack served, the tokens it served and the tokens
it replaced: the whole files its hits point into, which an agent would otherwise
read (estimated from their size, `BYTES_PER_TOKEN`). `savings` folds the log's
query and activity events into the Savings view: tokens per day, and precision by
use (the share of served files the asking session then opened, edited or saved
within USE_WINDOW_SECONDS), per channel (editor, agent, command line, page).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.config import BYTES_PER_TOKEN, QUERY_EVENT_FILES, USE_WINDOW_SECONDS
from neuralmind.events import bus, publish
from neuralmind.events.log import read_events
from neuralmind.graph.model import file_of

if TYPE_CHECKING:
    from neuralmind.context.pack import ContextResult
    from neuralmind.graph.graph import Graph

QUESTION_CHARS = 200          # an event names its question, not a pasted file
HOOK_SUMMARY_CHARS = 160      # of the first line of what a hook pushed, in its `hook` event
USE_KINDS = frozenset({"file_activity", "editor"})
SAVINGS_KINDS = frozenset({"query"}) | USE_KINDS


def served_files(result: ContextResult) -> list[str]:
    """The files of a pack's hits, best first, as many as an event names."""
    return list(dict.fromkeys(h.node.file for h in result.hits))[:QUERY_EVENT_FILES]


def replaced_tokens(graph: Graph, files: list[str]) -> int:
    """Tokens of those whole files, estimated from their size."""
    size = sum(graph.files[f].size for f in files if f in graph.files)
    return int(size / BYTES_PER_TOKEN)


def publish_query(graph: Graph, question: str, result: ContextResult, source: str) -> None:
    """Tell the bus a question was answered (nothing is computed when nobody listens)."""
    if not bus.active:
        return
    files = served_files(result)
    publish("query", source=source, question=question[:QUESTION_CHARS], files=files,
            nodes=[h.node.id for h in result.hits[:QUERY_EVENT_FILES]],
            tokens=result.tokens, replaced=replaced_tokens(graph, files), mode=result.mode)


def hook_summary(text: str) -> str:
    """The first line of what a hook pushed, for the trace ("nothing" when it added none)."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    cut = first[:HOOK_SUMMARY_CHARS] + ("…" if len(first) > HOOK_SUMMARY_CHARS else "")
    return cut or "nothing"


def publish_hook(agent: str, event: str, session: str, ms: float, pushed: str,
                 served_by: str) -> None:
    """Tell the bus a hook was answered: by whom ("server", or "disk" in the hook's own
    process), how fast, and what it pushed to which agent (the Debug trace)."""
    if not bus.active:
        return
    publish("hook", agent=agent, event=event, session=session, ms=ms,
            pushed=hook_summary(pushed), chars=len(pushed), served_by=served_by)


def publish_prompt(graph: Graph, question: str, pushed: str, node_ids: list[str],
                   source: str) -> None:
    """Tell the bus what an agent's prompt hook pushed, as a question answered: the files of
    its top hits, the tokens it added and the whole files those stand in for (Savings)."""
    if not bus.active or not pushed:
        return
    # ~9 ms (the o200k tables): not at import, which the server does on its event loop
    from neuralmind.context.tokens import count_tokens

    files = list(dict.fromkeys(file_of(n) for n in node_ids))[:QUERY_EVENT_FILES]
    publish("query", source=source, question=question[:QUESTION_CHARS], files=files,
            nodes=node_ids[:QUERY_EVENT_FILES], tokens=count_tokens(pushed),
            replaced=replaced_tokens(graph, files), mode="hook")


def channel(source: str) -> str:
    """Who asked: the editor, an agent, the command line or the observatory page."""
    if source.startswith("lsp"):
        return "editor"
    if source.startswith(("mcp", "hook", "agent")):
        return "agent"
    return source or "cli"


def savings(root: Path) -> dict[str, Any]:
    """Tokens served and replaced per day, and precision by use, from the event log."""
    events = read_events(root, kinds=SAVINGS_KINDS)
    uses: dict[str, list[tuple[float, str]]] = defaultdict(list)   # session -> (ts, file)
    for e in events:
        if e.kind in USE_KINDS and e.data.get("file") and e.data.get("session"):
            uses[str(e.data["session"])].append((e.ts, str(e.data["file"])))
    for activity in uses.values():
        activity.sort()           # processes append in their own order; the window needs time order
    days: dict[str, dict[str, Any]] = {}
    channels: dict[str, dict[str, int]] = defaultdict(lambda: {"queries": 0, "observed": 0,
                                                               "served": 0, "used": 0})
    for e in events:
        if e.kind != "query":
            continue
        day = datetime.fromtimestamp(e.ts, UTC).strftime("%Y-%m-%d")
        d = days.setdefault(day, {"day": day, "queries": 0, "served": 0, "replaced": 0,
                                  "files_served": 0, "files_used": 0})
        d["queries"] += 1
        d["served"] += int(e.data.get("tokens") or 0)
        d["replaced"] += int(e.data.get("replaced") or 0)
        source = str(e.data.get("source") or "")
        c = channels[channel(source)]
        c["queries"] += 1
        used = _used_files(uses.get(source, []), e.ts, e.data.get("files") or [])
        if used is None:
            continue                 # the session did nothing afterwards: nothing to judge
        files = e.data.get("files") or []
        c["observed"] += 1
        c["served"] += len(files)
        c["used"] += used
        d["files_served"] += len(files)
        d["files_used"] += used
    series = [days[k] for k in sorted(days)]
    for d in series:
        d["precision"] = round(d["files_used"] / d["files_served"], 4) if d["files_served"] else None
    by_channel = {name: {**c, "precision": round(c["used"] / c["served"], 4) if c["served"] else None}
                  for name, c in sorted(channels.items())}
    return {"days": series, "channels": by_channel,
            "since": min(e.ts for e in events) if events else None,
            "totals": {"queries": sum(d["queries"] for d in series),
                       "served": sum(d["served"] for d in series),
                       "replaced": sum(d["replaced"] for d in series)}}


def _used_files(activity: list[tuple[float, str]], ts: float, files: list[Any]) -> int | None:
    """How many of `files` the session touched within the window after `ts`; None when it
    touched nothing at all then. `activity` is sorted by time."""
    start = bisect.bisect_right(activity, (ts, "\uffff"))
    touched = set()
    for when, f in activity[start:]:
        if when > ts + USE_WINDOW_SECONDS:
            break
        touched.add(f)
    if not touched:
        return None
    return sum(1 for f in files if f in touched)
