"""Rendering of the L1 summary, L2 community expansion and L3 search layers.

Each renderer takes what it should show and a token budget, and returns text that
never exceeds that budget: items are added whole, in priority order, until the
next one would not fit.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from neuralmind.config import L3_SPANS_KEPT
from neuralmind.context.tokens import count_tokens
from neuralmind.graph.model import Node
from neuralmind.index.tokens import code_tokens, holds_token


@dataclass
class Piece:
    """One unit of a layer: a line or block, with the node it stands for (if any)."""

    text: str
    node_id: str = ""
    why: str = ""


def fill(header: str, pieces: Iterable[Piece], budget: int) -> tuple[str, list[Piece]]:
    """Header plus as many whole pieces as fit in `budget` tokens."""
    if budget <= 0:
        return "", []
    used = count_tokens(header) + 1
    if used > budget:
        return "", []
    out, kept = [header], []
    for p in pieces:
        n = count_tokens(p.text) + 1
        if used + n > budget:
            continue  # a smaller later piece may still fit
        out.append(p.text)
        kept.append(p)
        used += n
    if not kept:
        return "", []
    return "\n".join(out), kept


def first_line(text: str, limit: int = 160) -> str:
    s = " ".join(text.strip().split("\n\n")[0].split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def node_label(node: Node) -> str:
    return node.qualname or node.name


class FileLines(tuple[str, ...]):
    """A file's lines, with the lines holding each asked token found on first use and kept:
    L3 looks for the question's words in up to ten files per query, whole files included.
    Tokenising every line each time cost ~4 ms a piece; tokenising every line of the file
    once (a whole token -> lines index) cost ~8 ms a file, ~90 ms of a new question's
    answer on Django's 20k subset (its context p95 in the server), and its memory. Only
    the lines that contain the token as text are looked at (see `_text_key`), and in
    them only the words that do (`holds_token`): tokenising those lines whole was most
    of a new question's time on rich, and their token sets 3.3 MB of these caches
    (RSS9). A symbol's lines are searched within its own span: most hits are methods and
    classes in files far longer than they are (rich's first asks: 131 symbols spanning
    13k lines of files 124k lines long), and only the span is lowercased (`_span_text`):
    lowercasing the whole file and numbering its lines in Python, on the first search of
    any span in it, was most of L3's time on a new question's files (ASK11). A repeated
    question's words are a dict lookup."""

    _found: dict[str, list[int]] | None = None
    _spans: dict[tuple[str, int, int], list[int]] | None = None
    _span: tuple[int, int, str] | None = None

    def lines_with(self, token: str, first: int = 1, last: int | None = None) -> list[int]:
        """1-based numbers, ascending, of the lines from `first` to `last` (inclusive; the
        whole file by default) whose `code_tokens` include `token`."""
        n = len(self)
        first, last = max(1, first), n if last is None else min(last, n)
        if self._found is None:
            self._found, self._spans = {}, {}
        assert self._spans is not None
        whole = self._found.get(token)
        if whole is not None:
            if first == 1 and last == n:
                return whole
            return whole[bisect.bisect_left(whole, first):bisect.bisect_right(whole, last)]
        if first > last:
            return []
        span = (token, first, last)
        found = self._spans.get(span)
        if found is None:
            key = _text_key(token)
            found = [ln for ln in self._candidates(key, first, last)
                     if holds_token(self[ln - 1], token, key)]
            if first == 1 and last == n:
                self._found[token] = found
            else:
                if len(self._spans) >= L3_SPANS_KEPT:
                    self._spans.clear()
                self._spans[span] = found
        return found

    def _span_text(self, first: int, last: int) -> str:
        """Lines `first` to `last` lowercased, joined by newlines; the last span's is kept
        (`relevant_lines` asks for each of a question's words in the same span)."""
        kept = self._span
        if kept is not None and kept[0] == first and kept[1] == last:
            return kept[2]
        text = "\n".join(self[first - 1:last])
        # non-ASCII: line by line, as each line is searched (a Greek capital sigma
        # lowercases by the letters around it)
        text = text.lower() if text.isascii() else "\n".join(
            line.lower() for line in self[first - 1:last])
        self._span = (first, last, text)
        return text

    def _candidates(self, key: str, first: int, last: int) -> Iterable[int]:
        """Each line (1-based) from `first` to `last` whose lowercased text contains `key`,
        once, ascending."""
        if not key:
            yield from range(first, last + 1)
            return
        text = self._span_text(first, last)
        line, counted = first, 0         # the line at text[counted]
        pos = text.find(key)
        while pos >= 0:
            line += text.count("\n", counted, pos)
            yield line
            counted = text.find("\n", pos)
            if counted < 0:
                return
            pos = text.find(key, counted)


def _text_key(token: str) -> str:
    """Text every line yielding `token` contains, lowercased. A token is a lowercased piece
    of the line's text or, stemmed, a prefix of one, except that the -ies / -ie / -ied
    stems end in a "y" the text does not have (entries -> entry, cookie -> cooky, copied ->
    copy): for those the text holds the token without its last letter."""
    token = token.lower()
    return token[:-1] if token.endswith("y") else token


@functools.lru_cache(maxsize=256)
def _file_lines(path: str, mtime_ns: int) -> FileLines:
    try:
        return FileLines(Path(path).read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return FileLines()


def source_lines(root: Path, rel: str) -> Sequence[str]:
    p = root / rel
    try:
        mtime = p.stat().st_mtime_ns
    except OSError:
        return ()
    return _file_lines(str(p), mtime)


MAX_SCANNED_LINES = 400  # a huge class is scanned only this far for query matches
MAX_SCANNED_FILE_LINES = 5000  # a whole file standing for itself is scanned this far


@functools.lru_cache(maxsize=65536)
def _line_tokens(text: str) -> frozenset[str]:
    """A line's tokens, for lines outside a FileLines (an unsaved buffer's)."""
    return frozenset(code_tokens(text))


def relevant_lines(lines: Sequence[str], node: Node, query_tokens: set[str], max_lines: int) -> list[int]:
    """1-based line numbers of a node worth showing: its declaration, then query matches.

    Lines are scored by how many distinct query tokens they contain; the
    declaration line always comes first so the reader knows where they are.
    """
    start, end = max(1, node.start_line), min(len(lines), node.end_line)
    if node.kind == "file":
        end = len(lines)
    if start > end:
        return []
    chosen = [start]
    last = min(end, start + (MAX_SCANNED_FILE_LINES if node.kind == "file" else MAX_SCANNED_LINES))
    counts: dict[int, int] = {}
    if isinstance(lines, FileLines):
        for t in query_tokens:
            for ln in lines.lines_with(t, start + 1, last):
                counts[ln] = counts.get(ln, 0) + 1
    else:
        for ln in range(start + 1, last + 1):
            hits = len(query_tokens & _line_tokens(lines[ln - 1]))
            if hits:
                counts[ln] = hits
    scored = sorted((-n, ln) for ln, n in counts.items())
    chosen += [ln for _, ln in scored[: max_lines - 1]]
    if len(chosen) < min(max_lines, 3):  # nothing matched: show the opening lines
        chosen += [ln for ln in range(start + 1, min(end, start + 3) + 1) if lines[ln - 1].strip()]
    return sorted(set(chosen))[:max_lines]


def render_snippet(lines: Sequence[str], numbers: list[int]) -> str:
    """Selected lines, dedented together, with '…' where lines were left out."""
    if not numbers:
        return ""
    texts = [lines[n - 1].rstrip() for n in numbers]
    indent = min((len(t) - len(t.lstrip()) for t in texts if t.strip()), default=0)
    out, prev = [], None
    for n, t in zip(numbers, texts, strict=True):
        if prev is not None and n != prev + 1:
            out.append("…")
        out.append(t[indent:][:200])
        prev = n
    return "\n".join(out)


def query_token_set(question: str) -> set[str]:
    return set(code_tokens(question))


def bears_on(node: Node, words: set[str]) -> bool:
    """Whether a symbol's name, signature or docstring shares a word with the question
    (stopwords and change words like "fix" never count: `code_tokens` drops the former,
    and a word shared by most symbols says nothing)."""
    if not words:
        return False
    own = _line_tokens(" ".join((node.name, node.signature, first_line(node.docstring, 200))))
    return bool(words & own - _WEAK_WORDS)


_WEAK_WORDS = frozenset(code_tokens(
    "fix add added support allow use make remove update change new get set value data "
    "name type error default option"))
