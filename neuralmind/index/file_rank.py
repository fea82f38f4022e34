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

A change request (any question not in question form: `query.is_locate_question`) is
then re-ranked by a learned step (`rank_question_files` -> `learned_rank`): a linear score over scale-free
features of each candidate file (its place in each list and in the ranking so far, its
scores over the question's best, flags, path-name match, size), with one global weight
vector fitted by pairwise logistic regression on the history projects' commit messages
(config.LEARNED_FILE_WEIGHTS; BENCHMARKS.md RETR8). It favours the hub files and tests a
change touches; a locate question ("how does X ...?") keeps the ranking above, which
finds the one small module such questions ask for.

The symbol hits are then reordered so the top hits span the top files: the best symbol
of each ranked file first, in file order, then the rest by score.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from typing import TypeVar

import numpy as np

from neuralmind.config import (
    DOC_FACTOR,
    FILE_BM25_B,
    FILE_LIST_WEIGHTS,
    FILE_RRF_K,
    FILE_TEST_FACTOR,
    LEARNED_CANDIDATE_DEPTH,
    LEARNED_FILE_WEIGHTS,
    LEARNED_KEYWORD_DEPTH,
    MAX_RANKED_FILES,
    PAIR_FOLLOW_DEPTH,
    PAIR_FOLLOW_POSITION,
    PAIR_FOLLOW_SOURCES,
    PAIR_SHARE,
    PATH_FACTS_KEPT,
    PATH_TERMS_KEPT,
    SYMBOL_LIST_DEPTH,
)
from neuralmind.index.bm25 import BM25Index
from neuralmind.index.pairing import is_test_path, pair_index
from neuralmind.index.query import Question
from neuralmind.index.symbol_rank import Hit, is_file_id, node_path
from neuralmind.index.tokens import code_tokens

_DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc")
LEARNED_REASON = "learned change-request rank"   # every file the learned step ranked
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
    learned: bool = False     # scored by `learned_rank`: on its scale, not the fused one

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "score": round(self.score, 6), "reasons": self.reasons}


_score = attrgetter("score")   # max's key over RankedFile: no Python frame per candidate


def is_doc_path(path: str) -> bool:
    return path.lower().endswith(_DOC_SUFFIXES)


_EXAMPLE_DIR = re.compile(r"(^|/)_?examples?/", re.IGNORECASE)


def is_example_path(path: str) -> bool:
    return bool(_EXAMPLE_DIR.search(path))


@functools.lru_cache(maxsize=PATH_FACTS_KEPT)
def _doc_kind(path: str) -> tuple[bool, bool]:
    """(documentation, example program): asked of the same few hundred ranked files every
    answer (config.PATH_FACTS_KEPT); a function of the path alone."""
    return is_doc_path(path), is_example_path(path)


def scaled_as_documentation(path: str, about_docs: bool, about_examples: bool) -> bool:
    """Documentation the question is not about: prose files unless it asks about docs,
    example programs (a folder `examples/`, `_examples/`, `example/`) unless it asks about
    examples. Why examples: they use every feature's words, as a README does, and a change
    request rarely changes them: on history2 they held 33 of the test questions' top-five
    places, 1 of them a changed file (BENCHMARKS RETR11). Why apart: "fix the hook
    example" is as often about a docstring's example, where the README does not help."""
    doc, example = _doc_kind(path)
    if doc:
        return not about_docs
    return not about_examples and example


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
               about_examples: bool = False, params: FileRankParams | None = None,
               limit: int = MAX_RANKED_FILES) -> list[RankedFile]:
    """Files best first, from ranked file lists (name -> files, best first).

    `pairs` maps a test file to the source files it exercises, best first."""
    p = params or FileRankParams()
    scored = fuse(lists, p)
    for rf in scored.values():
        if p.doc_factor != 1.0 and scaled_as_documentation(rf.file, about_docs, about_examples):
            rf.score *= p.doc_factor
            rf.reasons.append("documentation down-weighted")
        elif not about_tests and p.test_factor != 1.0 and is_test_path(rf.file):
            rf.score *= p.test_factor
            rf.reasons.append("test down-weighted")
    own_order = sorted(scored.values(), key=lambda r: (-r.score, r.file))
    own_rank = {rf.file: i for i, rf in enumerate(own_order, 1)}
    if p.pair_share:
        index = pair_index(pairs)
        for test in pairs if index.chained else index.tests_of(list(scored)):
            sources = pairs[test]
            best = max(filter(None, map(scored.get, sources)), key=_score, default=None)
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


def rank_question_files(lists: Mapping[str, Sequence[str]], pairs: Mapping[str, Sequence[str]],
                        q: Question, bare_name: bool, hits: Sequence[Hit],
                        nearest: Sequence[tuple[str, float]], exact: Iterable[str],
                        bm25: BM25Index, params: FileRankParams | None = None,
                        keywords: Sequence[tuple[str, float]] | None = None
                        ) -> list[RankedFile]:
    """A question's files: `rank_files`, then, for a change request, `learned_rank`.

    A locate question (`query.is_locate_question`: question form, a description) or a
    bare name keeps the fused ranking: it asks for the one module that does a thing, which
    the learned step's hub features push down (BENCHMARKS RETR7/RETR8). So does a
    keyword-only search (no `nearest` nodes): the weights were fitted with meaning. The
    learned step reads whole-file BM25 deeper than the fused list and the files' sizes
    from `bm25` (the caller holds the index's lock); `keywords`: that whole-file BM25 when
    the caller scored it already, at least `LEARNED_KEYWORD_DEPTH` deep."""
    files = rank_files(lists, pairs, about_tests=q.about_tests, about_docs=q.about_docs,
                       about_examples=q.about_examples, params=params)
    if not LEARNED_FILE_WEIGHTS or q.locate or bare_name or not nearest:
        return files
    keywords = (bm25.search_terms(q.keyword_terms, LEARNED_KEYWORD_DEPTH, subset=is_file_id,
                                  b=FILE_BM25_B) if keywords is None
                else bm25.best(keywords, LEARNED_KEYWORD_DEPTH))
    ev = FileEvidence([(node_path(h.id), h.score) for h in hits[:SYMBOL_LIST_DEPTH]],
                      keywords, [(node_path(i), c) for i, c in nearest],
                      frozenset(map(node_path, exact)), frozenset(q.keyword_terms), bm25.length)
    return learned_rank(files, lists, pairs, ev, about_tests=q.about_tests,
                        about_docs=q.about_docs, about_examples=q.about_examples,
                        params=params)


def follow_sources(ranked: list[RankedFile], own_rank: Mapping[str, int],
                   pairs: Mapping[str, Sequence[str]], p: FileRankParams) -> list[RankedFile]:
    """Each of the first `follow_sources` non-test files brings the test paired with it
    (as any of the test's sources) that its own evidence ranks best (within
    `follow_depth`) to just below it; a test so moved above `follow_position` then goes
    down to it (unless its own evidence, before pairing, ranked it there). A test already
    above its source stays where it is. Moved tests' scores are rewritten between their
    new neighbours', so the list stays best first (the learned boost re-sorts by score).
    Why any source: a test named after a package pairs with each module it uses
    (uvicorn's tests/protocols/test_http.py with h11_impl.py and httptools_impl.py), and a
    change to the second of them is as much the test's as one to the first (BENCHMARKS
    RETR12: history test R@5 +0.003, history2 +0.002, both dev sets held or up)."""
    tests_of = pair_index(pairs).by_source
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


# --- the learned step (change requests) ---------------------------------------------------
@dataclass(frozen=True)
class FileEvidence:
    """The lists' scores, which the learned step reads (the fusion reads only ranks).

    `symbols`: (file, score) of the best symbol hits, one entry a hit, best first;
    `keywords`: (file, whole-file BM25) of the files that match, best first (read
    `config.LEARNED_KEYWORD_DEPTH` deep); `meaning`: (file, cosine) of the nearest nodes,
    one entry a node, best first; `exact`: files holding a symbol the question names;
    `terms`: the question's keyword terms; `length`: a file's token count."""

    symbols: Sequence[tuple[str, float]]
    keywords: Sequence[tuple[str, float]]
    meaning: Sequence[tuple[str, float]]
    exact: frozenset[str] = frozenset()
    terms: frozenset[str] = frozenset()
    length: Callable[[str], int] = lambda f: 0


def _z(v: np.ndarray) -> np.ndarray:
    sd = float(v.std()) if len(v) else 0.0
    return (v - v.mean()) / sd if sd > 1e-9 else np.zeros_like(v)


@functools.lru_cache(maxsize=PATH_TERMS_KEPT)
def _path_terms(path: str) -> frozenset[str]:
    """A path's words, for `path_match`: the same few hundred candidates come back
    question after question (~0.3 ms of a change request's answer at Django's 20k)."""
    return frozenset(code_tokens(path.replace("/", " ").replace(".", " ")))


def candidate_features(ranked: Sequence[RankedFile], fused: Mapping[str, RankedFile],
                       pairs: Mapping[str, Sequence[str]], ev: FileEvidence, k: float,
                       depth: int, about_tests: bool, about_docs: bool,
                       about_examples: bool = False,
                       ) -> tuple[list[str], dict[str, np.ndarray]]:
    """The candidates (each list's first `depth` files, the ranking so far, and the tests
    paired with any of them) and their features, every one scale-free across
    repositories (one weight vector serves every code base): reciprocal ranks, scores
    over the question's best, cosine gaps to the best, z-scores within the candidates,
    flags. Nothing names a repository or a language."""
    sym_files = list(dict.fromkeys(f for f, _ in ev.symbols))
    kw_top = list(dict.fromkeys(f for f, _ in ev.keywords))[:depth]
    best_cos: dict[str, float] = {}
    for f, c in ev.meaning:
        best_cos.setdefault(f, c)
    cand = list(dict.fromkeys([*sym_files, *kw_top, *list(best_cos)[:depth],
                               *(rf.file for rf in ranked)]))
    have = set(cand)
    index = pair_index(pairs)
    for test in pairs if index.chained else index.tests_of(cand):
        if test not in have and any(x in have for x in pairs[test]):
            cand.append(test)
            have.add(test)
    best_fused = max((rf.score for rf in fused.values()), default=0.0) or 1.0
    own = {f: rf.score / best_fused for f, rf in fused.items()}
    at = {rf.file: i for i, rf in enumerate(ranked, 1)}
    sym_best: dict[str, float] = {}
    sym_count: dict[str, int] = {}
    for f, sc in ev.symbols:
        sym_best.setdefault(f, sc)
        sym_count[f] = sym_count.get(f, 0) + 1
    top_sym = (ev.symbols[0][1] if ev.symbols else 0.0) or 1.0
    most_hits = max(sym_count.values(), default=1)
    kw = dict(ev.keywords)
    top_kw = (ev.keywords[0][1] if ev.keywords else 0.0) or 1.0
    floor_cos = ev.meaning[-1][1] if ev.meaning else 0.0
    top_cos = max(best_cos.values(), default=0.0)
    sym_rank = {f: r for r, f in enumerate(sym_files, 1)}
    kw_rank = {f: r for r, f in enumerate(kw_top, 1)}
    cos_rank = {f: r for r, f in enumerate(best_cos, 1)}
    n_terms = max(1, len(ev.terms))
    unranked = 2 * len(ranked)
    top_file = ev.symbols[0][0] if ev.symbols else None
    terms, exact, length = ev.terms, ev.exact, ev.length
    # One row a candidate, one pass (a column at a time went over the candidates 20 times);
    # each value is the same Python float arithmetic as before, so the columns are equal.
    rows = []
    for f in cand:
        test = is_test_path(f)
        rows.append((
            own.get(f, 0.0), (k + 1) / (k + at.get(f, unranked)),
            sym_best.get(f, 0.0) / top_sym, sym_count.get(f, 0) / most_hits,
            kw.get(f, 0.0), best_cos.get(f, floor_cos),
            test and not about_tests, scaled_as_documentation(f, about_docs, about_examples),
            max(map(own.get, pairs.get(f, ()), repeat(0.0)), default=0.0) if test else 0.0,
            len(terms & _path_terms(f)) / n_terms, f in exact, f == top_file,
            (k + 1) / (k + r) if (r := sym_rank.get(f)) else 0.0,
            (k + 1) / (k + r) if (r := kw_rank.get(f)) else 0.0,
            (k + 1) / (k + r) if (r := cos_rank.get(f)) else 0.0,
            math.log1p(length(f))))
    # contiguous columns: numpy's sums (the z-scores' mean and std) then add in the same order
    (fused_v, rr_fused, sym_norm, sym_hits, kwv, cosv, is_test, is_doc, pair_lift, path_match,
     exact_v, sym_top, rrf_sym, rrf_kw, rrf_mean, lens) = np.ascontiguousarray(
        np.array(rows, dtype=np.float64).reshape(len(rows), 16).T)
    size = _z(lens)
    col = {
        "fused": fused_v, "rr_fused": rr_fused, "sym_norm": sym_norm, "sym_hits": sym_hits,
        "kw_norm": kwv / top_kw, "kw_z": _z(kwv), "cos_gap": cosv - top_cos, "cos_z": _z(cosv),
        "is_test": is_test, "is_doc": is_doc, "pair_lift": pair_lift, "path_match": path_match,
        "exact": exact_v, "sym_top": sym_top, "rrf_sym": rrf_sym, "rrf_kw": rrf_kw,
        "rrf_mean": rrf_mean, "size_z": size, "size_lo": np.minimum(size, 0.0),
        "size_hi": np.maximum(size, 0.0),
    }
    return cand, col


def learned_rank(ranked: Sequence[RankedFile], lists: Mapping[str, Sequence[str]],
                 pairs: Mapping[str, Sequence[str]], ev: FileEvidence, *,
                 about_tests: bool = False, about_docs: bool = False,
                 about_examples: bool = False, params: FileRankParams | None = None,
                 weights: Mapping[str, float] | None = None,
                 limit: int = MAX_RANKED_FILES) -> list[RankedFile]:
    """The ranking so far (`rank_files` on `lists`) re-ranked by a linear score over each
    candidate's features (`candidate_features`), then the same last step as rank_files
    (each best source brings its test into the top five, by the candidates' own scores
    without the pairing feature). Weights: config.LEARNED_FILE_WEIGHTS."""
    p = params or FileRankParams()
    w = dict(LEARNED_FILE_WEIGHTS if weights is None else weights)
    if not ranked or not any(w.values()):
        return list(ranked)[:limit]
    cand, col = candidate_features(ranked, fuse(lists, p), pairs, ev, p.k,
                                   LEARNED_CANDIDATE_DEPTH, about_tests, about_docs,
                                   about_examples)
    sc = np.zeros(len(cand))
    for name, weight in w.items():
        sc += weight * col[name]
    before = {rf.file: rf for rf in ranked}
    order = sorted(range(len(cand)), key=lambda i: (-sc[i], cand[i]))
    out = [RankedFile(cand[i], float(sc[i]),
                      [*before[cand[i]].reasons] if cand[i] in before else [], learned=True)
           for i in order]
    for rf in out:
        rf.reasons.append(LEARNED_REASON)
    if p.follow_sources:
        own = sc - w.get("pair_lift", 0.0) * col["pair_lift"]
        own_order = sorted(range(len(cand)), key=lambda i: (-own[i], cand[i]))
        own_rank = {cand[i]: r for r, i in enumerate(own_order, 1)}
        out = follow_sources(out, own_rank, pairs, p)
    return out[:limit]


def learned(files: Sequence[RankedFile]) -> bool:
    """Whether the learned step ranked these files (its scores are on its own scale)."""
    return bool(files) and files[0].learned


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
