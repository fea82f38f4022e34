"""Member-by-member JSON: the same bytes as one json.dumps, the same values as json.loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from neuralmind.index import jsonstream
from neuralmind.index.jsonstream import members, object_bytes

DOCS = {"a.py::f": {"send": 2, "réponse": 1}, "b.py": {}, 'q"uote': {"x": 3}}


def read(text: str | list[str]) -> dict[str, Any]:
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


def test_write_object_streams_the_same_bytes_in_pieces(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonstream, "CHUNK_CHARS", 8)       # many pieces
    items = [(f"n{i}", {"w": i}) for i in range(50)]
    path = tmp_path / "sub" / "index.json"
    jsonstream.write_object(path, '{"format":1,"docs":', items)
    assert path.read_bytes() == object_bytes('{"format":1,"docs":', items)
    assert read(path.read_text())["docs"] == dict(items)
    assert [p.name for p in path.parent.iterdir()] == ["index.json"]    # no temp file left


def test_read_slices_equal_one_decode(tmp_path: Path) -> None:
    """Slices cut through multi-byte characters; the incremental decoder joins them."""
    from neuralmind.index.jsonstream import read_slices

    text = "".join(f"{i} naïve 日本語 🙂 ·\n" for i in range(3000))
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    for size in (1, 7, 4096, 1 << 20):
        assert "".join(read_slices(path, slice_bytes=size)) == text
    path.write_bytes(text.encode("utf-8")[:-2])      # cut inside the last "·" (2 bytes)
    with pytest.raises(UnicodeDecodeError):
        "".join(read_slices(path, slice_bytes=64))
    with pytest.raises(FileNotFoundError):           # at the call, not while iterating
        read_slices(tmp_path / "absent.json")


def slices(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64, 10_000])
def test_members_read_from_slices_equal_one_loads(size: int) -> None:
    """Every value may be cut anywhere: a number at a slice's end must not be read short
    (12 of 12345), nor a key, a literal or a nested list."""
    whole = {"format": 12345, "docs": {**DOCS, "n": {"k": 1.5e-3}}, "flag": True,
             "tail": [1, None, "x" * 40, [2, 3]], "last": -7}
    for layout in (json.dumps(whole), json.dumps(whole, indent=2)):
        assert read(slices(layout, size)) == whole


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_malformed_slices_raise(size: int) -> None:
    for bad in ['{"format": 1', '{"a" 1}', "[1]", '{"a": 1,}', "{1: 2}", "", '{"docs": {"a": 1',
                '{"a": 12', '{"a": tru}', '{"a": "open}']:
        with pytest.raises(ValueError):
            read(slices(bad, size))


def test_a_streamed_object_left_unread_is_skipped() -> None:
    text = json.dumps({"docs": {"a": {"x": 1}, "b": {}}, "after": 2})
    assert [k for k, _ in members(slices(text, 3), stream=frozenset({"docs"}))] == ["docs", "after"]
