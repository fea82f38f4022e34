"""The kinds of team events, their payloads, and how a payload becomes fold operations.

    synapse.batch  {ts, rate, pairs: [[a, b], ...], touched: [node, ...],
                    transitions: [[src, dst], ...]}    a learning batch in `shared`
    synapse.seed   {ts, pairs: [[a, b, weight, count], ...], activations: [[node, level]],
                    transitions?: [[src, dst, weight]]}
                                                       co-change and bundle seeds (MAX
                                                       semantics)
    synapse.weaken {ts, factor, pairs: [[a, b], ...]}  negative feedback on those edges
    retrieval.question {ts, tokens: [word, ...], files: [file, ...], unused: [file, ...]}
                                                       what an answer's use taught (answers
                                                       scored by use): a question's words,
                                                       the files kept after it, and the
                                                       files it returned that went unused;
                                                       never the question's text, session
                                                       or answer
    record.put     {ts, type, id, record: {...}, base: [author, seq] | null}
                                                       a new version of a decision or
                                                       memory record; `base` is the version
                                                       it was edited from

A payload from a peer is checked before it is folded: a malformed one raises
`BadEvent`, and the mirror keeps it in its log (never lost) without applying it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from neuralmind import config
from neuralmind.outbox import BATCH, QUESTION, RECORD, SEED, WEAKEN
from neuralmind.team import fold
from neuralmind.team.fold import Op

# (an older `retrieval.used` kind, a per-node use count, was folded but never sent nor
# shown: answers scored by use are shared as `retrieval.question`; a peer's is kept in the
# log as an unknown kind, not applied)
KINDS = frozenset({BATCH, SEED, WEAKEN, RECORD, QUESTION})
RECORD_TYPES = frozenset({"decision", "memory"})


class BadEvent(ValueError):
    """A payload that does not match its kind."""


def _ts(p: dict[str, Any]) -> float:
    ts = p.get("ts")
    if not isinstance(ts, (int, float)) or isinstance(ts, bool) or not math.isfinite(ts):
        raise BadEvent("ts must be a finite number")
    return float(ts)


def _node(v: Any) -> str:
    if not isinstance(v, str) or not v or fold.SEP in v:
        raise BadEvent(f"bad node id {v!r}")
    return v


def _num(v: Any, lo: float, hi: float, what: str) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not lo <= v <= hi:
        raise BadEvent(f"{what} must be a number in [{lo}, {hi}]")
    return float(v)


def _list(p: dict[str, Any], key: str) -> list[Any]:
    v = p.get(key, [])
    if not isinstance(v, list):
        raise BadEvent(f"{key} must be a list")
    return v


def _pair(v: Any, size: int = 2) -> list[Any]:
    if not isinstance(v, list) or len(v) != size:
        raise BadEvent(f"expected a list of {size}, got {v!r}")
    return v


def _node_pairs(payload: dict[str, Any], key: str) -> Iterator[tuple[str, str]]:
    """The [a, b] lists under `key` as checked node ids; a == b is skipped."""
    for v in _list(payload, key):
        a, b = (_node(x) for x in _pair(v))
        if a != b:
            yield a, b


def operations(kind: str, payload: Any) -> list[Op]:
    """The fold operations of one event, in order (none for records and questions, which
    are kept whole); BadEvent when malformed."""
    if kind not in KINDS:
        raise BadEvent(f"unknown event kind {kind!r}")
    if not isinstance(payload, dict):
        raise BadEvent("the payload must be an object")
    ts = _ts(payload)
    ops: list[Op] = []

    def add(tgt: str, op: str, x: float = 0.0, n: int = 0) -> None:
        ops.append(Op(tgt, ts, op, x, n))

    if kind == BATCH:
        rate = _num(payload.get("rate"), 0.0, 1.0, "rate")
        for a, b in _node_pairs(payload, "pairs"):
            add(fold.synapse_target(a, b), fold.REINFORCE, rate)
        for v in _list(payload, "touched"):
            add(fold.target(fold.ACTIVATION, _node(v)), fold.REINFORCE)
        for a, b in _node_pairs(payload, "transitions"):
            add(fold.target(fold.TRANSITION, a, b), fold.REINFORCE)
    elif kind == SEED:
        for v in _list(payload, "pairs"):
            a, b, w, c = _pair(v, 4)
            a, b = _node(a), _node(b)
            if a != b:
                add(fold.synapse_target(a, b), fold.SEED, _num(w, 0.0, 1e9, "weight"),
                    int(_num(c, 0, 2**31, "count")))
        for v in _list(payload, "activations"):
            node, level = _pair(v)
            add(fold.target(fold.ACTIVATION, _node(node)), fold.SEED,
                _num(level, 0.0, 1e9, "level"))
        for v in _list(payload, "transitions"):
            src, dst, w = _pair(v, 3)
            if src != dst:
                add(fold.target(fold.TRANSITION, _node(src), _node(dst)), fold.SEED,
                    _num(w, 0.0, 1e9, "weight"), 1)
    elif kind == WEAKEN:
        factor = _num(payload.get("factor"), 0.0, 1.0, "factor")
        for a, b in _node_pairs(payload, "pairs"):
            add(fold.synapse_target(a, b), fold.WEAKEN, factor)
    elif kind == QUESTION:
        check_question(payload)
    else:
        check_record(payload)
    return ops


def check_question(payload: dict[str, Any]) -> None:
    """Words of 1-64 characters (no spaces: the store keeps them space-joined), file ids."""
    tokens = _list(payload, "tokens")
    if not tokens or len(tokens) > config.TEAM_QUESTION_MAX_ITEMS:
        raise BadEvent(f"a question needs 1-{config.TEAM_QUESTION_MAX_ITEMS} tokens")
    for t in tokens:
        if not isinstance(t, str) or not 0 < len(t) <= 64 or not t.isalnum():
            raise BadEvent(f"bad question token {t!r}")
    files, unused = _list(payload, "files"), _list(payload, "unused")
    if not files and not unused:
        raise BadEvent("a question teaches nothing without files or unused files")
    if len(files) > config.TEAM_QUESTION_MAX_ITEMS or len(unused) > config.TEAM_QUESTION_MAX_ITEMS:
        raise BadEvent(f"at most {config.TEAM_QUESTION_MAX_ITEMS} files and unused files")
    for f in (*files, *unused):
        _node(f)


def check_record(payload: dict[str, Any]) -> None:
    if payload.get("type") not in RECORD_TYPES:
        raise BadEvent(f"record type must be one of {sorted(RECORD_TYPES)}")
    if not isinstance(payload.get("id"), str) or not payload["id"]:
        raise BadEvent("a record needs an id")
    if not isinstance(payload.get("record"), dict):
        raise BadEvent("record must be an object")
    base = payload.get("base")
    if base is not None and not (isinstance(base, list) and len(base) == 2
                                 and isinstance(base[0], str) and isinstance(base[1], int)):
        raise BadEvent("base must be null or [author, seq]")
