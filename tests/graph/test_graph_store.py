"""The SQLite graph store: round trips, incremental saves, damaged and foreign files."""

from __future__ import annotations

import logging
import pickle
import sqlite3
from pathlib import Path

import pytest

from neuralmind.graph.communities import detect_communities
from neuralmind.graph.extract import extract_file
from neuralmind.graph.model import Edge, PackedReferences
from neuralmind.graph.resolve import Resolver, resolve
from neuralmind.graph.store import FileInfo, Graph, graph_path, load_graph, save_graph
from neuralmind.graph.validate import validate_graph

SOURCES = {
    "pkg/a.py": '"""Module a."""\nfrom pkg.b import B\n\n\nclass A(B):\n    def go(self):\n        return self.stop()\n',
    "pkg/b.py": "class B:\n    def stop(self):\n        return helper()\n\n\ndef helper():\n    return 1\n",
    "odd/caf\udcc3.py": "def weird():\n    return 0\n",    # undecodable byte in the name
}


def make_graph(sources: dict[str, str]) -> Graph:
    extracts = {p: extract_file(p, t.encode("utf-8", "surrogateescape"), "python")
                for p, t in sources.items()}
    files = {p: FileInfo(ex.sha1, "python", len(sources[p]), 1000 + i, ex.partial, ex.error,
                         sources[p].count("\n"))
             for i, (p, ex) in enumerate(sorted(extracts.items()))}
    g = Graph.from_parts(extracts, files, resolve(extracts))
    g.meta = {"skipped": {"binary": {"count": 1, "paths": ["x.bin"]}}}
    detect_communities(g)
    return g


def snapshot(g: Graph) -> tuple:
    return (sorted(tuple(n.to_json().values()) for n in g.nodes.values()),
            sorted(tuple(e.to_json()) for e in g.edges),
            sorted((p, tuple(vars_of(i))) for p, i in g.files.items()),
            [(c.id, c.name, c.files, c.top_symbols, c.description, c.size) for c in g.communities],
            {p: [r.to_json() for r in ex.references] for p, ex in g.extracts.items()},
            g.meta)


def vars_of(info: FileInfo) -> list:
    return [info.sha1, info.language, info.size, info.mtime_ns, info.partial, info.error, info.lines]


def test_missing_store_is_an_empty_graph(tmp_path: Path) -> None:
    g = load_graph(tmp_path)
    assert not g.nodes and not g.edges and not g.files and g.generation == 0


def test_round_trip_keeps_everything(tmp_path: Path) -> None:
    g = make_graph(SOURCES)
    assert any(not e.resolved for e in g.edges) or any(e.resolved for e in g.edges)
    save_graph(tmp_path, g)
    loaded = load_graph(tmp_path)
    assert snapshot(loaded) == snapshot(g)
    assert loaded.generation == 1 and loaded.built_at > 0
    assert validate_graph(loaded) == []
    assert [n.id for n in loaded.nodes_by_file("pkg/b.py")][:2] == ["pkg/b.py", "pkg/b.py::B"]
    assert {e.kind for e in loaded.out_edges("pkg/a.py::A")} == {"contains", "inherits"}
    assert {e.source for e in loaded.in_edges("pkg/b.py::helper")} >= {"pkg/b.py::B.stop"}


def test_loaded_references_are_packed_and_resolve_the_same(tmp_path: Path) -> None:
    """A loaded graph holds its references as columns (PackedReferences, ~21 B each instead
    of an object each): equal to the extracted lists, element by element, both ways, and
    the resolution from them (full, and the kept state a save patches) gives the same edges."""
    sources = {**SOURCES,
               "pkg/c.py": "import os\nfrom pkg.b import helper as h, B\n\n\nclass C(B):\n"
                           "    def run(self):\n        h()\n        os.path.join('a')\n"
                           "        return self.stop()\n"}
    g = make_graph(sources)
    save_graph(tmp_path, g)
    loaded = load_graph(tmp_path)
    for path, ex in g.extracts.items():
        packed = loaded.extracts[path].references
        assert isinstance(packed, PackedReferences)
        assert packed == ex.references and ex.references == packed
        assert list(packed) == ex.references and len(packed) == len(ex.references)
        assert [packed[i] for i in range(-len(packed), 0)] == ex.references
        assert loaded.extracts[path] == ex
    imports = [r for r in loaded.extracts["pkg/c.py"].references if r.kind == "imports"]
    assert [r.names for r in imports] == [[("*", "os")], [("helper", "h"), ("B", "B")]]
    assert resolve(loaded.extracts) == resolve(g.extracts) == g.resolved
    kept = Resolver(loaded.extracts)
    new = extract_file("pkg/b.py", b"class B:\n    def stop(self):\n        return 2\n", "python")
    assert kept.update({**loaded.extracts, "pkg/b.py": new}, ["pkg/b.py"])
    assert kept.edges == resolve({**g.extracts, "pkg/b.py": new})


def test_incremental_save_rewrites_only_changed_rows(tmp_path: Path) -> None:
    g1 = make_graph(SOURCES)
    save_graph(tmp_path, g1)
    prev = load_graph(tmp_path)
    changed = dict(SOURCES)
    changed["pkg/b.py"] = SOURCES["pkg/b.py"] + "\n\ndef extra():\n    return helper()\n"
    new_ex = extract_file("pkg/b.py", changed["pkg/b.py"].encode(), "python")
    extracts = dict(prev.extracts)
    extracts["pkg/b.py"] = new_ex
    files = dict(prev.files)
    files["pkg/b.py"] = FileInfo(new_ex.sha1, "python", 1, 2, False, "", 10)
    g2 = Graph.from_parts(extracts, files, resolve(extracts))
    g2.generation = prev.generation
    detect_communities(g2)

    db = sqlite3.connect(graph_path(tmp_path))
    before = dict(db.execute("SELECT path, extract FROM files"))
    db.close()
    save_graph(tmp_path, g2, previous=prev)
    db = sqlite3.connect(graph_path(tmp_path))
    after = dict(db.execute("SELECT path, extract FROM files"))
    db.close()
    assert [p for p in after if after[p] != before[p]] == [b"pkg/b.py"]
    assert snapshot(load_graph(tmp_path)) == snapshot(g2)


def test_stale_previous_falls_back_to_a_full_rewrite(tmp_path: Path) -> None:
    g = make_graph(SOURCES)
    save_graph(tmp_path, g)
    stale = load_graph(tmp_path)
    other = make_graph({"z.py": "def z():\n    return 1\n"})
    other.generation = 1
    save_graph(tmp_path, other)                # someone else wrote generation 2
    g.generation = stale.generation
    save_graph(tmp_path, g, previous=stale)    # stale view: everything is rewritten
    assert snapshot(load_graph(tmp_path)) == snapshot(g)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign_db", "future_schema",
                                    "bad_rows"])
def test_damaged_store_is_moved_aside(tmp_path: Path, damage: str,
                                      caplog: pytest.LogCaptureFixture) -> None:
    save_graph(tmp_path, make_graph(SOURCES))
    path = graph_path(tmp_path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if damage == "foreign_db":
        db.execute("UPDATE meta SET value='something-else' WHERE key='format'")
    elif damage == "future_schema":
        db.execute("UPDATE meta SET value='999' WHERE key='schema'")
    elif damage == "bad_rows":
        db.execute("UPDATE files SET extract='{\"n\": 5}'")
    db.commit()
    db.close()
    if damage == "garbage":
        path.write_bytes(b"\x00garbage" * 512)
    elif damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(b"X" * 16 + data[16:len(data) // 3])
    with caplog.at_level(logging.WARNING, logger="neuralmind"):
        g = load_graph(tmp_path)
    assert not g.nodes and g.generation == 0
    assert not path.exists()
    assert list(tmp_path.glob("graph.db.corrupt-*"))
    assert any("moved aside" in r.getMessage() for r in caplog.records)
    save_graph(tmp_path, make_graph(SOURCES))   # and a new graph can be stored again
    assert load_graph(tmp_path).nodes


def test_graph_indexes_follow_edges() -> None:
    g = make_graph(SOURCES)
    g.edges.append(Edge("pkg/a.py::A.go", "pkg/b.py::helper", "calls", False, 2))
    g._out = g._in = None
    assert any(e.target == "pkg/b.py::helper" for e in g.out_edges("pkg/a.py::A.go"))
    assert g.nodes_by_file("missing.py") == [] and g.in_edges("nope") == []


def test_loaded_nodes_share_equal_strings_and_line_numbers(tmp_path: Path) -> None:
    """A top-level symbol's name and qualname are one string, and equal line numbers one
    int, once loaded (835k nodes on the Linux kernel: ~85 MB of duplicates)."""
    pad = "\n" * 300
    g = make_graph({"one.py": pad + "def first():\n    return 1\n",
                    "two.py": pad + "def second():\n    return 2\n"})
    save_graph(tmp_path, g)
    loaded = load_graph(tmp_path)
    first, second = loaded.nodes["one.py::first"], loaded.nodes["two.py::second"]
    assert first.name is first.qualname and second.name is second.qualname
    assert first.start_line == 301 and first.start_line is second.start_line


def test_packed_references_pickle_by_kind_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kind bytes are codes of this process's table: a pickle read where the codes differ
    (another process) still gives the same references."""
    from neuralmind.graph import model

    refs = make_graph(SOURCES).extracts["pkg/a.py"].references
    packed = model.PackedReferences.of(refs)
    blob = pickle.dumps(packed)
    kinds = list(reversed(model._KINDS))
    monkeypatch.setattr(model, "_KINDS", kinds)
    monkeypatch.setattr(model, "_KIND_CODES", {k: i for i, k in enumerate(kinds)})
    again = pickle.loads(blob)
    assert again == refs and again.kinds != packed.kinds
