"""Tool profiles: which MCP tools a server lists, because every listed tool costs tokens.

An agent pays for the whole tool list (names, descriptions, input schemas) on every
turn, so a server lists a profile, not everything: `minimal` for the core loop,
`default` for everyday work within TOOL_LIST_BUDGETS, `all`, or an explicit list of
names (`neuralmind_` may be left out). A profile may name tools another component adds
later; only those that exist are listed. Chosen by `--tools`, the editor setting
`mcpTools` or `mcp_tools` in `.neuralmind.toml`. Stdlib only: the stdio bridge filters
a live server's list with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from neuralmind.mcp.roles import TOOL_PREFIX

MINIMAL = ("neuralmind_wakeup", "neuralmind_query", "neuralmind_recall", "neuralmind_review",
           "neuralmind_feedback")
# Everyday work: the core loop, locating, decisions and memory, what changes together, the
# editor's view (state and reveal: ~190 tokens) and status (50 tokens: what an agent checks
# when answers look stale). The inbox (~50 tokens) too: what an agent remembers starts
# proposed, and the inbox is where it sees which of its memories are still unconfirmed.
# Left to `all`: the timeline/get steps of progressive retrieval (memory_search rows carry
# what most turns need).
DEFAULT = (*MINIMAL, "neuralmind_search", "neuralmind_next_likely", "neuralmind_status",
           "neuralmind_decisions_query", "neuralmind_memory_search",
           "neuralmind_decision_record", "neuralmind_remember", "neuralmind_rate",
           "neuralmind_directives", "neuralmind_inbox", "neuralmind_editor_state",
           "neuralmind_reveal")
PROFILES: dict[str, tuple[str, ...] | None] = {"minimal": MINIMAL, "default": DEFAULT,
                                               "all": None}


def select(spec: str, available: Sequence[str]) -> list[str]:
    """The tools of `spec` among `available`, in `available`'s order; ValueError for an
    unknown profile or tool name."""
    names = wanted(spec)
    if names is None:
        return list(available)
    unknown = sorted(names - set(available)) if (spec or "").strip() not in PROFILES else []
    if unknown:
        raise ValueError(f"unknown tool {', '.join(unknown)}: use {' | '.join(PROFILES)} or "
                         f"names from {', '.join(available)}")
    return [n for n in available if n in names]


def wanted(spec: str | None) -> set[str] | None:
    """The tool names `spec` asks for, before knowing which exist (None: all of them); what
    the stdio bridge narrows a live server's list to. ValueError for an empty list."""
    spec = (spec or "default").strip()
    if spec in PROFILES:
        names = PROFILES[spec]
        return None if names is None else set(names)
    out = {n.strip() if n.strip().startswith(TOOL_PREFIX) else TOOL_PREFIX + n.strip()
           for n in spec.split(",") if n.strip()}
    if not out:
        raise ValueError(f"no tools in {spec!r}")
    return out
