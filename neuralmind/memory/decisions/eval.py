"""The decision-search eval: questions with known answers, scored per search mode.

It seeds a scratch store in a temporary directory from the query file and never
opens the project's own store. A mode that cannot run (no model on disk) is
reported as not run; a hybrid search that fell back to keyword results is never
counted as hybrid. `keyword-like` is keyword search forced onto the LIKE
fallback, so the no-FTS5 path is measured too.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuralmind.errors import InvalidArgument
from neuralmind.memory.decisions.record import Decision
from neuralmind.memory.decisions.store import DecisionStore
from neuralmind.memory.search import SemanticUnavailable

MODES = ("keyword", "semantic", "hybrid")
ALL_MODES = ("keyword", "keyword-like", "semantic", "hybrid")
SETS = ("questions", "paraphrases")


@dataclass
class SetScore:
    recalls: list[float] = field(default_factory=list)
    reciprocal_ranks: list[float] = field(default_factory=list)
    empty: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def stats(xs: list[float]) -> dict[str, float]:
            return {"mean": round(sum(xs) / len(xs), 3) if xs else 0.0,
                    "min": round(min(xs), 3) if xs else 0.0, "max": round(max(xs), 3) if xs else 0.0}
        return {"n": len(self.recalls), "recall": stats(self.recalls), "mrr": stats(self.reciprocal_ranks),
                "returned_nothing": self.empty, "misses": self.misses}


@dataclass
class ModeScore:
    mode: str
    ran: bool = True
    reason: str = ""
    sets: dict[str, SetScore] = field(default_factory=dict)
    titles_first: int = 0
    titles_total: int = 0
    title_misses: list[dict[str, Any]] = field(default_factory=list)
    unanswerable_returning: int = 0
    unanswerable_total: int = 0
    unanswerable_hits: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        if not self.ran:
            return {"mode": self.mode, "ran": False, "reason": self.reason}
        return {"mode": self.mode, "ran": True, **{k: v.to_json() for k, v in self.sets.items()},
                "exact_titles": {"ranked_first": self.titles_first, "total": self.titles_total,
                                 "misses": self.title_misses},
                "unanswerable": {"returning_results": self.unanswerable_returning,
                                 "total": self.unanswerable_total, "hits": self.unanswerable_hits}}


@dataclass
class EvalReport:
    limit: int
    decisions: int
    modes: list[ModeScore]

    def to_json(self) -> dict[str, Any]:
        return {"limit": self.limit, "decisions": self.decisions, "modes": [m.to_json() for m in self.modes]}

    def mode(self, name: str) -> ModeScore:
        return next(m for m in self.modes if m.mode == name)

    def to_markdown(self) -> str:
        ran = [m for m in self.modes if m.ran]
        lines = [f"# Decision search eval ({self.decisions} decisions, limit {self.limit})", ""]
        lines.append("| Measure | " + " | ".join(m.mode for m in ran) + " |")
        lines.append("|---|" + "---|" * len(ran))

        def stat(m: ModeScore, s: str, key: str) -> str:
            st = m.sets[s].to_json()[key]
            return f"{st['mean']:.2f} ({st['min']:.2f}–{st['max']:.2f})"
        for s in SETS:
            n = len(ran[0].sets[s].recalls) if ran else 0
            lines.append(f"| Recall@{self.limit} on {n} {s}, mean (range) | "
                         + " | ".join(stat(m, s, "recall") for m in ran) + " |")
            lines.append(f"| MRR on {n} {s}, mean (range) | " + " | ".join(stat(m, s, "mrr") for m in ran) + " |")
        lines.append("| Paraphrases that return nothing | "
                     + " | ".join(f"{m.sets['paraphrases'].empty} of {len(m.sets['paraphrases'].recalls)}"
                                  for m in ran) + " |")
        lines.append("| Exact titles ranked first | "
                     + " | ".join(f"{m.titles_first} of {m.titles_total}" for m in ran) + " |")
        lines.append("| Unanswerable questions returning decisions | "
                     + " | ".join(f"{m.unanswerable_returning} of {m.unanswerable_total}" for m in ran) + " |")
        for m in self.modes:
            if not m.ran:
                lines += ["", f"**{m.mode}: not run** — {m.reason}"]
        for m in ran:
            misses = [(s, x) for s in SETS for x in m.sets[s].misses]
            if not misses and not m.title_misses:
                continue
            lines += ["", f"## Misses: {m.mode}", ""]
            for s, x in misses:
                lines.append(f"- [{s}] {x['q']!r}: expected {', '.join(x['expected'])}; "
                             f"got {', '.join(x['got']) or 'nothing'}")
            for x in m.title_misses:
                lines.append(f"- [title] {x['q']!r}: got {', '.join(x['got']) or 'nothing'}")
        return "\n".join(lines) + "\n"


def load_queries(path: Path) -> dict[str, Any]:
    """The query file; ValueError naming what is wrong with it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InvalidArgument(f"cannot read query file {path}: {e}") from None
    keys = {d.get("key") for d in data.get("decisions", [])}
    if not keys:
        raise InvalidArgument(f"{path}: no decisions")
    for s in SETS:
        for q in data.get(s, []):
            unknown = [a for a in q.get("answers", []) if a not in keys]
            if not q.get("answers") or unknown:
                raise InvalidArgument(f"{path}: question {q.get('q')!r} has unknown or no answers {unknown}")
    return data


def seed(store: DecisionStore, data: dict[str, Any]) -> dict[str, str]:
    """Insert the fixture's decisions; returns decision id -> fixture key."""
    keys: dict[str, str] = {}
    for i, d in enumerate(data["decisions"]):
        stamp = f"2026-01-01T00:00:{i:02d}+00:00"
        rec = Decision(id=f"eval-{d['key']}", title=d["title"], rationale=d["rationale"],
                       decision_type=d.get("type", "architecture"), status=d.get("status", "ACTIVE"),
                       files_affected=d.get("files", []), tags=d.get("tags", []),
                       rejected_alternatives=d.get("rejected", []), author="eval-harness",
                       created_at=stamp, updated_at=stamp, anchored_at=stamp)
        store.insert(rec)
        keys[rec.id] = d["key"]
    return keys


def run_eval(data: dict[str, Any], modes: tuple[str, ...] = ALL_MODES, limit: int = 5) -> EvalReport:
    """Score every requested mode on a scratch store seeded from `data`."""
    with tempfile.TemporaryDirectory(prefix="neuralmind-eval-") as tmp:
        fts_store = DecisionStore(Path(tmp) / "fts", fts=True)
        like_store = DecisionStore(Path(tmp) / "like", fts=False)
        keys = seed(fts_store, data)
        if "keyword-like" in modes:
            seed(like_store, data)
        report = EvalReport(limit, len(data["decisions"]), [])
        for mode in modes:
            store = like_store if mode == "keyword-like" else fts_store
            report.modes.append(_score_mode(store, keys, data, mode.removesuffix("-like"), mode, limit))
        return report


def _score_mode(store: DecisionStore, keys: dict[str, str], data: dict[str, Any], mode: str,
                label: str, limit: int) -> ModeScore:
    score = ModeScore(label)

    def ask(q: str) -> list[str] | None:
        try:
            result = store.search(q, mode=mode, limit=limit)
        except SemanticUnavailable as e:
            score.ran, score.reason = False, str(e)
            return None
        if result.mode != mode:
            score.ran, score.reason = False, result.notice or f"{result.mode} ran instead"
            return None
        return [keys[d.id] for d in result.records]

    for s in SETS:
        ss = score.sets[s] = SetScore()
        for item in data.get(s, []):
            got = ask(item["q"])
            if got is None:
                return score
            expected = item["answers"]
            ss.recalls.append(sum(a in got for a in expected) / len(expected))
            rank = next((i for i, k in enumerate(got, 1) if k in expected), None)
            ss.reciprocal_ranks.append(1.0 / rank if rank else 0.0)
            ss.empty += not got
            if rank != 1:
                ss.misses.append({"q": item["q"], "expected": expected, "got": got, "rank": rank})
    for d in data["decisions"]:
        if d.get("status", "ACTIVE") != "ACTIVE":
            continue
        got = ask(d["title"]) or []
        score.titles_total += 1
        if got[:1] == [d["key"]]:
            score.titles_first += 1
        else:
            score.title_misses.append({"q": d["title"], "expected": [d["key"]], "got": got})
    for item in data.get("unanswerable", []):
        got = ask(item["q"]) or []
        score.unanswerable_total += 1
        if got:
            score.unanswerable_returning += 1
            score.unanswerable_hits.append({"q": item["q"], "got": got})
    return score
