"""Decisions at risk on the pending diff: ACTIVE decisions whose governed code an uncommitted
or unsaved change touches, found before the commit that would make them STALE.

The commit scan (invalidation.py) asks "did this commit change what the decision governs?"
after the fact; this asks the same of content that may so far exist only in an editor buffer,
with the scan's rules, so an agent or a person can reconsider while it is cheap: a decision
naming symbols is at risk when one of them changed (not only comments or whitespace), was
added or removed; a file-level decision when the file's code changed. A decision whose
fingerprint equals the pending content (recorded or re-affirmed on exactly this content) is
not at risk: the scan would carry it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from neuralmind.memory.decisions.symbols import code_tokens, symbol_ranges
from neuralmind.memory.git import Git, GitError

if TYPE_CHECKING:
    from neuralmind.memory.decisions.db import DecisionDB

log = logging.getLogger("neuralmind.memory")


@dataclass(frozen=True, slots=True)
class Touch:
    """Where a pending change touches what a decision governs in one file (1-based lines in
    the pending content)."""

    symbol: str | None      # the governed qualified name, None for the whole file
    line: int
    end_line: int
    reason: str


@dataclass(frozen=True, slots=True)
class AtRisk:
    """One ACTIVE decision the pending change touches, at one place."""

    id: str
    title: str
    file: str
    symbol: str | None
    line: int
    end_line: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def first_changed_line(old: bytes, new: bytes) -> int:
    """The first 1-based line of `new` that differs from `old` (clipped to `new`)."""
    a, b = old.splitlines(), new.splitlines()
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i + 1
    return max(1, min(len(a), len(b)) + (1 if len(b) > len(a) else 0))


def touches(path: str, old: bytes | None, new: bytes | None, qualnames: list[str]) -> list[Touch]:
    """Where `new` (None: deleted) changes, against `old` (None: absent at the base), what a
    decision governs in `path`: the named symbols, or the file's code when none are named.

    Conservative like the scan: a file added or deleted, a language that is not parsed, or a
    symbol found on neither side counts as touched."""
    if old is None and new is None:
        return []
    if new is None:
        return [Touch(None, 1, 1, "file deleted")]
    if old is None:
        return [Touch(None, 1, 1, "file added")]
    if old == new:
        return []
    try:
        if not qualnames:
            before, after = code_tokens(path, old), code_tokens(path, new)
            if after is not None and before == after:
                return []
            line = first_changed_line(old, new)
            return [Touch(None, line, line, "code changed")]
        old_ranges, new_ranges = symbol_ranges(path, old), symbol_ranges(path, new)
    except Exception as e:  # a parser failure must not hide a risk: stay conservative
        log.warning("cannot parse %s to check pending decisions (%s)", path, e)
        return [Touch(None, 1, 1, "not parsed")]
    if old_ranges is None or new_ranges is None:
        line = first_changed_line(old, new)
        return [Touch(None, line, line, "language not parsed")]
    out: list[Touch] = []
    for q in qualnames:
        o, n = old_ranges.get(q), new_ranges.get(q)
        if o is None and n is None:
            out.append(Touch(q, 1, 1, f"symbol {q} not found"))
        elif o is None:
            assert n is not None
            out.append(Touch(q, n[0], n[1], f"symbol {q} added"))
        elif n is None:
            line = min(o[0], max(1, len(new.splitlines())))
            out.append(Touch(q, line, line, f"symbol {q} removed"))
        elif code_tokens(path, old, *o) != code_tokens(path, new, *n):
            out.append(Touch(q, n[0], n[1], f"symbol {q} changed"))
    return out


def at_risk(store: DecisionDB, base: str | None, pending: Mapping[str, bytes | None]) -> list[AtRisk]:
    """ACTIVE decisions the pending content touches. `pending` maps each changed
    project-relative file to its content now (an editor buffer's text, else the file on disk;
    None when deleted); `base` is the commit it is compared with (None: no commit yet, every
    file counts as added). GitError when git cannot read the base."""
    decisions = [d for d in store.decisions("ACTIVE")
                 if any(f in pending for f in d.files_affected)]
    if not decisions:
        return []
    git = store.git()
    prefix = git.prefix()
    olds: dict[str, bytes | None] = {}
    blobs: dict[str, str | None] = {}
    found: dict[tuple[str, tuple[str, ...]], list[Touch]] = {}
    out: list[AtRisk] = []
    for d in decisions:
        for f in d.files_affected:
            if f not in pending:
                continue
            new = pending[f]
            if f in d.fingerprints:
                if f not in blobs:
                    blobs[f] = None if new is None else git.hash_data(new, f)
                if blobs[f] == d.fingerprints[f]:
                    continue        # recorded or re-affirmed on exactly this content
            if f not in olds:
                olds[f] = _at_base(git, base, prefix + f)
            key = (f, tuple(d.symbols_in(f)))
            if key not in found:   # several decisions often govern one file: parse it once
                found[key] = touches(f, olds[f], new, list(key[1]))
            out.extend(AtRisk(d.id, d.title, f, t.symbol, t.line, t.end_line, t.reason)
                       for t in found[key])
    return out


def _at_base(git: Git, base: str | None, path: str) -> bytes | None:
    """`path` (toplevel-relative) as committed in `base`; None when it is not there."""
    if base is None:
        return None
    try:
        return git.show(base, path)
    except GitError:
        if path in git.tree_blobs(base, [path]):
            raise           # it is there, but git could not read it: do not guess
        return None
