"""L3's line search on a whole file: the lines found per asked token are the lines whose
own tokens hold it, stems whose text differs from the token included (entries -> entry)."""

from __future__ import annotations

from pathlib import Path

import neuralmind
from neuralmind.context.layers import FileLines, relevant_lines
from neuralmind.graph.model import Node
from neuralmind.index.tokens import code_tokens

TEXT = '''"""Cookies and their entries."""
import os.path


def copy_entries(entries):
    """Copied entries, one per cookie; a Cookie jar keeps them."""
    for entry in entries:
        running = entry.copy()  # copied again
    return getCookieEntry(os.path.join("a", "b"), 302)


class RunningJob:
    def runs(self):
        return "Ünïcode ẞ text with entry_count and CopyEntries"
'''


def _tokenised(lines: list[str]) -> dict[str, list[int]]:
    """Every line tokenised: the reference the search must agree with."""
    index: dict[str, list[int]] = {}
    for ln, text in enumerate(lines, 1):
        for t in set(code_tokens(text)):
            index.setdefault(t, []).append(ln)
    return index


def test_lines_with_agrees_with_tokenising_every_line() -> None:
    lines = TEXT.splitlines()
    index = _tokenised(lines)
    fl = FileLines(lines)
    for token in ("entry", "cooky", "copy", "run", "getcookieentry", "os.path.join", "302"):
        assert token in index                      # the stems and whole names are there
    for token, found in index.items():
        assert fl.lines_with(token) == found, token
    assert fl.lines_with("absent") == []


def test_lines_with_on_real_source_files() -> None:
    package = Path(neuralmind.__file__).parent
    for path in sorted(package.rglob("*.py"))[:40]:
        lines = path.read_text(encoding="utf-8").splitlines()
        fl = FileLines(lines)
        for token, found in _tokenised(lines).items():
            assert fl.lines_with(token) == found, (path, token)


def test_relevant_lines_same_for_a_file_and_a_buffer() -> None:
    """A FileLines (a file on disk) and a plain list (an unsaved buffer) pick the same lines."""
    lines = TEXT.splitlines()
    node = Node("f", "file", "f.py", "", "f.py", 1, len(lines), "python")
    for question in ("copied cookie entries", "running jobs", "entry count", "unicode text"):
        words = set(code_tokens(question))
        assert relevant_lines(FileLines(lines), node, words, 6) == relevant_lines(
            lines, node, words, 6), question


def test_lines_with_a_span_is_the_whole_files_lines_within_it() -> None:
    """A symbol's span is searched alone (first asks scan only it); before and after the
    whole file's lines are known, a span gives the same lines as filtering them."""
    lines = TEXT.splitlines()
    index = _tokenised(lines)
    spans = [(1, len(lines)), (2, 5), (5, 9), (9, 9), (6, 4), (0, 99), (12, len(lines) + 3)]
    for token, found in index.items():
        fresh, whole_first = FileLines(lines), FileLines(lines)
        assert whole_first.lines_with(token) == found
        for a, b in spans:
            want = [ln for ln in found if a <= ln <= b]
            assert fresh.lines_with(token, a, b) == want, (token, a, b)
            assert whole_first.lines_with(token, a, b) == want, (token, a, b)
        assert fresh.lines_with(token) == found
