"""From a question to ranked files and symbols: hybrid search, then a bounded synapse boost.

The hybrid index ranks files and symbols (`index/search_index.py`), given which source
files each test exercises (`index/pairing.py`, computed again only when the graph's files or
cross-file edges change).
Spreading activation from the top files over the learned synapse graph adds its own
candidates and a boost to files that is capped relative to the best file's score, so a
warm store reorders near-ties but never buries an exact match; the symbol hits are then
interleaved again to follow the boosted file ranking.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from neuralmind.config import (
    QUESTION_BOOST,
    QUESTION_BOOST_LEARNED,
    SEED_FILES,
    SYNAPSE_BOOST,
    SYNAPSE_NEW_FILE_SHARE,
)
from neuralmind.context.pack import RankedHit
from neuralmind.index.file_rank import RankedFile, interleave, learned
from neuralmind.index.pairing import is_test_path, pair_tests

log = logging.getLogger("neuralmind.context")


_pairs_lock = threading.Lock()
_pairs_cache: dict[str, Any] = {"graph": None, "resolved": None, "files": None, "pairs": {}}


def source_pairs(graph: Any) -> Mapping[str, Sequence[str]]:
    """test file -> source files it exercises (names are O(files), and only the test files'
    own references are read). Pairs depend on the file names and the cross-file edges
    alone (a file's extract holds no edge to another file), so they are kept while the
    graph's files and its `resolved` edges are the same: a save that leaves those alone
    (a body edit, a function added; `resolved` is kept by identity) makes a new graph, and
    recomputing the pairs for it cost ~190 ms at Django's 20k nodes before the save's
    first answer (didSave -> searchable)."""
    with _pairs_lock:
        c = _pairs_cache
        last = c["graph"]() if c["graph"] is not None else None
        if last is graph or (c["resolved"] is graph.resolved and c["files"] == graph.files.keys()):
            c["graph"] = weakref.ref(graph)
            return c["pairs"]
    pairs = pair_tests(graph.files, _test_references(graph))
    with _pairs_lock:       # the resolved list is held (not its id: ids are reused)
        _pairs_cache.update(graph=weakref.ref(graph), resolved=graph.resolved,
                            files=frozenset(graph.files), pairs=pairs)
    return pairs


def _test_references(graph: Any) -> list[tuple[str, str]]:
    """(test file, other file) per cross-file edge out of a test file's symbols, in the
    order of the symbols, then of the graph's edges. Read from the file's own rows
    (`Graph.file_out_edges`), not from the whole graph's edge index: building that index
    for a new graph was most of the ~190 ms a structural save's first answer spent on pairs at
    Django's 20k nodes. (An extract holds no cross-file edge: only resolved edges count.)"""
    refs: list[tuple[str, str]] = []
    nodes = graph.nodes
    for f in graph.files:
        if not is_test_path(f):
            continue
        by_source = graph.file_out_edges(f)
        for n in graph.nodes_by_file(f):
            for e in by_source.get(n.id, ()):
                target = nodes.get(e.target)
                if e.kind != "contains" and target is not None and target.file != f:
                    refs.append((f, target.file))
    return refs


def rank(index: Any, graph: Any, question: str, k: int = 20, synapses: Any = None,
         ) -> tuple[list[RankedHit], list[RankedFile], str, str]:
    """Ranked hits and files for `question`, the search mode that ran, and any notice."""
    result = index.search(question, k=max(k, 20), pairs=source_pairs(graph))
    hits = [RankedHit(graph.nodes[h.id], h.score, _reasons(h)) for h in result.hits
            if h.id in graph.nodes]
    files = list(result.files)
    if synapses is not None and files:
        files = _boost(files, graph, synapses, question)
        hits = interleave(hits, files, lambda h: h.node.file,
                          lambda f: RankedHit(graph.nodes[f], 0.0, {"synapse_only": True})
                          if f in graph.nodes else None, len(hits),
                          lambda h: h.node.id in result.lead)
    return hits[:k], files, result.mode, result.notice


def _reasons(h: Any) -> dict[str, Any]:
    why: dict[str, Any] = {"fused": round(h.score, 5)}
    for attr in ("vector_rank", "bm25_rank"):
        value = getattr(h, attr, None)
        if value is not None:
            why[attr] = value
    if getattr(h, "reasons", None):
        why["reasons"] = list(h.reasons)
    return why


def _normalised(scores: dict[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    return {k: v / top for k, v in scores.items()} if top > 0 else {}


def _learned_namespaces(synapses: Any) -> list[str]:
    """What the user's own work taught: the active namespace, personal and ephemeral.

    The shared namespace holds cold-start priors (call/import structure, co-change):
    measured on the public benchmark they pull every question towards the hub files,
    so they serve next-file prediction but not the retrieval boost.
    """
    return list(dict.fromkeys([synapses.namespace, "personal", "ephemeral"]))


def _boost(files: list[RankedFile], graph: Any, synapses: Any,
           question: str) -> list[RankedFile]:
    seeds = [f.file for f in files[:SEED_FILES]]
    try:
        spread = dict(synapses.spread(seeds, top_k=12, namespaces=_learned_namespaces(synapses)))
        asked = _normalised(dict(synapses.question_files(question, k=10)))
    except Exception as e:  # learning paths fail open
        log.warning("synapse recall failed, ranking without it: %s", e)
        return files
    if not spread and not asked:
        return files
    best = files[0].score
    boost = {f: SYNAPSE_BOOST * best * min(1.0, e) for f, e in spread.items()}
    share = QUESTION_BOOST_LEARNED if learned(files) else QUESTION_BOOST
    for f, p in asked.items():
        boost[f] = boost.get(f, 0.0) + share * best * p
    ranked = {f.file: f for f in files}
    for f, b in sorted(boost.items()):
        if b <= 0:
            continue
        if f in ranked:
            ranked[f].score += b
            ranked[f].reasons.append("learned from your work")
        elif f in graph.nodes:
            ranked[f] = RankedFile(f, SYNAPSE_NEW_FILE_SHARE * b, ["learned from your work"])
    return sorted(ranked.values(), key=lambda r: (-r.score, r.file))[:len(files)]
