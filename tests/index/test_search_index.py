"""SearchIndex end to end: real files, real model, real usearch and BM25 on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuralmind.graph.graph import Graph
from neuralmind.graph.model import Node, node_id
from neuralmind.index.embedder import Embedder, load_embedder
from neuralmind.index.node_text import keyword_text, node_text
from neuralmind.index.query import query_identifiers
from neuralmind.index.search_index import SearchIndex
from neuralmind.index.symbol_rank import name_ids

FILES = {
    "net/session.py": '''"""HTTP sessions."""


class Session:
    """Keeps cookies and default settings across many requests."""

    def send(self, request):
        """Send a prepared request and store the cookies the server set."""
        self.cookies.update(request.cookies)
        return self.adapter.send(request)


def merge_setting(request_setting, session_setting):
    """Merge a per-request setting with the session's default."""
    return request_setting or session_setting
''',
    "net/auth.py": '''"""Authentication handlers."""


class HTTPDigestAuth:
    """Answers a 401 digest challenge: hashes the nonce with the password and retries."""

    def handle_401(self, response):
        return response


def fetch_token(cache):
    """Return the cached value."""
    return cache.get("k")


def obtain_credentials(server):
    """Ask the server for an authentication token and return the token."""
    return server.login()
''',
    "net/retry.py": '''"""Retries."""


def backoff_delay(attempt):
    """Exponential backoff: how long to sleep before the next retry attempt."""
    return 2 ** attempt
''',
    "tests/test_session.py": '''def test_session_keeps_cookies():
    """Session cookies persist across requests."""
    assert True
''',
}


def next_generation(graph: Graph) -> Graph:
    """A new graph with `graph`'s nodes as they are now: a save makes a new generation, and
    a graph's per-file views are read once per generation."""
    g = Graph()
    g.nodes = dict(graph.nodes)
    return g


def make_graph(root: Path) -> Graph:
    g = Graph()

    def add(path: str, kind: str, qual: str, start: int, end: int, sig: str = "",
            doc: str = "") -> None:
        name = qual.rsplit(".", 1)[-1] if qual else path.rsplit("/", 1)[-1]
        nid = node_id(path, qual or None)
        g.nodes[nid] = Node(nid, kind, name, qual, path, start, end, "python", sig, doc)

    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
        add(path, "file", "", 1, text.count("\n"), doc=text.split('"""')[1]
            if text.startswith('"""') else "")
    add("net/session.py", "class", "Session", 4, 12, "class Session:",
        "Keeps cookies and default settings across many requests.")
    add("net/session.py", "method", "Session.send", 7, 11, "def send(self, request):",
        "Send a prepared request and store the cookies the server set.")
    add("net/session.py", "function", "merge_setting", 14, 16,
        "def merge_setting(request_setting, session_setting):",
        "Merge a per-request setting with the session's default.")
    add("net/auth.py", "class", "HTTPDigestAuth", 4, 9, "class HTTPDigestAuth:",
        "Answers a 401 digest challenge: hashes the nonce with the password and retries.")
    add("net/auth.py", "method", "HTTPDigestAuth.handle_401", 8, 9,
        "def handle_401(self, response):")
    add("net/auth.py", "function", "fetch_token", 12, 14, "def fetch_token(cache):",
        "Return the cached value.")
    add("net/auth.py", "function", "obtain_credentials", 17, 19,
        "def obtain_credentials(server):",
        "Ask the server for an authentication token and return the token.")
    add("net/retry.py", "function", "backoff_delay", 4, 6, "def backoff_delay(attempt):",
        "Exponential backoff: how long to sleep before the next retry attempt.")
    add("tests/test_session.py", "function", "test_session_keeps_cookies", 1, 3,
        "def test_session_keeps_cookies():", "Session cookies persist across requests.")
    return g


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_embedder(threads=2)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Graph]:
    root = tmp_path / "proj"
    root.mkdir()
    return root, make_graph(root)


def top_files(index: SearchIndex, query: str, k: int = 5) -> list[str]:
    files: list[str] = []
    for h in index.search(query, k=20).hits:
        f = h.id.split("::")[0]
        if f not in files:
            files.append(f)
    return files[:k]


def test_hybrid_search_answers_prose_questions(project: tuple[Path, Graph],
                                               embedder: Embedder) -> None:
    root, graph = project
    index = SearchIndex(root / ".neuralmind", root, embedder=embedder)
    assert index.update(graph) == len(graph.nodes)
    result = index.search("how long do we wait between retries")
    assert result.mode == "hybrid" and result.notice == ""
    assert result.files[0].file == "net/retry.py"
    assert result.hits[0].id in {"net/retry.py", "net/retry.py::backoff_delay"}
    delay = next(h for h in result.hits if h.id == "net/retry.py::backoff_delay")
    assert delay.vector_rank in (1, 2)
    assert top_files(index, "answering a digest challenge after a 401")[0] == "net/auth.py"
    assert top_files(index, "where are cookies kept between requests")[0] == "net/session.py"


def test_exact_identifier_beats_semantic_neighbours(project: tuple[Path, Graph],
                                                    embedder: Embedder) -> None:
    root, graph = project
    index = SearchIndex(root / ".neuralmind", root, embedder=embedder)
    index.update(graph)
    q = "how does fetch_token get an authentication token from the server"
    plain = [h.id for h in index.search(q.replace("fetch_token", "it")).hits]
    # without the name, the semantic neighbour wins
    assert plain.index("net/auth.py::obtain_credentials") < plain.index("net/auth.py::fetch_token")
    hits = index.search(q).hits
    assert hits[0].id == "net/auth.py::fetch_token"
    assert any("exact name" in r for r in hits[0].reasons)
    assert index.search("HTTPDigestAuth").hits[0].id == "net/auth.py::HTTPDigestAuth"
    assert query_identifiers("why does `send` call Session.merge_setting() on HTTPDigestAuth") \
        >= {"send", "Session.merge_setting", "merge_setting", "HTTPDigestAuth"}
    assert query_identifiers("how are cookies kept between requests") == set()


def test_tests_are_down_weighted_unless_asked_for(project: tuple[Path, Graph],
                                                  embedder: Embedder) -> None:
    root, graph = project
    index = SearchIndex(root / ".neuralmind", root, embedder=embedder)
    index.update(graph)
    hits = index.search("session keeps cookies across requests").hits
    test_id = "tests/test_session.py::test_session_keeps_cookies"
    test_hit = next(h for h in hits if h.id == test_id)
    assert "test/generated code down-weighted" in test_hit.reasons
    source = next(h for h in hits if h.id == "net/session.py::Session")
    assert source.score > test_hit.score
    asked = index.search("which test checks that the session keeps cookies").hits
    assert asked[0].id == test_id and not asked[0].reasons


def test_only_changed_texts_are_re_embedded_and_state_persists(
        project: tuple[Path, Graph], embedder: Embedder) -> None:
    root, graph = project
    state = root / ".neuralmind"
    index = SearchIndex(state, root, embedder=embedder)
    assert index.update(graph) == len(graph.nodes)
    assert index.update(graph) == 0
    nid = "net/retry.py::backoff_delay"
    graph.nodes[nid].docstring = "Jittered pause before reconnecting a websocket."
    graph = next_generation(graph)
    assert index.update(graph, changed_node_ids=[nid]) == 1
    assert index.search("reconnect websocket jitter").hits[0].id == nid
    del graph.nodes["net/auth.py::fetch_token"]
    graph = next_generation(graph)
    index.update(graph, changed_node_ids=["net/auth.py::fetch_token"])
    assert all(h.id != "net/auth.py::fetch_token" for h in index.search("fetch_token").hits)
    # a new process on the same state dir needs no embedding and answers the same
    again = SearchIndex(state, root, embedder=embedder)
    assert again.node_count == index.node_count == len(graph.nodes)
    assert again.vector_count == len(graph.nodes) and again.update(graph) == 0
    q = "digest challenge nonce"
    assert [h.id for h in again.search(q).hits] == [h.id for h in index.search(q).hits]


def test_keyword_first_then_hybrid_and_readers_see_new_generations(
        project: tuple[Path, Graph], embedder: Embedder) -> None:
    root, graph = project
    state = root / ".neuralmind"
    reader = SearchIndex(state, root, embedder=embedder)
    assert reader.search("backoff").hits == []
    writer = SearchIndex(state, root, embedder=embedder)
    assert writer.update(graph, embed=False) == 0
    early = writer.search("exponential backoff retry")
    assert early.mode == "keyword" and "not ready" in early.notice
    assert top_files(writer, "exponential backoff retry")[0] == "net/retry.py"
    retry_hits = [h.id for h in early.hits if h.id.startswith("net/retry.py")]
    assert "net/retry.py::backoff_delay" in retry_hits[:2]
    assert top_files(reader, "exponential backoff retry")[0] == "net/retry.py"
    progress: list[tuple[int, int]] = []
    writer.update(graph, progress=lambda d, t: progress.append((d, t)))
    assert progress[-1] == (len(graph.nodes), len(graph.nodes))
    assert writer.search("exponential backoff retry").mode == "hybrid"
    assert reader.search("exponential backoff retry").mode == "hybrid"


def test_missing_model_falls_back_to_keyword_search(
        project: tuple[Path, Graph], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    root, graph = project
    empty = tmp_path / "no-model"
    empty.mkdir()
    monkeypatch.setenv("NEURALMIND_MODEL_DIR", str(empty))
    index = SearchIndex(root / ".neuralmind", root)
    assert index.update(graph) == 0
    result = index.search("digest challenge nonce")
    assert result.mode == "keyword"
    assert "keyword-only" in result.notice and "NEURALMIND_MODEL_DIR" in result.notice
    assert result.hits[0].id == "net/auth.py::HTTPDigestAuth"
    assert index.model_error and index.vector_count == 0


def test_node_text_carries_name_path_signature_and_docstring(
        project: tuple[Path, Graph]) -> None:
    _, graph = project
    text = node_text(graph.nodes["net/session.py::Session.send"])
    for piece in ("method Session.send", "net/session.py", "def send(self, request):",
                  "store the cookies"):
        assert piece in text


def test_keyword_text_holds_bodies_and_whole_files(project: tuple[Path, Graph]) -> None:
    root, graph = project
    lines = (root / "net/retry.py").read_text(encoding="utf-8").splitlines()
    file_text = keyword_text(graph.nodes["net/retry.py"], lines)
    assert "return 2 ** attempt" in file_text
    sym_text = keyword_text(graph.nodes["net/retry.py::backoff_delay"], lines)
    assert "return 2 ** attempt" in sym_text and "backoff_delay" in sym_text
    assert "return 2 ** attempt" not in node_text(graph.nodes["net/retry.py::backoff_delay"],
                                                  lines)


def test_a_top_source_files_own_test_file_ranks_just_below_it(
        project: tuple[Path, Graph]) -> None:
    root, graph = project
    index = SearchIndex(root / ".neuralmind", root)
    index.update(graph, embed=False)
    pairs = {"tests/test_session.py": ["net/session.py"]}
    result = index.search("merge a per-request setting with the default", mode="keyword",
                          pairs=pairs)
    assert [f.file for f in result.files[:2]] == ["net/session.py", "tests/test_session.py"]
    files = list(dict.fromkeys(h.id.split("::")[0] for h in result.hits))
    assert files[:2] == ["net/session.py", "tests/test_session.py"]


def test_exact_name_map_patched_by_saves_equals_a_rebuilt_one(
        project: tuple[Path, Graph], embedder: Embedder) -> None:
    """Saves patch the name -> ids map instead of rebuilding it (a 42k-name rebuild per save
    stalled the server's loop); after removals, renames and additions it must equal a map
    built from scratch, and exact-name hits must follow."""
    root, graph = project
    index = SearchIndex(root / ".neuralmind", root, embedder=embedder)
    index.update(graph, embed=False)
    assert index.search("fetch_token").hits[0].id == "net/auth.py::fetch_token"  # map built
    del graph.nodes["net/auth.py::fetch_token"]
    renamed = graph.nodes.pop("net/retry.py::backoff_delay")
    renamed_id = "net/retry.py::retry_delay"
    graph.nodes[renamed_id] = Node(renamed_id, "function", "retry_delay", "retry_delay",
                                   renamed.file, 4, 6, "python", "def retry_delay(attempt):")
    twin = "net/session.py::fetch_token"
    graph.nodes[twin] = Node(twin, "function", "fetch_token", "fetch_token", "net/session.py",
                             18, 19, "python", "def fetch_token(cache):")
    graph = next_generation(graph)
    index.update(graph, embed=False, changed_node_ids=[
        "net/auth.py::fetch_token", "net/retry.py::backoff_delay", renamed_id, twin])
    patched = {k: sorted(name_ids(v)) for k, v in (index._by_name or {}).items()}
    index._by_name = None
    index.search("fetch_token")                       # rebuilds the map from every name
    assert patched == {k: sorted(name_ids(v)) for k, v in (index._by_name or {}).items()}
    assert patched["fetch_token"] == [twin] and "backoff_delay" not in patched
    assert patched["retry_delay"] == [renamed_id]
