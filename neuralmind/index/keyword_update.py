"""One chunk of a search-index update applied to the keyword side and the name map.

`SearchIndex.update` reads node texts UPDATE_CHUNK nodes at a time (config.py: the
Linux kernel's texts held at once took its build past 7 GB) and hands each chunk here,
under the index's lock, so a chunk's texts are dropped before the next is read.
"""

from __future__ import annotations

import hashlib
from typing import Any

from neuralmind.index.bm25 import BM25Index
from neuralmind.index.symbol_rank import add_name, name_ids, rename


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def keyword_digest(text: str) -> bytes:
    """A keyword text's hash as kept in memory: `text_hash`'s 20 bytes, not its 40 hex
    characters (53 bytes a node, not 89: ~30 MB on the Linux kernel's 835k nodes, for a
    server's life). `search_meta.json` stores the hex."""
    return hashlib.sha1(text.encode("utf-8")).digest()


def apply_texts(texts: dict[str, tuple[str, str, str]], bm25: BM25Index,
                kw_hash: dict[str, bytes], names: dict[str, str], vectors: Any,
                by_name: dict[str, str | list[str]] | None, todo: dict[str, str],
                embedded: dict[str, str] | None, dropped: list[str]) -> list[str]:
    """Index each (name, keyword text, embedded text) whose keyword text changed; nodes
    whose vector is missing or stale go to `todo` (their text to `embedded` when given);
    an empty embedded text means no vector (a stored one is removed, its id added to
    `dropped`: the caller's removed ids, whose vectors it then writes).
    Returns the nodes whose keyword side (text or name) changed."""
    changed: list[str] = []
    for node_id, (name, kw, text) in texts.items():
        h = keyword_digest(kw)
        old = names.get(node_id)
        if kw_hash.get(node_id) != h:
            bm25.add(node_id, kw)
            kw_hash[node_id] = h
            changed.append(node_id)
        elif old != name:
            changed.append(node_id)
        if old != name:
            rename(by_name, node_id, old, name)
        names[node_id] = name
        if not text:     # a node left without a vector (NodeTextOptions.embed_members)
            if node_id in vectors:
                vectors.remove([node_id])
                dropped.append(node_id)
            continue
        th = text_hash(text)
        if vectors.text_hash(node_id) != th:
            todo[node_id] = th
            if embedded is not None:
                embedded[node_id] = text
    return changed


def name_map(names: dict[str, str]) -> dict[str, str | list[str]]:
    """The exact-name map of `names` (id -> lowercased name): name -> id(s)."""
    by_name: dict[str, str | list[str]] = {}
    for node_id, node_name in names.items():
        add_name(by_name, node_name, node_id)
    return by_name


def exact_ids(by_name: dict[str, str | list[str]], wanted: set[str], most: int) -> set[str]:
    """The ids named by any of `wanted`, leaving out names held by more than `most` nodes."""
    found: set[str] = set()
    for w in wanted:
        if (held := by_name.get(w)) is not None and len(ids := name_ids(held)) <= most:
            found.update(ids)
    return found
