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


def test_span_searches_follow_each_span_and_length_changing_lowercase() -> None:
    """One FileLines asked span after span (the last span's lowercased text is kept): spans
    that share their first line or their last give each their own lines, also after a line
    whose lowercase is longer than itself ('İ' -> 'i̇')."""
    lines = ["İİİ entries = cookie_entries()  # İ", *TEXT.splitlines(), "İ entry", "x = 1"]
    index = _tokenised(lines)
    n = len(lines)
    spans = [(2, n), (2, 6), (2, 12), (5, 12), (9, 12), (1, n), (1, 3), (n - 1, n), (2, 6)]
    fl = FileLines(lines)
    for token, found in sorted(index.items()):
        for a, b in spans:
            assert fl.lines_with(token, a, b) == [ln for ln in found if a <= ln <= b], (
                token, a, b)


def test_a_changed_file_is_searched_again(tmp_path: Path) -> None:
    """L3 keeps a file's lines and their searches per path and modification time: the same
    question after the file changed shows the changed lines (real files, workspace, model)."""
    import os

    from sample_workspace import built_workspace

    ws = built_workspace(tmp_path, {"billing/invoice.py": '''
        """Invoices and their totals."""


        def invoice_total(items):
            """The total of an invoice's items."""
            subtotal = sum(item.amount for item in items)
            rounded = round(subtotal, 2)
            return rounded
    '''})
    question = "invoice total discount"
    assert "discount" not in ws.query(question).context
    path = tmp_path / "billing/invoice.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("rounded = round(subtotal, 2)",
                                 "rounded = round(subtotal * discount_rate, 2)"),
                    encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    assert "rounded = round(subtotal * discount_rate, 2)" in ws.query(question).context
