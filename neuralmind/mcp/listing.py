"""The tool list as agents receive it: lean, because it is paid for on every turn.

Measured in o200k tokens, the SDK's own listing of our eleven tools cost 7,344 tokens,
60 % of it output schemas and most of the rest JSON-schema boilerplate. Listed here:
the name, the first paragraph of the docstring (one sentence; the rest of the
docstring is for developers), the input schema without titles, null-unions, null
defaults and length limits (the server still validates every argument against the
full model and answers `invalid_argument` naming the limit), and the annotations that
say whether a tool writes. No output schema: the structured results keep the shapes
of `schemas.py` (tested there), which clients never need to validate a call.
"""

from __future__ import annotations

import json
from typing import Any

# JSON-schema keys an agent does not need to call a tool correctly.
DROPPED_KEYS = frozenset({"title", "maxLength", "minLength", "maxItems", "minItems"})
NULL = {"type": "null"}


def first_paragraph(doc: str) -> str:
    """A docstring's first paragraph on one line."""
    return " ".join(doc.strip().split("\n\n")[0].split())


def lean_schema(schema: Any) -> Any:
    """`schema` without what DROPPED_KEYS names, `X | None` unions as `X`, null defaults."""
    if isinstance(schema, list):
        return [lean_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    union = schema.get("anyOf")
    if isinstance(union, list) and len(union) == 2 and NULL in union:
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        schema = {**next(s for s in union if s != NULL), **rest}
    return {k: lean_schema(v) for k, v in schema.items()
            if k not in DROPPED_KEYS and not (k == "default" and v is None)}


def lean_annotations(read_only: bool) -> dict[str, bool]:
    """readOnlyHint, and for a writing tool that it destroys nothing (the spec's default
    for destructiveHint is true); ToolAnnotations keyword arguments."""
    return {"read_only_hint": True} if read_only else {"read_only_hint": False,
                                                       "destructive_hint": False}


def tool_tokens(tools: list[dict[str, Any]], instructions: str) -> dict[str, Any]:
    """o200k tokens of each listed tool (its wire JSON, as `tools/list` sends it) and of
    the instructions: what an agent pays for this server on every turn."""
    # the budget tokenizer (~0.3 s), for this measurement only
    from neuralmind.context.tokens import count_tokens

    each = {t["name"]: count_tokens(json.dumps(t)) for t in tools}
    return {"tools": each, "tools_total": sum(each.values()),
            "instructions": count_tokens(instructions),
            "total": sum(each.values()) + count_tokens(instructions)}
