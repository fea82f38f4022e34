"""What memory adds to the wake-up pack, within its share of the wake-up budget.

In order of importance, each section only when it fits what is left of the budget:
the standing directives; open loops (`open_loop` atoms not closed, newest first); stale
decisions governing recently edited files (the working tree and the last
WAKEUP_RECENT_COMMITS commits); the most active hubs (atoms in them, plus how often they
were served and rated). Nothing here registers pending feedback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neuralmind import config
from neuralmind.context.tokens import count_tokens
from neuralmind.memory import atoms, directives
from neuralmind.memory.git import GitError

if TYPE_CHECKING:
    from neuralmind.memory.decisions.db import DecisionDB


@dataclass
class WakeupMemory:
    text: str = ""
    tokens: int = 0
    directives: list[str] = field(default_factory=list)
    open_loops: list[str] = field(default_factory=list)
    stale_decisions: list[str] = field(default_factory=list)
    hubs: list[dict[str, Any]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)      # sections over the budget

    def to_json(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "directives": self.directives,
                "open_loops": self.open_loops, "stale_decisions": self.stale_decisions,
                "hubs": self.hubs, "left_out": self.left_out}


def block(store: DecisionDB, budget: int, max_lines: int, max_chars: int) -> WakeupMemory:
    out = WakeupMemory()
    sections: list[tuple[str, str, list[Any]]] = []
    d = directives.render(directives.pinned(store), max_lines, max_chars)
    if d.text:
        sections.append(("directives", d.text, d.ids))
    with store.read() as conn:
        loops = atoms.load(conn, "WHERE type = 'open_loop' AND closed_at IS NULL AND state IN "
                                 "('active', 'proposed') ORDER BY seq DESC LIMIT ?",
                           (config.WAKEUP_OPEN_LOOPS,))
        hubs = _active_hubs(conn)
    if loops:
        sections.append(("open_loops", "Open loops:\n" + "\n".join(
            f"- {a.label} (id {a.id})" for a in loops), [a.id for a in loops]))
    stale = _stale_on_recent(store)
    if stale:
        sections.append(("stale_decisions", "Stale decisions on recently edited files:\n"
                         + "\n".join(f"- {title} ({', '.join(files)}; id {i})"
                                     for i, title, files in stale), [i for i, _, _ in stale]))
    if hubs:
        sections.append(("hubs", "Active memory hubs: " + ", ".join(
            f"{h['hub']} ({h['atoms']})" for h in hubs), hubs))
    parts: list[str] = []
    for name, text, items in sections:
        candidate = "\n\n".join([*parts, text])
        if count_tokens(candidate) > budget:
            out.left_out.append(name)
            continue
        parts.append(text)
        setattr(out, name, items)
    out.text = "\n\n".join(parts)
    out.tokens = count_tokens(out.text) if parts else 0
    return out


def _active_hubs(conn: Any) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT h.hub, count(*), sum(a.served + 3 * (a.used + a.useful + a.noise)) "
        "FROM atom_hubs h JOIN atoms a ON a.id = h.atom_id WHERE a.state IN ('active', 'proposed') "
        "GROUP BY h.hub ORDER BY count(*) + sum(a.served + 3 * (a.used + a.useful + a.noise)) "
        "DESC, h.hub LIMIT ?", (config.WAKEUP_HUBS,)).fetchall()
    return [{"hub": r[0], "atoms": int(r[1]), "exposure": int(r[2] or 0)} for r in rows]


def _stale_on_recent(store: DecisionDB) -> list[tuple[str, str, list[str]]]:
    stale = store.decisions("STALE")
    if not stale:
        return []
    try:
        recent = set(store.git().recent_files(config.WAKEUP_RECENT_COMMITS))
    except GitError:
        return []
    out = []
    for d in reversed(stale):
        touched = [f for f in d.files_affected if f in recent]
        if touched:
            out.append((d.id, d.title, touched))
    return out
