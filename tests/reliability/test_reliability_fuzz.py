"""Hostile source files: every one extracted or skipped with a reason, none crashes a
build, each bounded in time; a file past the watchdog keeps its file node and says why."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fuzz_corpus import SEEDS, corpus, minified_js

from neuralmind.config import WorkspaceConfig
from neuralmind.graph import extract
from neuralmind.graph.build import GraphBuilder
from neuralmind.graph.languages import language_for
from neuralmind.graph.validate import validate_graph

N_FILES = 12 * 7 * 3     # every language x every mutation, three times


def test_mutated_files_extract_or_skip_with_a_reason(tmp_path: Path) -> None:
    root = tmp_path / "fuzz"
    root.mkdir()
    slowest = (0.0, "")
    for name, data, _ in corpus(N_FILES, seed=11):
        (root / name).write_bytes(data)
        started = time.perf_counter()
        ex = extract.extract_file(name, data, language_for(name) or "")
        slowest = max(slowest, (time.perf_counter() - started, name))
        assert ex.nodes and ex.nodes[0].kind == "file"
    (root / "bundle.js").write_bytes(minified_js(400_000))
    (root / "nul.py").write_bytes(b"def f():\n\x00\x00\x00return 1\n" * 50)
    (root / "empty.go").write_bytes(b"")
    assert slowest[0] < extract.EXTRACT_TIMEOUT_SECONDS, slowest

    report = GraphBuilder(root, WorkspaceConfig()).build()
    graph = report.graph
    skipped = {p: reason for reason, v in report.skipped.items() for p in v["paths"]}
    on_disk = {p.name for p in root.iterdir() if p.is_file()}
    unaccounted = on_disk - set(graph.files) - set(skipped)
    assert not unaccounted, sorted(unaccounted)[:10]
    assert skipped.get("bundle.js") == "minified" and skipped.get("nul.py") == "binary"
    assert validate_graph(graph, root) == []
    languages = {graph.files[p].language for p in graph.files}
    assert len(languages) >= 11, languages
    print(f"{len(graph.files)} extracted ({len(report.partial_files)} partial, "
          f"{len(report.failed_files)} failed), {len(skipped)} skipped; slowest {slowest}")


def test_watchdog_gives_up_a_file_that_takes_too_long(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract, "EXTRACT_TIMEOUT_SECONDS", 0.2)
    nest = 300_000
    body = "x = " + "(" * nest + "1" + ")" * nest
    slow = "\n".join(body[i:i + 200] for i in range(0, len(body), 200)).encode("ascii")
    started = time.perf_counter()
    ex = extract.extract_file("deep.py", slow, "python")
    assert time.perf_counter() - started < 1.5
    assert ex.error.startswith("ExtractTimeout") and [n.kind for n in ex.nodes] == ["file"]

    root = tmp_path / "repo"
    root.mkdir()
    (root / "deep.py").write_bytes(slow)
    (root / "fine.py").write_text(SEEDS["py"], encoding="utf-8")
    report = GraphBuilder(root, WorkspaceConfig()).build()
    assert report.failed_files == ["deep.py"]
    assert "fine.py::Box.open" in report.graph.nodes
    assert validate_graph(report.graph, root) == []
