"""Deterministic merging of shared learning: every machine folds the same events into the
same weights, whatever order they arrived in.

An event becomes operations on rows ("targets"): a synapse pair, a transition, a node's
activation, a node's use count. Each target's state is the fold of its operations in
one total order, the *event order*: the store's position of the event (the same on
every machine, assigned once when it was pushed), then the operation's place in the
event. The maths are the synapse store's (Hebbian step towards the cap with lazy
exponential decay from the event's own timestamp, LTP floor, MAX for seeds, scaling for
negative feedback) for the `shared` namespace, in the same floating-point operations on
every machine; so the same events give bit-identical states whatever order they
arrived in (the mirror folds by position, holding back an event until those before it
have arrived).
"""

from __future__ import annotations

from dataclasses import dataclass

from neuralmind import config

DAY = 86400.0
SEP = "\x1f"  # between the parts of a target key (never inside a node id)

SYNAPSE, TRANSITION, ACTIVATION = "s", "t", "a"
REINFORCE, SEED, WEAKEN = "r", "s", "w"

_SYN_HALF_LIFE = config.HALF_LIFE_DAYS["shared"] * DAY
_TR_HALF_LIFE = config.TRANSITION_HALF_LIFE_DAYS * DAY

@dataclass(frozen=True, slots=True)
class Op:
    target: str
    ts: float     # the event's timestamp (decay is computed up to it)
    op: str       # REINFORCE, SEED or WEAKEN
    x: float      # rate, seeded weight or factor
    n: int        # seeded count


@dataclass(slots=True)
class State:
    weight: float
    count: int
    updated: float


def target(kind: str, *parts: str) -> str:
    return SEP.join((kind, *parts))


def synapse_target(a: str, b: str) -> str:
    lo, hi = (a, b) if a < b else (b, a)
    return target(SYNAPSE, lo, hi)


def kind_of(key: str) -> str:
    return key.split(SEP, 1)[0]


def _decayed(weight: float, age: float, half_life: float) -> float:
    return weight * pow(0.5, age / half_life)


def effective(kind: str, s: State, now: float) -> float:
    """The decayed value of a target at `now` (what the synapse store computes on read)."""
    age = max(0.0, now - s.updated)
    if kind == SYNAPSE:
        if s.count >= config.LTP_THRESHOLD:
            return max(config.LTP_FLOOR,
                       _decayed(s.weight, age, _SYN_HALF_LIFE * config.LTP_HALF_LIFE_FACTOR))
        return _decayed(s.weight, age, _SYN_HALF_LIFE)
    if kind == TRANSITION:
        return _decayed(s.weight, age, _TR_HALF_LIFE)
    return _decayed(s.weight, age, _SYN_HALF_LIFE)   # an activation


def step(kind: str, s: State | None, op: Op) -> State:
    """One operation applied to a target's state (None: the target does not exist yet)."""
    ts = op.ts
    cap = config.WEIGHT_CAP
    if s is None:
        if op.op == WEAKEN:
            return State(0.0, 0, ts)
        if op.op == SEED:
            return State(min(cap, op.x) if kind == SYNAPSE else op.x, max(op.n, 0), ts)
        first = min(cap, op.x * cap) if kind == SYNAPSE else 1.0
        return State(first, 1, ts)
    eff = effective(kind, s, ts)
    updated = max(s.updated, ts)
    if op.op == SEED:
        return State(max(eff, min(cap, op.x) if kind == SYNAPSE else op.x),
                     max(s.count, op.n), updated)
    if op.op == WEAKEN:
        w = eff * op.x
        if kind == SYNAPSE and s.count >= config.LTP_THRESHOLD:
            w = max(config.LTP_FLOOR, w)
        return State(w, s.count, updated)
    if kind == SYNAPSE:
        return State(min(cap, eff + op.x * (cap - eff)), s.count + 1, updated)
    return State(eff + 1.0, s.count + 1, updated)   # a transition or an activation


def fold(kind: str, ops: list[Op], start: State | None = None) -> State | None:
    """`ops` (in event order) folded onto `start`."""
    s = start
    for op in ops:
        s = step(kind, s, op)
    return s
