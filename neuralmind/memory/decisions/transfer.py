"""Export and import of decisions as JSON or Markdown; import is idempotent by id.

The Markdown export is for people, but each decision carries its full record in
an HTML comment so the same file imports back without loss.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from neuralmind.errors import InvalidArgument
from neuralmind.memory.decisions.record import Decision, clean_list, normalise_status

if TYPE_CHECKING:
    from neuralmind.memory.decisions.db import DecisionDB

FORMATS = ("json", "md")
_MD_RECORD = re.compile(r"<!-- neuralmind-decision (\{.*?\}) -->", re.S)


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)      # id already present
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"imported": len(self.imported), "skipped": len(self.skipped), "errors": self.errors,
                "imported_ids": self.imported}


def export_text(store: DecisionDB, fmt: str = "json") -> str:
    decisions = store.decisions("ALL")
    if fmt == "json":
        return json.dumps([d.to_json() for d in decisions], indent=2, ensure_ascii=False) + "\n"
    if fmt != "md":
        raise InvalidArgument(f"unknown format {fmt!r} (expected json or md)")
    lines = ["# NeuralMind decisions", "", f"{len(decisions)} decision(s).", ""]
    for d in decisions:
        lines += [f"## {d.title}", "",
                  f"- **id:** `{d.id}`", f"- **status:** {d.status}", f"- **type:** {d.decision_type}",
                  f"- **recorded:** {d.created_at[:19]} by {d.author or 'unknown'}"
                  + (f" at commit `{d.commit_sha[:12]}`" if d.commit_sha else ""),
                  f"- **confidence:** {d.confidence:.2f}"]
        for label, values in (("files", d.files_affected), ("symbols", d.symbols_affected),
                              ("tags", d.tags), ("depends on", d.depends_on)):
            if values:
                lines.append(f"- **{label}:** " + ", ".join(f"`{v}`" for v in values))
        lines += ["", d.rationale, ""]
        if d.rejected_alternatives:
            lines += ["Rejected alternatives:", *(f"- {r}" for r in d.rejected_alternatives), ""]
        if d.evidence:
            lines += ["Evidence:", *(f"- {e}" for e in d.evidence), ""]
        payload = json.dumps(d.to_json(), ensure_ascii=False).replace("-->", "--\\u003e")
        lines += [f"<!-- neuralmind-decision {payload} -->", ""]
    return "\n".join(lines)


def parse(text: str, fmt: str | None = None) -> list[dict[str, Any]]:
    """Raw records from an export; ValueError when the text is neither format."""
    fmt = fmt or ("json" if text.lstrip()[:1] in "[{" else "md")
    if fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InvalidArgument(f"not valid JSON: {e}") from None
        if isinstance(data, dict):
            data = data.get("decisions", data.get("records"))
        if not isinstance(data, list):
            raise InvalidArgument("expected a JSON list of decision records")
        return data
    if fmt != "md":
        raise InvalidArgument(f"unknown format {fmt!r} (expected json or md)")
    out = []
    for m in _MD_RECORD.finditer(text):
        try:
            out.append(json.loads(m.group(1)))
        except json.JSONDecodeError as e:
            raise InvalidArgument(f"damaged decision record in the Markdown: {e}") from None
    return out


def import_records(store: DecisionDB, records: list[Any]) -> ImportReport:
    """Insert records whose id is new; existing ids are skipped, bad records reported."""
    report = ImportReport()
    for i, raw in enumerate(records):
        try:
            d = _to_decision(raw)
        except (TypeError, ValueError) as e:
            report.errors.append(f"record {i + 1}: {e}")
            continue
        (report.imported if store.insert(d) else report.skipped).append(d.id)
    return report


def _to_decision(raw: Any) -> Decision:
    if not isinstance(raw, dict):
        raise InvalidArgument("not an object")
    for key in ("id", "title", "rationale"):
        if not str(raw.get(key) or "").strip():
            raise InvalidArgument(f"missing {key}")
    d = Decision.from_json(raw)
    d.status = normalise_status(d.status)
    for name in ("files_affected", "symbols_affected", "rejected_alternatives", "evidence", "tags",
                 "depends_on"):
        value = getattr(d, name)
        if not isinstance(value, list):
            raise InvalidArgument(f"{name} must be a list")
        setattr(d, name, clean_list(value))
    if not isinstance(d.fingerprints, dict):
        raise InvalidArgument("fingerprints must be an object")
    d.confidence = float(d.confidence)
    d.created_at = d.created_at or datetime.now(UTC).isoformat(timespec="microseconds")
    d.updated_at = d.updated_at or d.created_at
    return d
