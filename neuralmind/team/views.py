"""What a store shows of the team's state: visible rows, and the marks of what changed.

The mirror marks a shared target (or a record) dirty, with a new generation, whenever
its visible value changes: an ingested or echoed event, a collected or local one. A
store that shows the team's state (the synapse store's `shared` rows, through
`bridge.py`) writes the visible values of the marked targets and then clears exactly
the marks it read, so a mark made meanwhile stays for the next round.
"""

from __future__ import annotations

from collections.abc import Sequence

from neuralmind.team import tables
from neuralmind.team.fold import State
from neuralmind.team.local import TeamLocal


def visible(local: TeamLocal, targets: Sequence[str]) -> dict[str, State]:
    """This machine's view of `targets` (its unechoed events on top of the team's)."""
    conn = local.connection()
    out = tables.rows(conn, "shared", list(targets))
    out.update(tables.rows(conn, "overlay", list(targets)))
    return {t: State(*v) for t, v in out.items()}


def targets_after(local: TeamLocal, after: str, limit: int) -> list[str]:
    """Every shared target in order, a page at a time (a store showing the team's state
    for the first time writes all of it)."""
    return [r[0] for r in local.connection().execute(
        "SELECT target FROM shared WHERE target > ? UNION SELECT target FROM overlay "
        "WHERE target > ? ORDER BY 1 LIMIT ?", (after, after, limit))]


def dirty(local: TeamLocal, limit: int) -> list[tuple[str, int]]:
    """Targets whose visible value changed, with the generation of the change."""
    return [(t, int(g)) for t, g in local.connection().execute(
        "SELECT target, gen FROM dirty ORDER BY target LIMIT ?", (limit,))]


def dirty_records(local: TeamLocal, limit: int) -> list[tuple[str, str, int]]:
    """Records whose current view changed, with the generation of the change."""
    return [(t, i, int(g)) for t, i, g in local.connection().execute(
        "SELECT type, id, gen FROM dirty_records ORDER BY type, id LIMIT ?", (limit,))]


def generation(local: TeamLocal) -> int:
    """The newest mark's generation."""
    row = local.connection().execute("SELECT value FROM meta WHERE key = 'dirty_gen'").fetchone()
    return int(row[0]) if row else 1


def clear(local: TeamLocal, targets: Sequence[tuple[str, int]] = (),
          record_keys: Sequence[tuple[str, str, int]] = ()) -> None:
    """Forget marks a store has written (a newer mark of the same row stays)."""
    if not targets and not record_keys:
        return
    with local.transaction() as conn:
        conn.executemany("DELETE FROM dirty WHERE target = ? AND gen = ?", targets)
        conn.executemany("DELETE FROM dirty_records WHERE type = ? AND id = ? AND gen = ?",
                         record_keys)


def clear_through(local: TeamLocal, gen: int) -> None:
    """Forget the target marks up to generation `gen` (a store rewrote every target)."""
    with local.transaction() as conn:
        conn.execute("DELETE FROM dirty WHERE gen <= ?", (gen,))


def clear_records_through(local: TeamLocal, gen: int) -> None:
    """Forget the record marks up to generation `gen` (a store applied every record)."""
    with local.transaction() as conn:
        conn.execute("DELETE FROM dirty_records WHERE gen <= ?", (gen,))
