"""Applying an editor's incremental text changes to a buffer's text.

A change is `(range, text)`: `range` = (start line, start character, end line, end
character) in the positions the client and server agreed on (`utf-16` by default, or
`utf-8`/`utf-32`), or None for the whole document. Changes apply in order, each to the
result of the ones before (the LSP rule). Lines end at `\\n`, `\\r\\n` or `\\r` only
(Python's `splitlines` also breaks at form feeds and other separators, which would
shift every position after one). The text is held as a list of lines while the changes
apply, so a burst of keystrokes in a large file costs the lines it touches, not a copy
of the whole text per keystroke.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

Range = tuple[int, int, int, int]
TextChange = tuple[Range | None, str]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def split_lines(text: str) -> list[str]:
    """The lines of `text`, each with its line ending (the last one may have none)."""
    return _LINE.findall(text)


def _index(line: str, character: int, encoding: str) -> int:
    """The str index in `line` (without its ending) of a position `character` units in."""
    if encoding == "utf-32" or line.isascii():
        return min(character, len(line))
    units = 0
    for i, ch in enumerate(line):
        if units >= character:
            return i
        units += len(ch.encode("utf-8")) if encoding == "utf-8" else (2 if ord(ch) > 0xFFFF else 1)
    return len(line)


def _body(line: str) -> str:
    return line.rstrip("\r\n")


def apply_changes(text: str, changes: Iterable[TextChange], encoding: str = "utf-16") -> str:
    """`text` after `changes`; positions past the end are clamped to it (as editors do)."""
    lines = split_lines(text)
    for rng, new in changes:
        if rng is None:
            lines = split_lines(new)
            continue
        sl, sc, el, ec = rng
        if (el, ec) < (sl, sc):
            sl, sc, el, ec = el, ec, sl, sc
        sl, el = max(0, sl), max(0, el)
        if sl > len(lines):                 # past the end: the end
            sl, sc = len(lines), 0
        if el > len(lines):
            el, ec = len(lines), 0
        first = lines[sl] if sl < len(lines) else ""
        last = lines[el] if el < len(lines) else ""
        head = _body(first)[:_index(_body(first), sc, encoding)] if sl < len(lines) else ""
        last_body = _body(last)
        tail = last_body[_index(last_body, ec, encoding):] + last[len(last_body):]
        segment = split_lines(head + new + tail)
        if sl >= len(lines) and lines and not lines[-1].endswith(("\n", "\r")):
            # an insertion after a last line with no ending: joins that line
            sl = len(lines) - 1
            segment = split_lines(lines[sl] + new + tail)
        if sl > 0 and segment and lines[sl - 1].endswith("\r") and segment[0].startswith("\n"):
            sl -= 1             # a lone CR before an inserted LF: one CRLF line break now
            segment = split_lines(lines[sl] + "".join(segment))
        lines[sl:el + 1] = segment
    return "".join(lines)
