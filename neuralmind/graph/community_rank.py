"""A community's name, description and best symbols, and their ranking as saves patch it.

Names come from the dominant folder and the best public, non-test symbols (by weighted
degree, `communities._centrality`); the description from the best documented file's
module docstring, else the best symbols'. `Ranking` keeps a community's best
RANKED_SYMBOLS_KEPT symbols so a save re-ranks only its own files' symbols against them
(the Linux kernel's largest community has 118k symbols: ~0.66 s per save ranked whole).
"""

from __future__ import annotations

import heapq
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from neuralmind.config import RANKED_SYMBOLS_KEPT
from neuralmind.graph.graph import Community, Graph
from neuralmind.graph.model import Node

TOP_SYMBOLS = 5
NAME_SYMBOLS = 3
DESCRIPTION_CHARS = 160
SYMBOL_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "function",
                          "method", "module"})


_UNDERLINE = re.compile(r"^\s*([=~\-^*#+_`'\"])\1{2,}\s*$")
_TEST_PART = re.compile(r"(^|/)(tests?|testing|spec|__tests__)(/|$)|(^|/)test_[^/]*$|_test\.\w+$")


def first_sentence(text: str) -> str:
    """First sentence of a docstring, without a reST title (`mod.name` over `~~~~`)."""
    lines = text.splitlines()
    kept: list[str] = []
    for line in lines:
        if _UNDERLINE.match(line):
            if kept:
                kept.pop()          # the title line above the underline
            continue
        kept.append(line)
    text = " ".join(" ".join(kept).split())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    s = m.group(1) if m else text
    return s if len(s) <= DESCRIPTION_CHARS else s[:DESCRIPTION_CHARS - 1].rstrip() + "…"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_test(path: str) -> bool:
    return bool(_TEST_PART.search(path))


def _dominant_module(files: list[str]) -> str:
    """The directory holding most of the files, or the file itself for one-file groups."""
    if len(files) == 1:
        return files[0]
    dirs = Counter(os.path.dirname(f) or "." for f in files)
    best = min(dirs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    if dirs[best] == len(files):
        return best + "/"
    common = os.path.commonpath(files) if all("/" in f for f in files) else ""
    return (common + "/") if common and dirs[best] * 2 < len(files) else best + "/"


def describe(graph: Graph, files: list[str], top: list[Node]) -> str:
    """One line from docstrings: the central file's module docstring, else its symbols'."""
    for f in files:
        for n in graph.nodes_by_file(f):
            if n.kind in ("file", "module") and n.docstring:
                return first_sentence(n.docstring)
            break
    for n in top:
        if n.docstring:
            return first_sentence(n.docstring)
    return ""


@dataclass(slots=True)
class Ranking:
    """A community's ranking as a save patches it (in memory only, `Graph.rankings`).

    `best`: its best symbols with their rank keys, in order, as many as
    RANKED_SYMBOLS_KEPT; `bound`: the last one's key when the community has more symbols
    (None: `best` holds them all). `documented`: the files whose first node is a
    documented file or module, with their file rank key (the description is the best
    one's). A save re-ranks only its files' symbols against `best`: the others' keys
    cannot have changed (their scores move only at the ends of changed edges)."""
    files: list[str]
    label: str
    best: list[tuple[Any, Node]]
    bound: Any
    documented: dict[str, tuple[bool, float, str]]


def _symbol_key(n: Node, test: bool, score: dict[str, float]) -> tuple[bool, bool, float, str]:
    # Tests call everything, so they look central; they describe a group poorly.
    # Private helpers (`_run`) are central too, but a reader meets the public names.
    return (test, _is_private(n.name), -score.get(n.id, 0.0), n.id)


def _file_facts(graph: Graph, f: str, test: bool, score: dict[str, float]
                ) -> tuple[list[tuple[Any, Node]], tuple[bool, float, str] | None]:
    """`f`'s symbols with their rank keys, and its file rank key when its first node is a
    documented file or module (else None)."""
    nodes = graph.nodes_by_file(f)
    keyed = [(_symbol_key(n, test, score), n) for n in nodes if n.kind in SYMBOL_KINDS]
    first = nodes[0] if nodes else None
    doc = (first is not None and first.kind in ("file", "module") and bool(first.docstring))
    return keyed, ((test, -sum(score.get(n.id, 0.0) for n in nodes), f) if doc else None)


def full_ranking(graph: Graph, members: list[str], score: dict[str, float]) -> Ranking:
    """Every member's symbols ranked (the test check once per file, not per symbol)."""
    test = {f: is_test(f) for f in members}
    keyed: list[tuple[Any, Node]] = []
    documented: dict[str, tuple[bool, float, str]] = {}
    for f in members:
        rows, doc = _file_facts(graph, f, test[f], score)
        keyed.extend(rows)
        if doc is not None:
            documented[f] = doc
    # nsmallest == sorted(...)[:n], without one long C-level sort of a big community
    best = heapq.nsmallest(max(RANKED_SYMBOLS_KEPT, TOP_SYMBOLS), keyed, key=lambda kn: kn[0])
    bound = best[-1][0] if len(keyed) > len(best) else None
    label = _dominant_module([f for f in members if not test[f]] or members)
    return Ranking(members, label, best, bound, documented)


def reranked(graph: Graph, rank: Ranking, members: list[str], changed: list[str],
              score: dict[str, float]) -> Ranking | None:
    """`rank` (same files) with the `changed` files' symbols and documentation ranked
    again; None when too few of the kept best symbols are left to be sure of the top."""
    gone = set(changed)
    kept = [kn for kn in rank.best if kn[1].file not in gone]
    documented = {f: k for f, k in rank.documented.items() if f not in gone}
    fresh: list[tuple[Any, Node]] = []
    for f in changed:
        rows, doc = _file_facts(graph, f, is_test(f), score)
        fresh.extend(rows)
        if doc is not None:
            documented[f] = doc
    merged = heapq.merge(kept, sorted(fresh, key=lambda kn: kn[0]), key=lambda kn: kn[0])
    bound = rank.bound
    # past `bound`, symbols of other files not kept could come first: stop there
    best = [kn for kn in merged if bound is None or kn[0] <= bound]
    more = bound is not None or len(best) > max(RANKED_SYMBOLS_KEPT, TOP_SYMBOLS)
    best = best[:max(RANKED_SYMBOLS_KEPT, TOP_SYMBOLS)]
    if more and len(best) < TOP_SYMBOLS:
        return None
    return Ranking(members, rank.label, best, best[-1][0] if more and best else None,
                   documented)


def ranked_community(graph: Graph, cid: int, rank: Ranking, size: int) -> Community:
    top = [n for _, n in rank.best[:TOP_SYMBOLS]]
    names = ", ".join(n.name for n in top[:NAME_SYMBOLS])
    described = min(rank.documented, key=rank.documented.__getitem__) \
        if rank.documented else None
    return Community(
        id=cid,
        name=f"{rank.label} ({names})" if names else rank.label,
        files=rank.files,
        top_symbols=[n.id for n in top],
        description=describe(graph, [described] if described else [], top),
        size=size,
    )
