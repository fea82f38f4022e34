"""The server's side of a build child's vectors (index/vector_handoff.py), on real stores."""

from __future__ import annotations

import numpy as np

from neuralmind.index.vector_handoff import VectorHandoff
from neuralmind.index.vectors import DIM, VectorStore


def _store(rows: dict[str, str], seed: int) -> VectorStore:
    rng = np.random.default_rng(seed)
    store = VectorStore("model")
    vecs = rng.normal(size=(len(rows), DIM)).astype(np.float32)
    store.upsert(list(rows), vecs / np.linalg.norm(vecs, axis=1, keepdims=True), list(rows.values()))
    return store


def test_merge_takes_the_childs_vectors_but_not_for_nodes_a_save_changed_or_removed() -> None:
    mine = _store({"kept.c": "k1"}, 1)
    handoff = VectorHandoff()
    handoff.record(mine, ["ignored"], {"ignored": "x"}, [])      # nothing while inactive
    assert handoff.expected == {}
    handoff.start()
    # saves: saved.c re-indexed (needs a vector of text s2), gone.c removed, kept.c current
    handoff.record(mine, ["saved.c", "kept.c"], {"saved.c": "s2"}, ["gone.c"])
    assert handoff.expected == {"saved.c": "s2", "kept.c": "k1", "gone.c": None}
    indexed = {"new.c": 1, "saved.c": 1, "kept.c": 1}
    child = _store({"new.c": "n1", "saved.c": "s1", "gone.c": "g1", "kept.c": "k1",
                    "unknown.c": "u1"}, 2)
    assert handoff.merge(mine, child, indexed) == ["new.c"]      # kept.c: the same already
    assert mine.text_hash("saved.c") is None and "gone.c" not in mine
    np.testing.assert_allclose(mine.vector("new.c"), child.vector("new.c"))
    # a later slice with saved.c embedded from its new text (a child of a later build)
    assert handoff.merge(mine, _store({"saved.c": "s2"}, 3), indexed) == ["saved.c"]

    # the child ended complete: only re-indexed nodes without their vector still wait
    handoff.expected["other.c"] = "o2"
    pending = {"saved.c", "other.c", "left-at-file-level.c"}
    assert handoff.settle(pending, mine, complete=True)
    assert pending == {"other.c"} and not handoff.active and handoff.expected == {}


def test_an_incomplete_build_leaves_the_pending_list_alone() -> None:
    handoff = VectorHandoff()
    handoff.start()
    pending = {"a.c", "b.c"}
    assert not handoff.settle(pending, VectorStore("model"), complete=False)
    assert pending == {"a.c", "b.c"} and not handoff.active
    assert handoff.merge(VectorStore("model"), None, {}) == []
