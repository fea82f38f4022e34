"""Teammates' questions in `team.db`: what answers scored by use taught (#20).

A `retrieval.question` event is kept whole, not folded: a question's words, the files
kept after its answer and the files it returned unused. The question memory that ranking
reads (synapse/questions.py) scores a new question against each stored one by the words
they share, so a question is a fact to add, never a weight to merge; every machine holds
the same set of them (keyed by `(author, seq)`, so one arriving twice is one). Each row
gets a local number `n` in arrival order, which the synapse store's view uses to know
which it already shows.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

TABLE = """CREATE TABLE IF NOT EXISTS questions (
    n INTEGER PRIMARY KEY, author TEXT NOT NULL, seq INTEGER NOT NULL, pos INTEGER,
    ts REAL NOT NULL, tokens TEXT NOT NULL, files TEXT NOT NULL, unused TEXT NOT NULL,
    UNIQUE (author, seq)
)"""


def insert(conn: sqlite3.Connection, rows: Sequence[tuple[str, int, int | None, Any]]) -> None:
    """(author, seq, pos or None, checked payload); known ones are kept as they are."""
    conn.executemany(
        "INSERT OR IGNORE INTO questions (author, seq, pos, ts, tokens, files, unused) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(author, seq, pos, float(p["ts"]), " ".join(p["tokens"]), json.dumps(p["files"]),
          json.dumps(p.get("unused", []))) for author, seq, pos, p in rows])


def placed(conn: sqlite3.Connection, rows: Sequence[tuple[int, str, int]]) -> None:
    """Our own questions back from the store with their positions (pos, author, seq)."""
    conn.executemany("UPDATE questions SET pos = ? WHERE author = ? AND seq = ?", rows)


def after(conn: sqlite3.Connection, n: int, limit: int,
          ) -> list[tuple[int, str, float, str, str, str]]:
    """(n, author, ts, tokens, files JSON, unused JSON) after number `n`, in arrival order."""
    return [(int(r[0]), str(r[1]), float(r[2]), str(r[3]), str(r[4]), str(r[5]))
            for r in conn.execute("SELECT n, author, ts, tokens, files, unused FROM questions "
                                  "WHERE n > ? ORDER BY n LIMIT ?", (n, limit))]


def keys(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """(author, seq) of every question the store has placed (for the state hash)."""
    return [(str(a), int(s)) for a, s in conn.execute(
        "SELECT author, seq FROM questions WHERE pos IS NOT NULL ORDER BY author, seq")]
