"""Member-by-member JSON: the same bytes as one json.dumps, the same values as json.loads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from neuralmind.index.jsonstream import members, object_bytes

DOCS = {"a.py::f": {"send": 2, "réponse": 1}, "b.py": {}, 'q"uote': {"x": 3}}


def read(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in members(text, stream=frozenset({"docs"})):
        out[key] = dict(value) if key == "docs" and not isinstance(value, (dict, list)) else value
    return out


@pytest.mark.parametrize("docs", [DOCS, {}])
def test_written_bytes_equal_one_dumps_and_read_back(docs: dict[str, Any]) -> None:
    data = object_bytes('{"format":1,"docs":', docs.items())
    whole = {"format": 1, "docs": docs}
    assert data == json.dumps(whole, separators=(",", ":"), ensure_ascii=False).encode()
    assert read(data.decode()) == whole


def test_any_layout_reads_and_malformed_text_raises() -> None:
    whole = {"format": 1, "docs": DOCS, "tail": [1, None]}
    assert read(json.dumps(whole, indent=2)) == whole
    for bad in ['{"format": 1', '{"a" 1}', "[1]", '{"a": 1,}', "{1: 2}", "", '{"docs": {"a": 1']:
        with pytest.raises(ValueError):
            read(bad)
