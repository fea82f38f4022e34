"""What the engine tells the event bus about questions and hooks (the live stream, Debug).

A `query` event carries the files a pack served, the tokens it served and the tokens
it replaced: the whole files its hits point into, which an agent would otherwise
read (estimated from their size, `BYTES_PER_TOKEN`), for the live trace. The savings
figures are not folded from these events: they are usage.db's report (engine/use.py),
which counts every answer once, with real o200k counts of the whole codebase.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neuralmind.config import BYTES_PER_TOKEN, QUERY_EVENT_FILES
from neuralmind.events import bus, publish
from neuralmind.graph.model import file_of

if TYPE_CHECKING:
    from neuralmind.context.pack import ContextResult
    from neuralmind.graph.graph import Graph

QUESTION_CHARS = 200          # an event names its question, not a pasted file
HOOK_SUMMARY_CHARS = 160      # of the first line of what a hook pushed, in its `hook` event


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
