"""`neuralmind build / stats / validate` as a user runs them."""

from __future__ import annotations

import json
import os
import pty
import select
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from neuralmind.cli.main import main
from neuralmind.graph.store import graph_path

FILES = {
    "lib/core.py": '"""Core."""\n\n\ndef add(a, b):\n    return a + b\n',
    "lib/use.py": "from lib.core import add\n\n\ndef twice(x):\n    return add(x, x)\n",
    "web/app.js": "import { h } from './h.js';\nexport function run() { return h(); }\n",
    "web/h.js": "export function h() { return 1; }\n",
    "bin.py": b"\x00\x01",
}


def make_repo(root: Path) -> Path:
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text)
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_build_prints_progress_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    code, out, err = run(capsys, "build", str(root), "--no-embed")
    assert code == 0
    assert "parsing 4/4" in err.splitlines() and "saving" in err
    assert "\r" not in err                         # not a terminal: plain lines
    assert f"Built {root}" in out
    assert "files        4 (javascript 2, python 2)" in out
    assert "resolved" in out and "heuristic" in out and "communities" in out
    assert "skipped      binary 1" in out


def test_build_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    code, out, _ = run(capsys, "-q", "build", str(root), "--json", "--no-embed")
    assert code == 0
    d = json.loads(out)
    assert d["files_by_language"] == {"javascript": 2, "python": 2}
    assert d["reextracted"] == ["lib/core.py", "lib/use.py", "web/app.js", "web/h.js"]
    assert d["skipped"] == {"binary": {"count": 1, "paths": ["bin.py"]}}
    assert d["nodes"] > 4 and d["edges_resolved"] >= 2 and d["communities"] >= 1
    code, out, _ = run(capsys, "-q", "build", str(root), "--json", "--no-embed")
    assert json.loads(out)["reextracted"] == []


def test_stats_before_and_after_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    code, out, _ = run(capsys, "stats", str(root))
    assert code == 0 and "no graph yet" in out
    run(capsys, "build", str(root), "--no-embed")
    code, out, _ = run(capsys, "stats", str(root))
    assert code == 0 and "generation 1" in out and "node kinds" in out and "function" in out
    code, out, _ = run(capsys, "stats", str(root), "--json")
    d = json.loads(out)
    assert d["files"] == 4 and d["nodes_by_kind"]["function"] == 4
    assert d["edges_by_kind"]["calls"] >= 2
    assert d["skipped"]["binary"]["count"] == 1
    assert len(d["community_list"]) == d["communities"]


def test_validate_ok_then_reports_violations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo(tmp_path)
    run(capsys, "build", str(root), "--no-embed")
    code, out, _ = run(capsys, "validate", str(root))
    assert code == 0 and "graph valid" in out
    db = sqlite3.connect(graph_path(root / ".neuralmind"))
    db.execute("UPDATE files SET out = ? WHERE path = ?",
               ('[[0,"lib/nowhere.py::ghost","calls",true,1]]', b"lib/use.py"))
    db.execute("UPDATE files SET extract = replace(extract, '[\"function\",\"add\",\"add\",4,5',"
               " '[\"function\",\"add\",\"add\",4,99') WHERE path = ?", (b"lib/core.py",))
    db.commit()
    db.close()
    code, out, _ = run(capsys, "validate", str(root))
    assert code == 1
    assert "violation" in out
    assert "lib/use.py -> missing node lib/nowhere.py::ghost" in out
    assert "lib/core.py::add: span 4-99 outside 1-5" in out
    code, out, _ = run(capsys, "validate", str(root), "--json")
    assert code == 1 and json.loads(out)["valid"] is False


def test_empty_folder_builds_an_empty_valid_graph(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "build", str(tmp_path), "--json", "--no-embed")
    assert code == 0 and json.loads(out)["nodes"] == 0
    code, out, _ = run(capsys, "validate", str(tmp_path))
    assert code == 0 and "graph valid (0 nodes" in out


@pytest.mark.parametrize("cmd", ["build", "stats", "validate"])
def test_bad_path_is_a_one_line_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            cmd: str) -> None:
    f = tmp_path / "file.txt"
    f.write_text("x")
    for bad, why in ((f, "not a directory"), (tmp_path / "missing", "no such directory")):
        code, out, err = run(capsys, cmd, str(bad))
        assert code == 2 and out == ""
        assert err.strip().splitlines() == [f"neuralmind: error: {bad}: {why}"]


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    """On a TTY the progress is one line rewritten with \\r, cleared before the summary."""
    root = make_repo(tmp_path)
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "neuralmind.cli.main", "build", str(root),
                             "--no-embed"], stdout=subprocess.PIPE, stderr=slave,
                            env={**os.environ, "NEURALMIND_LOG": "error"})
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    out, _ = proc.communicate(timeout=60)
    os.close(master)
    err = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert "\r" in err and "parsing" in err and "[" in err and "4/4" in err
    assert "\n" not in err.replace("\r\n", "")       # no plain progress lines
    assert b"Built" in out
