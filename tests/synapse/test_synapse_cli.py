"""The learning commands end to end: replay (with bad lines), next, synapse, memory, feedback."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from neuralmind.cli.main import main
from neuralmind.synapse.layer import SynapseLayer

EVENTS = [
    {"type": "session_start", "session": "s1", "ts": "2026-11-01T10:00:00Z"},
    {"type": "open", "session": "s1", "file": "src/a.py"},
    {"type": "edit", "session": "s1", "file": "src/b.py"},
    "this is not json",
    {"type": "save", "session": "s1"},                         # no file
    {"type": "edit", "session": "s1", "file": "../etc/passwd"},  # outside the workspace
    {"type": "rename", "session": "s1", "file": "src/a.py"},   # unknown type
    {"type": "session_end", "session": "s1"},
    {"type": "session_start", "session": "s2", "ts": "yesterday"},  # bad timestamp
    {"type": "session_start", "session": "s2", "ts": "2026-11-02T09:00:00+01:00",
     "query": "why is b slow"},
    {"type": "edit", "session": "s2", "file": "src/b.py"},
    {"type": "edit", "session": "s2", "file": "src/c.py"},
]


def write_events(path: Path, events: list) -> Path:
    lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
    path.write_text("\n".join(lines) + "\n\n")
    return path


def test_replay_learns_and_reports_bad_lines_with_their_numbers(tmp_path, capsys):
    events = write_events(tmp_path / "events.jsonl", EVENTS)
    assert main(["replay", str(events), str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    bad = sorted(int(line.split(":")[1]) for line in err.splitlines() if "line skipped" in line)
    assert bad == [4, 5, 6, 7, 9]
    assert "invalid JSON" in err and "no file" in err and "outside" in err and "'rename'" in err
    assert "replayed 7 events in 2 sessions; 5 bad lines skipped" in out
    layer = SynapseLayer(tmp_path / ".neuralmind", tmp_path)
    long_after = datetime(2028, 1, 1, tzinfo=UTC).timestamp()  # the events are from 2026-11
    assert layer.neighbors("src/a.py", now=0) == [("src/b.py", pytest.approx(0.3))]
    assert layer.next_likely("src/b.py", now=0) == [("src/c.py", pytest.approx(1.0))]
    assert layer.question_files("b slow") == [("src/b.py", pytest.approx(1.0)),
                                              ("src/c.py", pytest.approx(1.0))]
    assert layer.neighbors("src/a.py", now=long_after) == []  # 30-day half-life: forgotten
    layer.close()


def test_replay_missing_file_is_a_usage_error(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.jsonl"), str(tmp_path)]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


def test_next_prints_probabilities_as_json(tmp_path, capsys):
    events = [{"type": "edit", "session": "s", "file": f} for f in ("a.py", "b.py", "a.py", "c.py")]
    assert main(["replay", str(write_events(tmp_path / "e.jsonl", events)), str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["next", str(tmp_path / "a.py"), str(tmp_path), "-k", "5", "--json"]) == 0
    preds = json.loads(capsys.readouterr().out)["predictions"]
    assert {p["file"] for p in preds} == {"b.py", "c.py"}
    assert sum(p["probability"] for p in preds) == pytest.approx(1.0, abs=1e-5)
    assert main(["next", "a.py", str(tmp_path), "-k", "1"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1
    assert main(["next", "/elsewhere/x.py", str(tmp_path)]) == 2


def test_synapse_stats_export_import_prune_and_memory(tmp_path, capsys):
    events = [{"type": "edit", "session": "s", "file": f} for f in ("a.py", "b.py")]
    main(["replay", str(write_events(tmp_path / "e.jsonl", events)), str(tmp_path)])
    capsys.readouterr()
    assert main(["synapse", "stats", str(tmp_path), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["synapses"] == 1 and stats["active_namespace"] == "personal"
    assert main(["synapse", "export", str(tmp_path), "-o", str(tmp_path / "b.json")]) == 0
    other = tmp_path / "other"
    other.mkdir()
    assert main(["synapse", "import", str(tmp_path / "b.json"), str(other)]) == 0
    assert "1 new synapses" in capsys.readouterr().out
    assert main(["synapse", "import", str(tmp_path / "e.jsonl"), str(other)]) == 2  # not a bundle
    assert main(["synapse", "prune", str(tmp_path)]) == 0
    assert main(["memory", "export", str(tmp_path)]) == 0
    md = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert md == tmp_path / ".neuralmind" / "SYNAPSE_MEMORY.md"
    assert "`a.py` <-> `b.py`" in md.read_text()
    assert main(["memory", "export", str(other)]) == 0


def test_feedback_reinforces_known_nodes_and_refuses_unknown(tmp_path, capsys):
    from neuralmind.engine import Workspace

    (tmp_path / "a.py").write_text("def f():\n    return g()\n")
    (tmp_path / "b.py").write_text("def g():\n    return 1\n")
    Workspace(tmp_path).build(embed=False)
    assert main(["feedback", "a.py::f", str(tmp_path), "--positive", "--context", "b.py::g"]) == 0
    layer = SynapseLayer(tmp_path / ".neuralmind", tmp_path)
    assert layer.neighbors("a.py::f") == [("b.py::g", pytest.approx(0.3))]
    assert main(["feedback", "a.py::f", str(tmp_path), "--negative"]) == 0
    assert layer.neighbors("a.py::f") == [("b.py::g", pytest.approx(0.15))]
    assert main(["feedback", "nope.py", str(tmp_path), "--negative"]) == 2
    assert "unknown node" in capsys.readouterr().err
    layer.close()
