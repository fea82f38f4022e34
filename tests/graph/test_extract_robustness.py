"""Every language survives hostile input and keeps the IR invariants."""

from __future__ import annotations

import random

import pytest

from neuralmind.graph.extract import extract_file
from neuralmind.graph.languages import LANGUAGES
from neuralmind.graph.model import EDGE_KINDS, NODE_KINDS, FileExtract

SAMPLES = {
    "python": b"class A(B):\n    def f(self):\n        return g(1)\n",
    "javascript": b"class A extends B { f() { return g(1); } }\nfunction g(x) { return x; }\n",
    "typescript": b"export class A extends B { f(): number { return g(1); } }\n",
    "tsx": b"export function A() { return <div>{g(1)}</div>; }\n",
    "go": b"package a\n\ntype A struct{ B }\n\nfunc (a *A) F() int { return g(1) }\n",
    "rust": b"struct A;\nimpl B for A { fn f(&self) -> i32 { g(1) } }\n",
    "java": b"class A extends B { int f() { return g(1); } }\n",
    "c": b"struct a { int x; };\nint f(void) { return g(1); }\n",
    "cpp": b"namespace n { class A : public B { int f() { return g(1); } }; }\n",
    "csharp": b"namespace N { class A : B { int F() { return G(1); } } }\n",
    "ruby": b"class A < B\n  def f\n    g(1)\n  end\nend\n",
    "php": b"<?php\nclass A extends B { function f() { return g(1); } }\n",
    "markdown": b"# A\n\ntext\n\n## B\n\nmore\n",
}


def _check_invariants(fe: FileExtract, data: bytes) -> None:
    assert fe.nodes and fe.nodes[0].kind == "file" and fe.nodes[0].id == fe.path
    ids = [n.id for n in fe.nodes]
    assert len(ids) == len(set(ids))
    last = fe.nodes[0].end_line
    for n in fe.nodes:
        assert n.kind in NODE_KINDS
        assert 1 <= n.start_line <= n.end_line <= last, n
        assert n.id == (f"{fe.path}::{n.qualname}" if n.qualname else fe.path)
    known = set(ids)
    for e in fe.edges:
        assert e.kind in EDGE_KINDS and e.source in known and e.target in known
    for r in fe.references:
        assert r.source in known and r.kind in EDGE_KINDS and r.target
        assert 1 <= r.line <= last


def test_every_language_is_covered():
    assert set(SAMPLES) == set(LANGUAGES)


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_sample_extracts_cleanly(language: str):
    data = SAMPLES[language]
    fe = extract_file("dir/sample", data, language)
    assert fe.error == "" and not fe.partial, fe.error
    assert len(fe.nodes) >= 2
    _check_invariants(fe, data)


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_hostile_input_never_raises(language: str):
    rng = random.Random(language)
    sample = SAMPLES[language]
    cases = [b"", b"\x00" * 64, b"\xff\xfe\x00garbage\r\r\n", sample[: len(sample) // 2],
             sample.replace(b"\n", b"\r"), sample * 50]
    cases += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))) for _ in range(5)]
    cases += [bytes(rng.choice(sample) for _ in range(300)) for _ in range(5)]
    for data in cases:
        fe = extract_file("dir/sample", data, language)
        assert fe.error == "", (language, data[:40], fe.error)
        _check_invariants(fe, data)


def test_cr_only_lines_are_counted():
    fe = extract_file("a.go", b"package a\r\rfunc F() {\r}\r", "go")
    f = next(n for n in fe.nodes if n.name == "F")
    assert (f.start_line, f.end_line) == (3, 4)


def test_file_docstring_skips_licence_and_pragmas():
    go = b"// Copyright 2024 The Authors.\n// Licensed under Apache-2.0.\n\n" \
         b"// Package shop sells things.\npackage shop\n"
    assert extract_file("shop.go", go, "go").nodes[0].docstring == "Package shop sells things."
    py = b"#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n# Tools for shops.\nimport os\n"
    assert extract_file("t.py", py, "python").nodes[0].docstring == "Tools for shops."


def test_line_count_agrees_with_spans():
    from neuralmind.graph.extract import line_count

    assert line_count(b"") == 1
    assert line_count(b"a\nb\n") == 2
    assert line_count(b"a\nb") == 2
    assert line_count(b"a\rb\r") == 2              # CR-only
    assert line_count(b"a\r\nb\r\n") == 2          # CRLF counts by LF
    data = b"x = 1\r\rdef f():\r    return x\r"
    assert extract_file("m.py", data, "python").nodes[0].end_line == line_count(data) == 4


def test_repeated_extraction_of_a_large_file_holds_no_memory() -> None:
    """A server re-extracts a file on every save. py-tree-sitter 0.26.1 keeps every chunk a
    read callback returns (~185 KB per parse of this file), so files of this size are
    parsed from bytes."""
    import gc
    import tracemalloc

    data = b"".join(b"def f%d(x):\n    return g(x) + %d  # padding padding padding\n" % (i, i)
                    for i in range(2000))
    assert 100_000 < len(data) < 128 * 1024
    first = extract_file("big.py", data, "python")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(20):
            fe = extract_file("big.py", data, "python")
            assert [n.id for n in fe.nodes] == [n.id for n in first.nodes]
            del fe
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 200_000, f"20 extractions of a {len(data):,}-byte file kept {held:,} bytes"
