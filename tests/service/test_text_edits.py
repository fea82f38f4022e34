"""Incremental edits applied as an LSP client means them (utf-16 positions by default),
checked against a reference that converts every position to an offset in the whole text."""

from __future__ import annotations

import random

import pytest

from neuralmind.engine.edits import apply_changes, split_lines


def _offset(text: str, line: int, character: int, encoding: str) -> int:
    """Reference: walk the whole text (slow and obvious)."""
    lines = split_lines(text)
    if line >= len(lines):
        return len(text)
    start = sum(len(x) for x in lines[:line])
    body = lines[line].rstrip("\r\n")
    units = 0
    for i, ch in enumerate(body):
        if units >= character:
            return start + i
        units += {"utf-8": len(ch.encode()), "utf-16": 2 if ord(ch) > 0xFFFF else 1,
                  "utf-32": 1}[encoding]
    return start + len(body)


def _reference(text: str, changes: list, encoding: str) -> str:
    for rng, new in changes:
        if rng is None:
            text = new
            continue
        a = _offset(text, rng[0], rng[1], encoding)
        b = _offset(text, rng[2], rng[3], encoding)
        text = text[:min(a, b)] + new + text[max(a, b):]
    return text


def test_simple_edits() -> None:
    assert apply_changes("abc", [((0, 3, 0, 3), "\nx")]) == "abc\nx"
    assert apply_changes("abc\n", [((1, 0, 1, 0), "x")]) == "abc\nx"
    assert apply_changes("ab\ncd\n", [((0, 1, 1, 1), "")]) == "ad\n"
    assert apply_changes("ab\r\ncd", [((0, 2, 1, 0), "")]) == "abcd"
    assert apply_changes("", [((0, 0, 0, 0), "x")]) == "x"
    assert apply_changes("old", [(None, "new\ntext"), ((1, 0, 1, 4), "T")]) == "new\nT"
    # an emoji is two utf-16 units, four utf-8 bytes, one utf-32 unit
    assert apply_changes("a😀b", [((0, 3, 0, 4), "B")]) == "a😀B"
    assert apply_changes("a😀b", [((0, 5, 0, 6), "B")], "utf-8") == "a😀B"
    assert apply_changes("a😀b", [((0, 2, 0, 3), "B")], "utf-32") == "a😀B"
    # a lone CR then an inserted LF make one line break
    assert apply_changes("a\rb", [((1, 0, 1, 0), "\n"), ((1, 0, 1, 1), "B")]) == "a\r\nB"
    # a form feed is not a line break for LSP (Python's splitlines says it is)
    assert apply_changes("a\fb\nc", [((1, 0, 1, 1), "C")]) == "a\fb\nC"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_random_edit_bursts_match_the_reference(encoding: str) -> None:
    rng = random.Random(17)
    alphabet = ["a", "b", " ", "\n", "\r\n", "\r", "é", "😀", "\t", "x"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        changes = []
        current = text
        for _ in range(rng.randint(1, 6)):
            lines = split_lines(current) or [""]
            sl = rng.randint(0, len(lines))
            el = rng.randint(sl, min(len(lines), sl + 2))
            sc, ec = rng.randint(0, 6), rng.randint(0, 6)
            if (el, ec) < (sl, sc):
                ec = sc
            new = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5)))
            changes.append(((sl, sc, el, ec), new))
            current = _reference(current, [changes[-1]], encoding)
        assert apply_changes(text, changes, encoding) == _reference(text, changes, encoding)
