"""The codebase token count in slices: each slice goes on where the last stopped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from neuralmind.context.tokens import count_tokens
from neuralmind.engine import Workspace
from neuralmind.engine.codebase import CodebaseTokens


def test_a_pass_in_slices_stats_each_file_once_and_counts_them_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(12):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}(x):\n    return x * {i}\n" * (i + 1),
                                           encoding="utf-8")
    ws = Workspace(tmp_path)
    ws.build(embed=False)
    graph = ws.graph
    counter = CodebaseTokens(ws.state, tmp_path)
    stats: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(os, "stat",
                        lambda p, *a, **k: (stats.append(str(p)), real_stat(p, *a, **k))[1])
    calls = 1
    while not counter.update(graph, limit=5):
        calls += 1
    monkeypatch.undo()
    assert calls == 3                                   # 12 files, 5 a slice
    ours = [s for s in stats if s.startswith(str(tmp_path))]
    assert len(ours) == len(graph.files) + 2            # not 6 + 11 + 12: once each, + 2 stops
    expected = sum(count_tokens((tmp_path / rel).read_text(encoding="utf-8")) for rel in graph.files)
    assert counter.total == expected
    counter.save()                                      # a complete pass is written at once
    assert CodebaseTokens(ws.state, tmp_path).total == expected
    (tmp_path / "m0.py").write_text("def only():\n    pass\n", encoding="utf-8")
    assert counter.update(graph, limit=5)               # a new pass: the changed file again
    first = count_tokens((tmp_path / "m0.py").read_text(encoding="utf-8"))
    assert counter.total == expected - count_tokens("def f0(x):\n    return x * 0\n") + first


def test_a_slice_stops_when_its_time_is_up_after_one_file_at_least(tmp_path: Path) -> None:
    for i in range(4):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}(x):\n    return x\n", encoding="utf-8")
    ws = Workspace(tmp_path)
    ws.build(embed=False)
    counter = CodebaseTokens(ws.state, tmp_path)
    calls = 1
    while not counter.update(ws.graph, seconds=0.0):    # no time: one file a call
        calls += 1
    assert calls == len(ws.graph.files) and counter.total == sum(
        count_tokens((tmp_path / rel).read_text(encoding="utf-8")) for rel in ws.graph.files)
