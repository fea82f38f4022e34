"""From a question to ranked nodes: hybrid search, then a bounded synapse boost.

The hybrid index (BM25 + vectors fused by RRF) proposes candidates; spreading
activation from the top hits' files over the learned synapse graph adds its own
candidates and a boost that is capped relative to the best hybrid score, so a
warm store reorders near-ties but never buries an exact match.
"""

from __future__ import annotations

import logging
from typing import Any

from neuralmind.config import QUESTION_PENALTY
from neuralmind.context.pack import RankedHit

log = logging.getLogger("neuralmind.context")

SEED_HITS = 5            # top hits whose files seed spreading activation
SYNAPSE_BOOST = 0.10     # max spread boost, as a fraction of the best hybrid score
SYNAPSE_NEW_FILE_SHARE = 0.5  # a file reached only through synapses scores at most this share
QUESTION_BOOST = 0.25    # max boost for files that earlier, similar questions led to


def rank(index: Any, graph: Any, question: str, k: int = 20, synapses: Any = None,
         ) -> tuple[list[RankedHit], str, str]:
    """Ranked hits for `question`, the search mode that ran, and any notice."""
    result = index.search(question, k=max(k, 20))
    hits = [RankedHit(graph.nodes[h.id], h.score, _reasons(h)) for h in result.hits if h.id in graph.nodes]
    if synapses is not None and hits:
        hits = _boost(hits, graph, synapses, question)
    return hits[:k], result.mode, result.notice


def _reasons(h: Any) -> dict[str, Any]:
    why: dict[str, Any] = {"fused": round(h.score, 5)}
    for attr in ("vector_rank", "bm25_rank"):
        value = getattr(h, attr, None)
        if value is not None:
            why[attr] = value
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


def _boost(hits: list[RankedHit], graph: Any, synapses: Any, question: str) -> list[RankedHit]:
    seeds = list(dict.fromkeys(h.node.file for h in hits[:SEED_HITS]))
    try:
        spread = dict(synapses.spread(seeds, top_k=12, namespaces=_learned_namespaces(synapses)))
        said = synapses.question_scores(question)
    except Exception as e:  # learning paths fail open
        log.warning("synapse recall failed, ranking without it: %s", e)
        return hits
    asked = _normalised(dict(sorted(((f, s) for f, s in said.items() if s > 0),
                                    key=lambda kv: (-kv[1], kv[0]))[:10]))
    unused = _normalised({f: -s for f, s in said.items() if s < 0})
    if not spread and not asked and not unused:
        return hits
    best = hits[0].score
    boost = {f: SYNAPSE_BOOST * best * min(1.0, e) for f, e in spread.items()}
    for f, p in asked.items():
        boost[f] = boost.get(f, 0.0) + QUESTION_BOOST * best * p
    for f, p in unused.items():     # returned before, not used: down, at most QUESTION_PENALTY
        boost[f] = boost.get(f, 0.0) - QUESTION_PENALTY * best * p
    files_in_hits = {h.node.file for h in hits}
    for h in hits:
        b = boost.get(h.node.file, 0.0)
        if b:
            h.score += b
            h.why["synapse"] = round(b, 5)
    for file_id, b in sorted(boost.items()):
        if b > 0 and file_id not in files_in_hits and file_id in graph.nodes:
            hits.append(RankedHit(graph.nodes[file_id], SYNAPSE_NEW_FILE_SHARE * b,
                                  {"synapse_only": round(b, 5)}))
    hits.sort(key=lambda h: (-h.score, h.node.id))
    return hits
