"""Search terms of a question: the words keyword search matches, and how it matches them.

The tokeniser mirrors FTS5's unicode61 tokenizer (letters and digits, diacritics
removed, `_` separates), so the eval fixture's "shares no word" check and the
search itself agree on what a word is.
"""

from __future__ import annotations

import re
import unicodedata

# Words a question carries that say nothing about which decision answers it.
_STOP_TEXT = """
a about above after again against all also am an and any are as at be because been
before being below between both but by can could did do does doing done down during
each either else ever few for from further get gets got had has have having he her
here hers him his how however i if in into is it its itself just let lets like me
might more most much must my neither no nor not now of off on once only or other
our ours out over own per please same she should so some such than that the their
theirs them then there these they this those through to too under until up upon us
very via was we were what whatever when where whether which while who whom whose
why will with within without would yet you your yours
choose chose chosen decide decided decision decisions instead prefer preferred pick
picked rather use used uses using versus vs
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
MIN_TERM_CHARS = 2
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """Lower-cased words with diacritics removed, as FTS5 unicode61 sees them."""
    folded = text.lower()
    if not folded.isascii():           # ASCII has no diacritics: skip the per-character pass
        folded = unicodedata.normalize("NFKD", folded)
        folded = "".join(c for c in folded if not unicodedata.combining(c))
    return _WORD.findall(folded)


def search_terms(text: str) -> list[str]:
    """The distinct words of `text` that keyword search matches, in order."""
    out: list[str] = []
    for w in words(text):
        if len(w) >= MIN_TERM_CHARS and w not in STOP_WORDS and w not in out:
            out.append(w)
    return out


def fts_match(terms: list[str], columns: tuple[str, ...] = ()) -> str:
    """An FTS5 MATCH expression: any term, each prefix-matched, in `columns` (default all)."""
    expr = " OR ".join(f'"{t}"*' for t in terms)
    return f"{{{' '.join(columns)}}} : ({expr})" if columns else expr


def matches(term: str, text: str) -> bool:
    """Whether keyword search would match `term` in `text` (prefix match on a word)."""
    return any(w.startswith(term) for w in words(text))
