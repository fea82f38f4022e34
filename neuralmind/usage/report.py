"""The savings report: answers served, tokens served against the whole codebase's, and how
well answers were used, per day (UTC), per kind of answer and overall.

- `tokens_served`: o200k tokens of the answers (the context packs; a search or recall
  answer counts its compact listing);
- `codebase_tokens`: for each answer, the o200k tokens of every indexed file at the time
  (what reading the whole codebase instead would have cost), summed; `tokens_saved` is the
  difference and `ratio` how many times fewer tokens the answers cost;
- `files_used_per_answer`: returned files opened or changed in the answer's window, per
  settled answer that work followed (an answer nothing followed says nothing about use);
- `precision_at_5`: of those answers, the share of their top five files (or fewer, when
  they returned fewer) that were used.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from neuralmind.config import USE_UNUSED_TOP


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).date().isoformat()


def _figures(answers: list[dict[str, Any]], codebase_now: int | None) -> dict[str, Any]:
    served = sum(a["tokens"] for a in answers)
    replaced = sum(a["codebase_tokens"] if a["codebase_tokens"] is not None
                   else (codebase_now or 0) for a in answers)
    acted = [a for a in answers if a["settled"] and a["returned"] and (a["touched"] or a["used"])]
    used = [a["used"] for a in acted]
    precision = [a["used_top"] / min(USE_UNUSED_TOP, a["returned"]) for a in acted]
    return {
        "answers": len(answers),
        "by_kind": dict(sorted(_count(a["kind"] for a in answers).items())),
        "tokens_served": served,
        "codebase_tokens": replaced,
        "tokens_saved": replaced - served,
        "ratio": round(replaced / served, 1) if served else None,
        "settled": sum(1 for a in answers if a["settled"]),
        "acted_on": len(acted),
        "files_used_per_answer": round(statistics.fmean(used), 3) if used else None,
        "precision_at_5": round(statistics.fmean(precision), 3) if precision else None,
    }


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for v in values:
        out[v] += 1
    return out


def savings(answers: list[dict[str, Any]], codebase_now: int | None) -> dict[str, Any]:
    """Per day (oldest first), per kind of answer (context, search, recall, hook) and
    overall, from `UsageStore.answers()`; `codebase_now` stands in for answers recorded
    before the codebase was counted. The one savings report: `neuralmind savings`, the
    status and the observatory's Savings page all show it."""
    by_day: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for a in answers:
        by_day[_day(a["ts"])].append(a)
        by_kind[a["kind"]].append(a)
    return {
        "codebase_tokens_now": codebase_now,
        "days": [{"day": day, **_figures(rows, codebase_now)}
                 for day, rows in sorted(by_day.items())],
        "kinds": {kind: _figures(rows, codebase_now) for kind, rows in sorted(by_kind.items())},
        "overall": _figures(answers, codebase_now),
    }
