"""Rank and forgetting: deterministic, no model discretion.

    rank = clamp01(feedback * decay * connectedness)

- feedback comes from the verdicts (`used`, `useful`, `noise`) and is the only factor that
  can reach zero (FEEDBACK_PRIOR plus a weight per verdict, clamped);
- decay halves every DECAY_HALF_LIFE_DAYS since the atom was last useful (or created),
  down to DECAY_FLOOR;
- connectedness grows with the atom's typed edges and hubs, from CONNECTEDNESS_BASE to 1.

Below LOW_RANK an atom is forgotten: `ignored` while its exposure (times served plus three
times each verdict) is low, `archived` once it is high. Neither is ever a recall candidate;
both are kept, `restore` brings them back, only `forget` deletes. Pinned atoms (standing
directives) are exempt. Rank moves a recall score by at most +-RANK_SWAY.
"""

from __future__ import annotations

from neuralmind import config
from neuralmind.memory.atoms import Atom
from neuralmind.memory.clock import parse

DAY = 86_400.0


def clamp01(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def feedback_factor(used: int, useful: int, noise: int) -> float:
    w = config.FEEDBACK_WEIGHTS
    return clamp01(config.FEEDBACK_PRIOR + w["useful"] * useful + w["used"] * used
                   + w["noise"] * noise)


def decay_factor(age_days: float) -> float:
    return max(config.DECAY_FLOOR, 0.5 ** (max(0.0, age_days) / config.DECAY_HALF_LIFE_DAYS))


def connectedness(edges: int, hubs: int) -> float:
    return min(1.0, config.CONNECTEDNESS_BASE + config.CONNECTEDNESS_PER_EDGE * edges
               + config.CONNECTEDNESS_PER_HUB * hubs)


def rank(atom: Atom, edges: int, now: float) -> float:
    """The atom's rank at `now`, given how many typed edges touch it."""
    since = parse(atom.useful_at) or parse(atom.created_at) or now
    return clamp01(feedback_factor(atom.used, atom.useful, atom.noise)
                   * decay_factor((now - since) / DAY)
                   * connectedness(edges, len(atom.hubs)))


def sway(r: float) -> float:
    """The recall-score multiplier of rank `r`: 1 -+ RANK_SWAY (0.9 at rank 0, 1.1 at 1)."""
    return 1.0 + config.RANK_SWAY * (2.0 * clamp01(r) - 1.0)


def state_for(atom: Atom, r: float) -> str:
    """The state rank gives the atom: unchanged unless it falls below LOW_RANK."""
    if atom.pinned or atom.state not in ("active", "proposed") or r >= config.LOW_RANK:
        return atom.state
    return "archived" if atom.exposure >= config.ARCHIVE_EXPOSURE else "ignored"
