"""Files that usually change with the change set but were not touched.

For a changed file c and a partner f, a source counts `of` events of c (commits, editing
sessions) and `together` of them that also touched f. The confidence that f belongs in this
change too is together / (of + 1): the frequency with the pending change counted as one more
event of c that has not touched f (yet). It is the posterior mean under a Beta(0, 1) prior,
so one co-change is never enough on its own (1 of 1 gives 0.5); a file is warned about when
its best confidence over the changed files and sources reaches the threshold, which is the
precision wanted (REVIEW_MIN_CONFIDENCE; benchmarks/review_bench.py measures it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from neuralmind.review.cochange import CoChange


@dataclass(frozen=True, slots=True)
class Because:
    """One reason to expect a file in the change."""

    changed_file: str
    together: int
    of: int
    source: str              # "commits" or "sessions"

    @property
    def confidence(self) -> float:
        return confidence(self.together, self.of)

    def to_json(self) -> dict[str, Any]:
        return {"changed_file": self.changed_file, "together": self.together, "of": self.of,
                "source": self.source}


@dataclass(frozen=True, slots=True)
class Missing:
    """A file the change probably misses, with its reasons, best first."""

    file: str
    because: tuple[Because, ...]
    confidence: float

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "because": [b.to_json() for b in self.because],
                "confidence": round(self.confidence, 3)}


def confidence(together: int, of: int) -> float:
    """Estimated chance that a partner changes too: together / (of + 1) (module docstring)."""
    return together / (of + 1) if of > 0 else 0.0


def missing_files(changed: Iterable[str], sources: Sequence[CoChange], min_confidence: float,
                  exists: Callable[[str], bool], limit: int, max_reasons: int) -> list[Missing]:
    """Untouched files whose confidence reaches `min_confidence`, best first (at most `limit`;
    ties go to more co-changes, then to the file changed more often), each with up to
    `max_reasons` reasons that reach it on their own."""
    change = set(changed)
    reasons: dict[str, list[Because]] = {}
    for c in sorted(change):
        for src in sources:
            of, partners = src.counts(c)
            for f, together in partners.items():
                if f in change or confidence(together, of) < min_confidence:
                    continue
                reasons.setdefault(f, []).append(Because(c, together, of, src.source))
    out: list[Missing] = []
    for f, found in reasons.items():
        if not exists(f):
            continue
        found.sort(key=lambda b: (-b.confidence, -b.together, b.changed_file, b.source))
        out.append(Missing(f, tuple(found[:max_reasons]), found[0].confidence))
    popularity = {m.file: sum(src.events(m.file) for src in sources) for m in out}
    out.sort(key=lambda m: (-m.confidence, -m.because[0].together, -popularity[m.file], m.file))
    return out[:limit]
