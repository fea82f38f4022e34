"""Standing directives: the pinned preference atoms as one compact imperative block.

Served with every wake-up and available to hooks (re-injected on every model call and
into compaction summaries, so time, drift and compaction cannot drop the rules). Small
on purpose: at most `max_lines` lines and `max_chars` characters (DIRECTIVES_MAX_LINES /
_CHARS, per workspace in `.neuralmind.toml`); what does not fit is counted on the last
line, never cut silently. Reading them registers no pending feedback (push-only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neuralmind.memory import atoms

if TYPE_CHECKING:
    from neuralmind.memory.db import MemoryDB

HEADER = "Standing directives (follow them):"


@dataclass
class Directives:
    text: str
    ids: list[str] = field(default_factory=list)          # the directives shown
    omitted: list[str] = field(default_factory=list)      # pinned, but over the limits

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "ids": self.ids, "omitted": self.omitted,
                "lines": len(self.text.splitlines()), "chars": len(self.text)}


def pinned(store: MemoryDB) -> list[atoms.Atom]:
    with store.read() as conn:
        return atoms.load(conn, "WHERE pinned = 1 AND type = 'preference' AND state IN "
                                "('active', 'proposed') ORDER BY seq")


def render(found: list[atoms.Atom], max_lines: int, max_chars: int) -> Directives:
    """The block for `found`, oldest pin first, within both limits (header included)."""
    if not found or max_lines < 2 or max_chars < len(HEADER) + len(_more(len(found))) + 1:
        return Directives("", [], [a.id for a in found])
    share = (max_chars - len(HEADER) - len(_more(len(found)))) // min(len(found), max_lines - 1)
    per_line = max(40, share - 1)
    lines = [HEADER]
    shown: list[str] = []
    for i, a in enumerate(found):
        rest = len(found) - i - 1
        candidate = [*lines, _line(a, per_line), *([_more(rest)] if rest else [])]
        if len(candidate) > max_lines or len("\n".join(candidate)) > max_chars:
            break
        lines.append(candidate[len(lines)])
        shown.append(a.id)
    omitted = [a.id for a in found[len(shown):]]
    if omitted:
        lines.append(_more(len(omitted)))
    return Directives("\n".join(lines), shown, omitted)


def _more(n: int) -> str:
    return f"(+{n} more: neuralmind memory directives)"


def _line(a: atoms.Atom, n: int) -> str:
    text = " ".join(a.text.split())
    text = text if len(text) <= n - 2 else text[: n - 3].rstrip() + "…"
    return f"- {text}"
