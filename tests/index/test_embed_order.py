"""Embedding order: attention files first, then every file node, then the rest, up to a cap.

The ordering on its own, then `SearchIndex.embed_pending` with the real model: the
attention file is embedded first and past the cap, slices are written for a reader to
pick up, and what the cap leaves stays searchable through its file."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_search_index import make_graph

from neuralmind.index.embed_order import EmbedOrder, choose
from neuralmind.index.embedder import Embedder, load_embedder
from neuralmind.index.search_index import SearchIndex

IDS = ["a.py", "a.py::f", "a.py::g", "b.py", "b.py::h", "c.py", "c.py::k"]


def order_of(ids: list[str], room: int | None = None,
             sizes: dict[str, int] | None = None) -> EmbedOrder:
    by_file: dict[str, list[str]] = {}
    for i in ids:
        by_file.setdefault(i.split("::")[0], []).append(i)
    return EmbedOrder(ids, choose(ids, room, lambda i: i.endswith("k")),
                      lambda f: by_file.get(f, []), sizes)


def test_files_first_then_symbols_shorter_texts_first() -> None:
    order = order_of(IDS, sizes={"b.py": 1, "a.py::g": 3, "c.py::k": 4})
    assert order.next_slice(4) == (["a.py", "c.py", "b.py", "a.py::f"], False)
    assert order.next_slice(10) == (["b.py::h", "a.py::g", "c.py::k"], False)
    assert order.next_slice(10) == ([], False) and len(order) == 0


def test_attention_files_go_first_and_are_read_before_every_slice() -> None:
    order = order_of(IDS)
    assert order.next_slice(2, attention=["c.py"]) == (["c.py", "c.py::k"], True)
    assert order.next_slice(2, attention=["c.py"]) == (["a.py", "b.py"], False)
    assert order.next_slice(1, attention=["b.py", "a.py"]) == (["b.py::h"], True)
    assert order.next_slice(5, attention=["missing.py"]) == (["a.py::f", "a.py::g"], False)


def test_the_cap_keeps_files_then_the_most_referenced_symbols_but_not_attention() -> None:
    assert choose(IDS, None) == sorted(IDS)
    assert choose(IDS, 4, lambda i: i.endswith("k")) == ["a.py", "b.py", "c.py", "c.py::k"]
    order = order_of(IDS, room=2)
    assert order.next_slice(10) == (["a.py", "b.py"], False)
    assert order.next_slice(10) == ([], False)
    assert order.next_slice(10, attention=["a.py"]) == (["a.py::f", "a.py::g"], True)
    assert order.rest() == ["b.py::h", "c.py", "c.py::k"]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_embedder(threads=2)


def test_embed_pending_serves_attention_first_and_leaves_the_rest_at_file_level(
        tmp_path: Path, embedder: Embedder) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    graph = make_graph(root)
    state = root / ".neuralmind"
    writer = SearchIndex(state, root, embedder=embedder)
    writer.update(graph, embed=False)
    reader = SearchIndex(state, root, embedder=embedder)
    assert reader.vector_count == 0 and reader.pending == len(graph.nodes)
    seen: list[int] = []

    def saved(vectors: int) -> None:     # the reader picks up each written slice
        assert reader.reload_if_changed() and reader.vector_count == vectors
        seen.append(vectors)

    auth = sorted(i for i in graph.nodes if i.startswith("net/auth.py"))
    files = sorted(i for i in graph.nodes if "::" not in i)
    done = writer.embed_pending(graph, attention=lambda: ["net/auth.py"], limit=len(files),
                                saved=saved)
    assert done == writer.vector_count == len(auth) + len(files) - 1 == seen[-1]
    assert all(not reader.waiting(i) for i in auth)
    left = {i for i in graph.nodes if "::" in i and not i.startswith("net/auth.py")}
    assert writer.pending == reader.pending == 0          # left at file level, not pending
    assert not any(i in left for i, _ in writer._vectors.search(embedder.embed(["x"])[0], 50))
    result = reader.search("exponential backoff before the next retry attempt")
    assert result.mode == "hybrid" and result.files[0].file == "net/retry.py"
