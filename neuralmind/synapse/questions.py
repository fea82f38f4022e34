"""The question memory: which files questions led to, and which their answers returned unused.

A question is remembered as its word tokens with the files it led to (edited after it, or
kept after its answer) and the files its answer returned that the work after it did not use
(`questions` table, written by SynapseStore.record_question). A new question is scored
against the stored ones by set cosine of their tokens: stored questions sharing words lend
their files that similarity, and take UNUSED_WEIGHT of it off their unused files.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable

_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset({
    "the", "and", "for", "with", "from", "that", "this", "into", "when", "what", "how", "why",
    "are", "was", "add", "use", "not", "can", "should", "does", "fix", "make", "get", "set",
})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def question_tokens(text: str) -> list[str]:
    """Lower-case word tokens of 3+ characters (identifiers split on `_`, `.` and camelCase),
    stopwords removed."""
    words = _TOKEN.findall(_CAMEL.sub(" ", text).lower())
    return sorted({t for t in words if len(t) >= 3 and t not in _STOP})


def question_scores(query: str, rows: Iterable[tuple[str, str, str]],
                    unused_weight: float) -> dict[str, float]:
    """Per file, what stored questions (rows of tokens, files JSON, unused JSON) sharing words
    with `query` say: + similarity for each that led to the file, - `unused_weight` times it
    for each whose answer returned it unused."""
    q = set(question_tokens(query))
    if not q:
        return {}
    scores: dict[str, float] = defaultdict(float)
    for tokens, files, unused in rows:
        t = set(tokens.split())
        common = len(q & t)
        if not common or not t:
            continue
        sim = common / math.sqrt(len(q) * len(t))
        for f in json.loads(files):
            scores[f] += sim
        for f in json.loads(unused):
            scores[f] -= unused_weight * sim
    return dict(scores)
