"""Ranking atoms for a question: keyword (FTS5 bm25), semantic (embeddings), hybrid (RRF).

Decision search (`decisions query`) and progressive retrieval (`memory_search`) rank
with it, each within a scope (a SQL condition over the atom `a` and its decision record
`d`). Every result names the mode that actually ran. Hybrid is the default; when the
embedding model cannot be loaded it returns keyword results with a notice rather
than failing, while an explicit semantic search raises `SemanticUnavailable`.
The model is never downloaded: the embedder reads it from disk or refuses.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from neuralmind.errors import CodedError, InvalidArgument
from neuralmind.memory.schema import StoreError
from neuralmind.memory.terms import fts_match, search_terms, words

if TYPE_CHECKING:
    from neuralmind.index.embedder import Embedder

log = logging.getLogger("neuralmind.memory")

MODES = ("keyword", "semantic", "hybrid")
DEFAULT_MODE = "hybrid"
MODE_ENV = "NEURALMIND_DECISION_SEARCH"
SIMILARITY_FLOOR = 0.30     # cosine below this is noise for MiniLM on short texts (seed value)
RRF_K = 60                  # reciprocal rank fusion constant (standard value; see eval)
TITLE_WEIGHT = 2.0          # bm25 column weights: a title word says more than a rationale word
RATIONALE_WEIGHT = 1.0
FUSION_DEPTH = 50           # candidates each ranking contributes to the fusion


class SemanticUnavailable(CodedError):
    """Semantic search was asked for but the embedding model cannot be loaded."""

    code = "model_unavailable"


def resolve_mode(mode: str | None) -> str:
    """`mode`, else $NEURALMIND_DECISION_SEARCH, else hybrid; ValueError for unknown names."""
    chosen = (mode or os.environ.get(MODE_ENV) or DEFAULT_MODE).strip().lower()
    if chosen not in MODES:
        raise InvalidArgument(f"unknown search mode {chosen!r} (expected one of {', '.join(MODES)})")
    return chosen


Scope = tuple[str, tuple[Any, ...]]     # SQL condition over atoms `a` and decision_records `d`
_FROM = "FROM atoms a LEFT JOIN decision_records d ON d.atom_id = a.id"


# --- keyword --------------------------------------------------------------------------------
def keyword_ranking(conn: sqlite3.Connection, terms: list[str], scope: Scope, use_fts: bool,
                    limit: int) -> list[tuple[int, float]]:
    """(seq, score) best first; any term may match label or text, more and rarer matches
    rank higher (hubs are left to recall, which weighs them on their own)."""
    if not terms:
        return []
    where, params = scope
    if use_fts:
        sql = (f"SELECT a.seq, -bm25(atoms_fts, {TITLE_WEIGHT}, 0.0, {RATIONALE_WEIGHT}) AS score "
               f"FROM atoms_fts JOIN atoms a ON a.seq = atoms_fts.rowid "
               "LEFT JOIN decision_records d ON d.atom_id = a.id "
               f"WHERE atoms_fts MATCH ? AND ({where}) ORDER BY score DESC, a.seq LIMIT ?")
        rows = conn.execute(sql, (fts_match(terms, ("label", "text")), *params, limit)).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]
    return like_ranking(conn, terms, where, params, limit)


def like_ranking(conn: sqlite3.Connection, terms: list[str], where: str, params: tuple[Any, ...],
                  limit: int) -> list[tuple[int, float]]:
    """Substring matching for SQLite builds without FTS5: more matched terms rank first."""
    likes = " OR ".join(["a.label LIKE ? ESCAPE '\\' OR a.text LIKE ? ESCAPE '\\'"] * len(terms))
    patterns: list[str] = []
    for t in terms:
        p = "%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        patterns += [p, p]
    rows = conn.execute(f"SELECT a.seq, a.label, a.text {_FROM} WHERE ({likes}) AND ({where})",
                        (*patterns, *params)).fetchall()
    scored: list[tuple[int, float]] = []
    for seq, title, rationale in rows:
        t_words, r_words = " ".join(words(title)), " ".join(words(rationale))
        in_title = sum(t in t_words for t in terms)
        in_any = sum(t in t_words or t in r_words for t in terms)
        scored.append((int(seq), in_any + 0.5 * in_title / len(terms)))
    scored.sort(key=lambda x: (-x[1], x[0]))
    return scored[:limit]


# --- semantic -------------------------------------------------------------------------------
_embedders: dict[str, Embedder | str] = {}
_embedder_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The process-wide embedder for the current NEURALMIND_MODEL_DIR; SemanticUnavailable if none."""
    key = os.environ.get("NEURALMIND_MODEL_DIR", "")
    with _embedder_lock:
        if key not in _embedders:
            try:
                # on the first semantic search only; a missing embedder is a notice
                from neuralmind.index.embedder import ModelUnavailable, load_embedder
            except ImportError as e:
                _embedders[key] = f"the embedder is not installed ({e})"
            else:
                try:
                    _embedders[key] = load_embedder(threads=0)
                except ModelUnavailable as e:
                    _embedders[key] = str(e)
        found = _embedders[key]
    if isinstance(found, str):
        raise SemanticUnavailable(f"the embedding model is unavailable: {found}")
    return found


def atom_text(label: str, text: str, about: str | None = None) -> str:
    """What an atom's vector embeds: label and text, then the words of the files and symbols
    it is `about` (`about`: their targets joined by ABOUT_SEP, as ABOUT_SQL selects them).
    The code's names put an atom near questions that describe its code: on the memory eval's
    dev half they lifted semantic-only about-code Recall@5 0.37 -> 0.52, paraphrases
    unchanged (BENCHMARKS.md "Memory")."""
    names = about_words(about.split(ABOUT_SEP)) if about else ""
    return f"{label}. {text} {names}" if names else f"{label}. {text}"


ABOUT_SEP = "\x1f"
# An atom `a`'s about targets in order, for atom_text (one column of the vector queries).
ABOUT_SQL = ("(SELECT group_concat(dst, char(31)) FROM (SELECT dst FROM edges e WHERE e.src = a.id "
             "AND e.kind = 'about' AND e.dst_type != 'atom' ORDER BY e.ord))")


def about_words(targets: list[str]) -> str:
    """`src/fusion_rank.py::Fuser.rrf` -> `fusion rank Fuser rrf`: a file's name without its
    folders and extension, a symbol's qualified name, split where code joins words (a file
    is named once: an atom about a symbol is about its file too)."""
    out = []
    symbol_files = {t.partition("::")[0] for t in targets if "::" in t}
    for target in targets:
        if target in symbol_files:
            continue
        path, _, qual = target.partition("::")
        name = path.rsplit("/", 1)[-1]
        stem = re.sub(r"\.[^.]*$", "", name) or name
        out.append(" ".join(w for w in re.split(r"[._\-\s]+", f"{stem} {qual}") if w))
    return " ".join(out)


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


# The model whose cached vectors are keyed by the text's hash alone: the shipped one, as
# every store keyed them before keys named a model (so no store re-embeds on that upgrade).
SHIPPED_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"


def vector_key(model_id: str, text: str) -> str:
    """What an atom's cached vector is keyed by: its embedded text and the model that embedded
    it. Two models' vectors are not comparable (a NEURALMIND_MODEL_DIR model, or a changed
    shipped one, against vectors cached before it), so a vector cached by another model is
    stale and the atom is embedded again, once."""
    h = text_hash(text)
    return h if model_id == SHIPPED_MODEL_ID else f"{h}:{model_id}"


def cache_vectors(write: Any, rows: list[tuple[str, str, bytes]]) -> None:
    """Store (atom id, text hash, vector) rows; a locked or read-only store caches next time."""
    try:
        with write() as wconn:
            wconn.executemany("INSERT OR REPLACE INTO atom_vectors VALUES (?, ?, ?)", rows)
    except (sqlite3.OperationalError, StoreError) as e:
        log.info("atom vectors not cached (%s)", e)


def semantic_ranking(conn: sqlite3.Connection, question: str, scope: Scope, limit: int,
                     write: Any) -> tuple[list[tuple[int, float]], int]:
    """(seq, cosine) best first above the floor, and how many atoms were embedded.

    Vectors are cached in atom_vectors keyed by the embedded text and the model
    (`vector_key`), so only atoms recorded or amended since the last search, or cached by
    another model, are embedded again. `write` is the store's write-transaction context manager.
    """
    embedder = get_embedder()
    where, params = scope
    rows = conn.execute(
        f"SELECT a.seq, a.id, a.label, a.text, v.text_hash, v.vector, {ABOUT_SQL} AS about "
        "FROM atoms a LEFT JOIN decision_records d ON d.atom_id = a.id "
        f"LEFT JOIN atom_vectors v ON v.atom_id = a.id WHERE {where}", params).fetchall()
    if not rows:
        return [], 0
    texts = [atom_text(r["label"], r["text"], r["about"]) for r in rows]
    hashes = [vector_key(embedder.model_id, t) for t in texts]
    stale = [i for i, r in enumerate(rows) if r["text_hash"] != hashes[i]]
    vectors: list[np.ndarray] = [
        np.frombuffer(r["vector"], dtype=np.float32) if r["vector"] is not None else np.zeros(0, np.float32)
        for r in rows]
    if stale:
        fresh = embedder.embed([texts[i] for i in stale]).astype(np.float32)
        for j, i in enumerate(stale):
            vectors[i] = fresh[j]
        cache_vectors(write, [(rows[i]["id"], hashes[i], fresh[j].tobytes())
                              for j, i in enumerate(stale)])
        log.debug("embedded %d atom(s) for semantic search", len(stale))
    q = embedder.embed([question])[0].astype(np.float32)
    sims = np.stack(vectors) @ q
    order = np.argsort(-sims, kind="stable")
    ranked = [(int(rows[i]["seq"]), float(sims[i])) for i in order if sims[i] >= SIMILARITY_FLOOR]
    return ranked[:limit], len(stale)


# --- fusion ---------------------------------------------------------------------------------
def fuse(rankings: list[list[tuple[int, float]]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal rank fusion: sum of 1/(k + rank); ties keep the first ranking's order."""
    scores: dict[int, float] = {}
    first_rank: dict[int, tuple[int, int]] = {}
    for which, ranking in enumerate(rankings):
        for rank, (seq, _) in enumerate(ranking, start=1):
            scores[seq] = scores.get(seq, 0.0) + 1.0 / (k + rank)
            first_rank.setdefault(seq, (which, rank))
    return sorted(scores.items(), key=lambda x: (-x[1], first_rank[x[0]]))


def run_search(conn: sqlite3.Connection, question: str, mode: str | None, scope: Scope,
               limit: int, use_fts: bool, write: Any
               ) -> tuple[list[tuple[int, float]], str, str, str, int, list[str]]:
    """Rank for `question`: (ranking, mode run, mode requested, notice, embedded, terms)."""
    requested = resolve_mode(mode)
    terms = search_terms(question)
    if requested == "keyword":
        return keyword_ranking(conn, terms, scope, use_fts, limit), "keyword", requested, "", 0, terms
    if requested == "semantic":
        ranking, embedded = semantic_ranking(conn, question, scope, limit, write)
        return ranking, "semantic", requested, "", embedded, terms
    depth = max(limit, FUSION_DEPTH)
    keyword = keyword_ranking(conn, terms, scope, use_fts, depth)
    try:
        semantic, embedded = semantic_ranking(conn, question, scope, depth, write)
    except SemanticUnavailable as e:
        notice = f"semantic ranking unavailable ({e}); keyword results only"
        log.info("%s", notice)
        return keyword[:limit], "keyword", requested, notice, 0, terms
    return fuse([keyword, semantic], RRF_K)[:limit], "hybrid", requested, "", embedded, terms
