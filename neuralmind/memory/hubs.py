"""Hubs: named topics atoms belong to, with synonyms; which of them a question names.

A question names a hub when every word of the hub's name, or of one of its synonyms,
is a word of the question (a question word may extend a hub word of four letters or
more: "deploys" names "deploy"). Recall gives the atoms of named hubs a lexical bonus and
makes them candidates even when no other word matches: synonyms are how "sign in" finds
the `auth` hub.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from neuralmind.errors import InvalidArgument
from neuralmind.memory.atoms import synonyms as parse_synonyms
from neuralmind.memory.terms import words

MAX_HUB_CHARS = 100
PREFIX_MIN = 4


@dataclass(frozen=True, slots=True)
class Hub:
    name: str
    synonyms: tuple[str, ...]
    forms: tuple[tuple[str, ...], ...]     # the word sequences that name it


def check_name(raw: str) -> str:
    name = " ".join(str(raw).split())
    if not name:
        raise InvalidArgument("a hub needs a name")
    if len(name) > MAX_HUB_CHARS:
        raise InvalidArgument(f"a hub name is at most {MAX_HUB_CHARS} characters")
    return name


def load(conn: sqlite3.Connection) -> list[Hub]:
    out = []
    for name, raw in conn.execute("SELECT name, synonyms FROM hubs ORDER BY name"):
        syns = tuple(parse_synonyms(raw))
        forms = tuple(f for f in (tuple(words(x)) for x in (name, *syns)) if f)
        out.append(Hub(name, syns, forms))
    return out


def _word_matches(hub_word: str, question: set[str], prefixes: list[str]) -> bool:
    if hub_word in question:
        return True
    return len(hub_word) >= PREFIX_MIN and any(q.startswith(hub_word) for q in prefixes)


def named(hubs: list[Hub], question: str) -> list[str]:
    """Names of the hubs the question names (through their name or a synonym)."""
    qwords = words(question)
    qset, qlist = set(qwords), sorted(set(qwords))
    return [h.name for h in hubs
            if any(all(_word_matches(w, qset, qlist) for w in form) for form in h.forms)]


def set_synonyms(conn: sqlite3.Connection, name: str, synonyms: list[str], now: str) -> None:
    clean = list(dict.fromkeys(" ".join(s.split()) for s in synonyms if s.strip()))
    conn.execute("INSERT INTO hubs (name, synonyms, created_at) VALUES (?, ?, ?) "
                 "ON CONFLICT(name) DO UPDATE SET synonyms = excluded.synonyms",
                 (name, json.dumps(clean), now))
