"""Code-aware tokens for keyword search.

Identifiers are kept whole (so `get_auth_token` matches exactly) and also split
into their words (camelCase, snake_case, dotted paths, letter/digit runs) so a
question in prose ("how is the auth token fetched") meets them. Words are
lowercased and lightly stemmed (plural and -ing/-ed endings) because questions
say "redirected cookies" where code says `redirect` and `cookie`; whole
identifiers are never stemmed.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

from neuralmind.config import TOKEN_SCAN_CHARS

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

_STOPLIST = """
a an and are as at be by can do does for from has have how i if in into is it its
of on or so that the their then there these this those to was what when where which
who why will with would you your via not no we our all any each should shall may
self cls none true false def return
"""
STOPWORDS = frozenset(_STOPLIST.split())


def stem(word: str) -> str:
    """A deliberately small suffix stripper: plurals, -ing, -ed (no dictionary)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("ie") and len(word) > 4:   # cookie/cookies -> cooky, like entry/entries
        return word[:-2] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    if word.endswith("ing") and len(word) > 5:
        base = word[:-3]
        return base[:-1] if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "lsz" else base
    if word.endswith("ed") and len(word) > 4:
        base = word[:-2]
        if base.endswith("i"):
            return base[:-1] + "y"
        return base[:-1] if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "lsz" else base
    return word


def _parts(identifier: str) -> list[str]:
    out: list[str] = []
    for piece in re.split(r"[._]+", identifier):
        out.extend(m.group(0) for m in _CAMEL.finditer(piece))
    return out


def code_tokens(text: str) -> list[str]:
    """Lowercased tokens.

    A compound identifier yields itself whole plus its stemmed words
    (`getAuthToken` -> getauthtoken, get, auth, token); a dotted path also
    yields itself whole (`os.path.join`); a plain word yields its stem; numbers
    of two or more digits are kept (`302`); stopwords and single letters go.
    """
    if len(text) <= TOKEN_SCAN_CHARS:        # (answers call this on short texts, often)
        return _piece_tokens(text)
    tokens: list[str] = []
    for piece in _pieces(text):
        tokens.extend(_piece_tokens(piece))
    return tokens


def token_counts(text: str) -> Counter[str]:
    """`Counter(code_tokens(text))`, in the same order, counted a scan piece at a time:
    Counter's C loop over a 370 KB file's 46k tokens is one call holding the GIL (25-31
    ms seen in a server's engine thread, its event loop stalled meanwhile; STALL16)."""
    if len(text) <= TOKEN_SCAN_CHARS:
        return Counter(_piece_tokens(text))
    counts: Counter[str] = Counter()
    for piece in _pieces(text):
        counts.update(_piece_tokens(piece))
    return counts


def _piece_tokens(piece: str) -> list[str]:
    """`code_tokens` of at most ~TOKEN_SCAN_CHARS: one `findall`, short enough a GIL hold."""
    tokens: list[str] = []
    for raw in _WORD.findall(piece):
        tokens.extend(_word_tokens(raw))
    return tokens


def _pieces(text: str) -> list[str]:
    """`text` cut at the first line break after every TOKEN_SCAN_CHARS (no word spans a
    line break: the same words). One `findall` over a 370 KB file held the GIL 9-26 ms,
    a stall for the editor's loop each time an unsaved buffer of it was re-indexed."""
    out, start = [], 0
    while (cut := text.find("\n", start + TOKEN_SCAN_CHARS)) >= 0:
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out


def holds_token(text: str, token: str, key: str) -> bool:
    """Whether `code_tokens(text)` includes `token`, expanding only the words of `text`
    whose lowercased text contains `key` (`token` lowercased, without a last "y"): every
    token a word yields is a lowercased piece of it or, stemmed, a prefix of one ending
    in "y" at most (entries -> entry), so no other word can yield `token`. L3 asks this of
    whole files' lines for a question's words; tokenising each such line whole made most
    of a new question's time and kept a token set per line (RSS9)."""
    return any(key in raw.lower() and token in _word_tokens(raw) for raw in _WORD.findall(text))


# A saved file's keyword text is the whole file, re-tokenised on every save; its words
# repeat (identifiers, keywords), so their expansion is memoised (console.py in rich:
# ~40 ms -> ~8 ms of CPU a save). Bounded to a few MB.
@functools.lru_cache(maxsize=1 << 14)
def _word_tokens(raw: str) -> tuple[str, ...]:
    if raw.isdigit():
        return (raw,) if len(raw) >= 2 else ()
    tokens: list[str] = []
    segments = [s for s in raw.split(".") if s.strip("_")]
    if len(segments) > 1:
        tokens.append(raw.lower())
    for seg in segments:
        parts = [p.lower() for p in _parts(seg)]
        if len(parts) > 1:
            tokens.append(seg.strip("_").lower())
            tokens.extend(stem(p) for p in parts if len(p) > 1 and p not in STOPWORDS)
        elif parts and len(parts[0]) > 1 and parts[0] not in STOPWORDS:
            tokens.append(stem(parts[0]))
    return tuple(tokens)
