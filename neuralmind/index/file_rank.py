"""Files as a first-class ranking, and symbol hits interleaved to follow it.

A change request is answered by files (the ones to read and edit), so files are ranked
on evidence at three granularities, each a ranked list of files:

    symbols   the symbol ranking (node BM25 + node vectors, fused), a file at the rank of
              its best symbol: what the question names precisely
    keywords  BM25 over whole files with file-only statistics: the vocabulary of the
              whole file, so a file that mentions every word of the question somewhere
              wins even when no single symbol does
    meaning   the best cosine of the file's node vectors: the file's closest symbol in
              meaning, when the words differ

fused by weighted reciprocal rank. Then two priors, each with its measured reason
(config.py): documentation files (README, CHANGELOG) mention every feature's words, so
they are scaled down unless the question is about documentation; and each test file is
lifted to a share of the best source file it exercises (`pairing.py`), so a question
about a behaviour brings the code and, just below it, the test that pins it. A share
leaves most paired tests at ranks 6-18, so last the best few source files each bring
their test into the top five, when the test's own evidence ranks it among the files at
all (a test nothing points to is not pulled in): just below its source, but never above
a fixed position, so the best files keep their order.

The symbol hits are then reordered so the top hits span the top files: the best symbol
of each ranked file first, in file order, then the rest by score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from neuralmind.config import (
    DOC_FACTOR,
    FILE_LIST_WEIGHTS,
    FILE_RRF_K,
    FILE_TEST_FACTOR,
    MAX_RANKED_FILES,
    PAIR_FOLLOW_DEPTH,
    PAIR_FOLLOW_POSITION,
    PAIR_FOLLOW_SOURCES,
    PAIR_SHARE,
)
from neuralmind.index.pairing import is_test_path

_DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc")
LIST_NAMES = {"symbols": "symbols", "keywords": "whole-file keywords", "meaning": "meaning"}


@dataclass(frozen=True)
class FileRankParams:
    """The ranking's constants (config.py holds the shipped values and their reasons)."""

    k: float = FILE_RRF_K
    weights: Mapping[str, float] = field(default_factory=lambda: dict(FILE_LIST_WEIGHTS))
    test_factor: float = FILE_TEST_FACTOR
    doc_factor: float = DOC_FACTOR
    pair_share: float = PAIR_SHARE
    follow_sources: int = PAIR_FOLLOW_SOURCES
    follow_depth: int = PAIR_FOLLOW_DEPTH
    follow_position: int = PAIR_FOLLOW_POSITION


@dataclass
class RankedFile:
    file: str
    score: float
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "score": round(self.score, 6), "reasons": self.reasons}


def is_doc_path(path: str) -> bool:
    return path.lower().endswith(_DOC_SUFFIXES)


def fuse(lists: Mapping[str, Sequence[str]], p: FileRankParams) -> dict[str, RankedFile]:
    """Weighted reciprocal-rank fusion of the file lists: the first step of `rank_files`
    (the rank lab replays it alone)."""
    scored: dict[str, RankedFile] = {}
    for name, files in lists.items():
        weight = p.weights.get(name, 0.0)
        if not weight:
            continue
        for rank, f in enumerate(dict.fromkeys(files), 1):
            rf = scored.setdefault(f, RankedFile(f, 0.0))
            rf.score += weight / (p.k + rank)
            if rank <= 3:
                rf.reasons.append(f"{LIST_NAMES.get(name, name)} #{rank}")
    return scored


def rank_files(lists: Mapping[str, Sequence[str]], pairs: Mapping[str, Sequence[str]], *,
               about_tests: bool = False, about_docs: bool = False,
               params: FileRankParams | None = None,
               limit: int = MAX_RANKED_FILES) -> list[RankedFile]:
    """Files best first, from ranked file lists (name -> files, best first).

    `pairs` maps a test file to the source files it exercises, best first."""
    p = params or FileRankParams()
    scored = fuse(lists, p)
    for rf in scored.values():
        if not about_docs and p.doc_factor != 1.0 and is_doc_path(rf.file):
            rf.score *= p.doc_factor
            rf.reasons.append("documentation down-weighted")
        elif not about_tests and p.test_factor != 1.0 and is_test_path(rf.file):
            rf.score *= p.test_factor
            rf.reasons.append("test down-weighted")
    own_order = sorted(scored.values(), key=lambda r: (-r.score, r.file))
    own_rank = {rf.file: i for i, rf in enumerate(own_order, 1)}
    if p.pair_share:
        for test, sources in pairs.items():
            best = max((scored[s] for s in sources if s in scored), key=lambda r: r.score,
                       default=None)
            if best is None:
                continue
            lifted = p.pair_share * best.score
            rf = scored.setdefault(test, RankedFile(test, 0.0))
            if lifted > rf.score:
                rf.score = lifted
                rf.reasons.append(f"test of {best.file}")
    ranked = sorted(scored.values(), key=lambda r: (-r.score, r.file))
    if p.follow_sources:
        ranked = follow_sources(ranked, own_rank, pairs, p)
    return ranked[:limit]


def follow_sources(ranked: list[RankedFile], own_rank: Mapping[str, int],
                   pairs: Mapping[str, Sequence[str]], p: FileRankParams) -> list[RankedFile]:
    """Each of the first `follow_sources` non-test files brings the test paired with it
    first that its own evidence ranks best (within `follow_depth`) to just below it; a test
    so moved above `follow_position` then goes down to it (unless its own evidence, before
    pairing, ranked it there). A test already above its source stays where it is. Moved
    tests' scores are rewritten between their new neighbours', so the list stays best
    first (the learned boost re-sorts by score)."""
    tests_of: dict[str, list[str]] = {}
    for test, sources in pairs.items():
        if sources:
            tests_of.setdefault(sources[0], []).append(test)
    by_file = {rf.file: rf for rf in ranked}
    out: list[RankedFile] = []
    placed: set[str] = set()
    moved: set[str] = set()
    n = 0
    for rf in ranked:
        if rf.file in placed:
            continue
        out.append(rf)
        placed.add(rf.file)
        if n >= p.follow_sources or is_test_path(rf.file):
            continue
        n += 1
        cands = sorted((t for t in tests_of.get(rf.file, ())
                        if t in by_file and own_rank.get(t, p.follow_depth + 1) <= p.follow_depth),
                       key=lambda t: own_rank[t])
        if not cands:
            continue
        if cands[0] not in placed:
            moved.add(cands[0])
            out.append(by_file[cands[0]])
            placed.add(cands[0])
            by_file[cands[0]].reasons.append(f"test of {rf.file}, placed below it")
    floor = p.follow_position - 1
    for rf in [r for r in out[:floor] if r.file in moved and own_rank[r.file] > floor]:
        out.remove(rf)
        out.insert(floor, rf)
    for i, rf in enumerate(out):
        if rf.file in moved and i > 0:
            below = next((r.score for r in out[i + 1:] if r.file not in moved), 0.0)
            rf.score = (out[i - 1].score + min(below, out[i - 1].score)) / 2
    return out


H = TypeVar("H")


def interleave(hits: Sequence[H], files: Sequence[RankedFile], file_of: Callable[[H], str],
               stand_in: Callable[[str], H | None], limit: int,
               lead: Callable[[H], bool] | None = None) -> list[H]:
    """Hits reordered so their files appear in the file ranking's order: the best hit of
    each ranked file first (a stand-in, such as the file itself, for a file none of whose
    symbols is a hit), then the remaining hits in their own order, `limit` in all.

    Hits `lead` picks go before all of them, in their own order: a question that is only
    a name asks for that symbol, wherever the file ranking puts its file (a small file of
    similarly named functions can outrank it on whole-file evidence)."""
    best: dict[str, H] = {}
    for h in hits:
        best.setdefault(file_of(h), h)
    head: list[H] = []
    for rf in files:
        h = best.get(rf.file)
        if h is None:
            h = stand_in(rf.file)
        if h is not None:
            head.append(h)
    taken = {id(h) for h in head}
    tail = [h for h in hits if id(h) not in taken]
    ordered = head + tail
    if lead is not None:
        first = [h for h in hits if lead(h)]
        if first:
            moved = {id(h) for h in first}
            ordered = first + [h for h in ordered if id(h) not in moved]
    return ordered[:limit]
