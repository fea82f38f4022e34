"""Mapping a commit's diff hunks onto the symbols a decision governs.

A decision that names symbols (`path::Qualified.name`) is only about those
symbols: a hunk outside them, or one that changes only comments and whitespace
inside them, does not touch what the decision describes. Symbol line ranges come
from the code-graph extractor on each side of the diff; "only comments and
whitespace" means the tree-sitter token stream (structure and token text, with
comment nodes dropped) is identical on both sides.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.memory.decisions.record import normalise_path, normalise_status
from neuralmind.memory.git import Change, Git, Hunk

if TYPE_CHECKING:
    from neuralmind.memory.decisions.db import DecisionDB

log = logging.getLogger("neuralmind.memory")


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a commit's change to one file touches what a decision governs there."""

    governed: bool
    why: str


def symbol_ranges(path: str, data: bytes) -> dict[str, tuple[int, int]] | None:
    """qualname -> (first, last) line of each symbol in `data`; None when the file is not parsed."""
    # the parser (~20 ms of tree-sitter) loads when a scan or a diagnostic needs symbols,
    # not with the store every decisions command opens
    from neuralmind.graph.extract import extract_file
    from neuralmind.graph.languages import language_for

    language = language_for(path)
    if language is None:
        return None
    fx = extract_file(path, data, language)
    if fx.error:
        return None
    ranges: dict[str, tuple[int, int]] = {}
    for n in fx.nodes:
        if not n.qualname:
            continue
        lo, hi = ranges.get(n.qualname, (n.start_line, n.end_line))
        ranges[n.qualname] = (min(lo, n.start_line), max(hi, n.end_line))   # redefinitions: union
    return ranges


def code_tokens(path: str, data: bytes, first: int = 1, last: int | None = None) -> list[str] | None:
    """The structural token stream of lines first..last without comments; None when unparsed."""
    from neuralmind.graph.languages import language_for, parser  # as above: on first use

    language = language_for(path)
    if language is None:
        return None
    tree = parser(language).parse(data)
    lo, hi = first - 1, (last if last is not None else 1 << 30) - 1   # tree-sitter rows are 0-based
    out: list[str] = []
    stack = [(tree.root_node, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            out.append(")")
            continue
        if node.end_point[0] < lo or node.start_point[0] > hi or "comment" in node.type:
            continue
        if node.child_count == 0:
            out.append(data[node.start_byte:node.end_byte].decode("utf-8", "replace"))
            continue
        out.append(f"({node.type}")
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(node.children))
    return out


def _overlaps(start: int, count: int, rng: tuple[int, int]) -> bool:
    return count > 0 and start <= rng[1] and start + count - 1 >= rng[0]


def classify(git: Git, parent: str, head: str, change: Change, toplevel_prefix: str,
             qualnames: list[str]) -> Verdict:
    """Does `change` (parent -> head) touch the decision's symbols in this file, or any code at all?

    Conservative: whatever cannot be mapped (added, deleted or renamed file, unknown
    language, a symbol found on neither side) counts as governed. GitError propagates so the
    scan can abort without changing anything.
    """
    if change.status != "M":   # added, deleted, renamed or retyped: the governed path itself changed
        return Verdict(True, {"A": "file added", "D": "file deleted", "R": "file renamed"}.get(
            change.status, "file replaced"))
    old = git.show(parent, change.old_path)
    new = git.show(head, change.new_path)
    rel_new = change.new_path.removeprefix(toplevel_prefix)
    try:
        if not qualnames:
            old_tokens, new_tokens = code_tokens(rel_new, old), code_tokens(rel_new, new)
            if new_tokens is not None and old_tokens == new_tokens:
                return Verdict(False, "comments/whitespace only")
            return Verdict(True, "code changed")
        old_ranges = symbol_ranges(rel_new, old)
        new_ranges = symbol_ranges(rel_new, new)
    except Exception as e:  # a parser failure must not decide a status: stay conservative
        log.warning("cannot parse %s for symbol-level staleness (%s)", change.new_path, e)
        return Verdict(True, "not parsed")
    if old_ranges is None or new_ranges is None:
        return Verdict(True, "language not parsed")
    hunks: list[Hunk] = git.hunks(parent, change.old_path, head, change.new_path)
    for q in qualnames:
        o, n = old_ranges.get(q), new_ranges.get(q)
        if o is None and n is None:
            return Verdict(True, f"symbol {q} not found")
        touched = any((o and _overlaps(h.old_start, h.old_count, o)) or
                      (n and _overlaps(h.new_start, h.new_count, n)) for h in hunks)
        if not touched:
            continue
        if o is None or n is None:
            return Verdict(True, f"symbol {q} {'added' if o is None else 'removed'}")
        if code_tokens(rel_new, old, *o) != code_tokens(rel_new, new, *n):
            return Verdict(True, f"symbol {q} changed")
    return Verdict(False, "outside the governed symbols or comments/whitespace only")


def governing(store: DecisionDB, file: str, status: str = "ALL") -> list[dict[str, Any]]:
    """Decisions whose files include `file`, with the current line range of each named symbol.

    For editor diagnostics: `symbols` lists {symbol, qualname, start_line, end_line}
    (end/start None when the symbol is not found in the file as it is on disk).
    """
    rel = normalise_path(store.root, file)
    status = normalise_status(status, allow_all=True)
    found = [d for d in store.decisions(status) if rel in d.files_affected]
    ranges: dict[str, tuple[int, int]] | None = None
    if any(d.symbols_in(rel) for d in found):
        try:
            ranges = symbol_ranges(rel, (Path(store.root) / rel).read_bytes())
        except Exception as e:  # unreadable or unparsable file: report decisions without ranges
            log.info("no symbol ranges for %s (%s)", rel, e)
    out = []
    for d in found:
        symbols = []
        for q in d.symbols_in(rel):
            rng = (ranges or {}).get(q)
            symbols.append({"symbol": f"{rel}::{q}", "qualname": q,
                            "start_line": rng[0] if rng else None, "end_line": rng[1] if rng else None})
        out.append({"decision": d.to_json(), "symbols": symbols})
    return out
