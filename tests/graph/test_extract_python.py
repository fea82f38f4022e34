"""Python extraction on a realistic file: exact nodes, edges and references."""

from __future__ import annotations

from neuralmind.graph.extract import extract_file
from neuralmind.graph.languages import language_for

SOURCE = b'''"""Session handling for the client."""
import os.path as osp
from . import adapters
from .utils import (
    to_key as key,
    merge,
)


# Build the default headers.
# Used by every session.
def default_headers(extra=None):
    return merge({"a": 1}, extra)


class Session(adapters.Base, Mixin):
    """A user session.

    Keeps cookies between requests.
    """

    timeout = default_headers()

    @property
    def request(self,
                method: str,
                url: str) -> "Response":
        """Send one request."""
        self.prepare(method)
        return osp.join(key(url), "x").strip()

    def prepare(self, method):
        def inner():
            return default_headers()
        return inner()
'''


def _extract():
    return extract_file("pkg/sessions.py", SOURCE, "python")


def test_language_for_python_and_overrides():
    assert language_for("a/b.py") == "python"
    assert language_for("a/b.pyi") == "python"
    assert language_for("a/b.txt") is None
    assert language_for("lib/x.min.js") is None
    assert language_for("a/b.h") == "c"
    assert language_for("a/b.h", {".h": "cpp"}) == "cpp"
    assert language_for("a/b.h", {"h": "cpp"}) == "cpp"
    assert language_for("a/b.py", {".py": "nothing"}) is None


def test_python_nodes_exact():
    fe = _extract()
    assert fe.error == "" and not fe.partial
    rows = [(n.id, n.kind, n.name, n.qualname, n.start_line, n.end_line) for n in fe.nodes]
    assert rows == [
        ("pkg/sessions.py", "file", "sessions.py", "", 1, 35),
        ("pkg/sessions.py::default_headers", "function", "default_headers",
         "default_headers", 12, 13),
        ("pkg/sessions.py::Session", "class", "Session", "Session", 16, 35),
        ("pkg/sessions.py::Session.request", "method", "request", "Session.request", 24, 30),
        ("pkg/sessions.py::Session.prepare", "method", "prepare", "Session.prepare", 32, 35),
        ("pkg/sessions.py::Session.prepare.inner", "function", "inner",
         "Session.prepare.inner", 33, 34),
    ]
    by_id = {n.id: n for n in fe.nodes}
    assert by_id["pkg/sessions.py"].docstring == "Session handling for the client."
    assert by_id["pkg/sessions.py::default_headers"].docstring == (
        "Build the default headers.\nUsed by every session.")
    assert by_id["pkg/sessions.py::default_headers"].signature == "def default_headers(extra=None):"
    session = by_id["pkg/sessions.py::Session"]
    assert session.signature == "class Session(adapters.Base, Mixin):"
    assert session.docstring == "A user session.\n\nKeeps cookies between requests."
    request = by_id["pkg/sessions.py::Session.request"]
    assert request.signature == 'def request(self, method: str, url: str) -> "Response":'
    assert request.docstring == "Send one request."
    assert all(n.language == "python" and len(n.content_hash) == 40 for n in fe.nodes)
    assert len({n.content_hash for n in fe.nodes}) == len(fe.nodes)


def test_python_contains_edges():
    fe = _extract()
    assert [(e.source, e.target, e.kind) for e in fe.edges] == [
        ("pkg/sessions.py", "pkg/sessions.py::default_headers", "contains"),
        ("pkg/sessions.py", "pkg/sessions.py::Session", "contains"),
        ("pkg/sessions.py::Session", "pkg/sessions.py::Session.request", "contains"),
        ("pkg/sessions.py::Session", "pkg/sessions.py::Session.prepare", "contains"),
        ("pkg/sessions.py::Session.prepare", "pkg/sessions.py::Session.prepare.inner",
         "contains"),
    ]


def test_python_references():
    fe = _extract()
    refs = [(r.source, r.kind, r.target, r.line, r.names) for r in fe.references]
    assert [r for r in refs if r[1] == "imports"] == [
        ("pkg/sessions.py", "imports", "os.path", 2, [("*", "osp")]),
        ("pkg/sessions.py", "imports", ".", 3, [("adapters", "adapters")]),
        ("pkg/sessions.py", "imports", ".utils", 4, [("to_key", "key"), ("merge", "merge")]),
    ]
    assert [r for r in refs if r[1] == "inherits"] == [
        ("pkg/sessions.py::Session", "inherits", "adapters.Base", 16, []),
        ("pkg/sessions.py::Session", "inherits", "Mixin", 16, []),
    ]
    calls = sorted((r[0].split("::")[1] if "::" in r[0] else "", r[2], r[3])
                   for r in refs if r[1] == "calls")
    assert calls == [
        ("Session", "default_headers", 22),
        ("Session.prepare", "inner", 35),
        ("Session.prepare.inner", "default_headers", 34),
        ("Session.request", ".strip", 30),
        ("Session.request", "key", 30),
        ("Session.request", "osp.join", 30),
        ("Session.request", "self.prepare", 29),
        ("default_headers", "merge", 13),
    ]


def test_python_syntax_error_is_partial():
    fe = extract_file("bad.py", b"def ok():\n    return 1\n\ndef broken(:\n    pass\n", "python")
    assert fe.partial and fe.error == ""
    assert "bad.py::ok" in [n.id for n in fe.nodes]
    ok = next(n for n in fe.nodes if n.id == "bad.py::ok")
    assert (ok.start_line, ok.end_line) == (1, 2)


def test_python_invalid_utf8_keeps_line_numbers():
    data = b"# caf\xe9 \xff\xfe\n\nx = '\xc3('\n\ndef after():\n    '''D\xe9j\xe0.'''\n"
    fe = extract_file("latin.py", data, "python")
    node = next(n for n in fe.nodes if n.name == "after")
    assert (node.start_line, node.end_line) == (5, 6)
    assert node.docstring == "D\ufffdj\ufffd."
    assert fe.nodes[0].end_line == 6


def test_python_cr_only_line_endings():
    fe = extract_file("mac.py", b"x = 1\r\rdef f():\r    return x\r", "python")
    node = next(n for n in fe.nodes if n.name == "f")
    assert (node.start_line, node.end_line) == (3, 4)


def test_empty_and_nul_files_do_not_crash():
    empty = extract_file("empty.py", b"", "python")
    assert [n.id for n in empty.nodes] == ["empty.py"] and empty.nodes[0].end_line == 1
    assert empty.references == [] and empty.error == ""
    nul = extract_file("nul.py", b"def f():\x00\n  pass\x00\x00\n", "python")
    assert nul.nodes[0].id == "nul.py" and nul.error == ""


def test_unknown_language_reports_error_without_raising():
    fe = extract_file("x.zzz", b"hello", "cobol")
    assert [n.kind for n in fe.nodes] == ["file"]
    assert "cobol" in fe.error


def test_duplicate_names_get_suffixes():
    fe = extract_file("d.py", b"def f():\n    pass\n\ndef f():\n    pass\n", "python")
    assert [n.id for n in fe.nodes] == ["d.py", "d.py::f", "d.py::f#2"]


def test_python_signature_stops_at_the_colon():
    src = (b"def build(\n    self,\n    name,\n    *,\n    strict=False,\n) -> dict:\n"
           b"    # Comments before the body are not signature.\n    return {}\n")
    fe = extract_file("b.py", src, "python")
    assert fe.nodes[1].signature == "def build(self, name, *, strict=False) -> dict:"
    assert fe.nodes[1].docstring == ""


def test_decorator_calls_belong_to_the_decorated_function():
    src = b"class V:\n    @route('/x')\n    def get(self):\n        pass\n\n    x = make()\n"
    fe = extract_file("v.py", src, "python")
    assert [(r.source, r.target, r.line) for r in fe.references if r.kind == "calls"] == [
        ("v.py::V.get", "route", 2), ("v.py::V", "make", 6)]
    get = next(n for n in fe.nodes if n.name == "get")
    assert (get.start_line, get.end_line, get.signature) == (2, 4, "def get(self):")
