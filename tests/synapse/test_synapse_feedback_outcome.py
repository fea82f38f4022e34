"""`neuralmind feedback` says what really happened: "reinforced" only when the pair was written;
unknown nodes, learning switched off, a locked store and a read-only store each say so, and
the exit code is non-zero when nothing was written because of an error."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from neuralmind.cli.main import main
from neuralmind.synapse.layer import SynapseLayer


@pytest.fixture
def built(tmp_path: Path) -> Path:
    from neuralmind.engine import Workspace

    (tmp_path / "a.py").write_text("def f():\n    return g()\n")
    (tmp_path / "b.py").write_text("def g():\n    return 1\n")
    ws = Workspace(tmp_path)
    ws.build(embed=False)
    ws.synapses.close()
    return tmp_path


def _neighbors(root: Path) -> list[tuple[str, float]]:
    layer = SynapseLayer(root / ".neuralmind", root)
    try:
        return layer.neighbors("a.py::f")
    finally:
        layer.close()


def test_written_feedback_says_reinforced(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["feedback", "a.py::f", str(built), "--positive", "--context", "b.py::g"]) == 0
    assert capsys.readouterr().out.strip() == "reinforced a.py::f with 1 context node(s)"
    assert [n for n, _ in _neighbors(built)] == ["b.py::g"]


@pytest.mark.parametrize("argv", [["a.py::nope", "--positive"],             # symbol not in a.py
                                  ["a.py::f", "--positive", "--context", "b.py::gone"]])
def test_unknown_node_is_refused(built: Path, argv: list[str],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["feedback", argv[0], str(built), *argv[1:]]) == 2
    out, err = capsys.readouterr()
    assert "unknown node" in err and "reinforced" not in out
    assert _neighbors(built) == []


def test_learning_off_says_nothing_was_recorded(built: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (built / ".neuralmind.toml").write_text("[neuralmind]\nlearning = false\n")
    assert main(["feedback", "a.py::f", str(built), "--positive", "--context", "b.py::g"]) == 0
    out = capsys.readouterr().out
    assert "not recorded: learning is off" in out and "reinforced" not in out
    assert _neighbors(built) == []


def test_locked_store_is_an_error(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    holder = sqlite3.connect(built / ".neuralmind" / "synapses.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")            # another writer holds the lock past 2 s
    try:
        assert main(["feedback", "a.py::f", str(built), "--positive",
                     "--context", "b.py::g"]) == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    out, err = capsys.readouterr()
    assert "reinforced" not in out
    assert "feedback not recorded: database is locked" in err
    assert _neighbors(built) == []


def test_read_only_store_is_an_error(built: Path) -> None:
    """Root ignores chmod; in a user namespace without a uid map (`unshare -U`) the owner's
    mode bits apply again (see tests/reliability/test_reliability_readonly_decisions.py)."""
    wrap = ["unshare", "-U"] if os.geteuid() == 0 else []
    if wrap and subprocess.run([*wrap, "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot create a user namespace to make chmod bind root")
    state = built / ".neuralmind"
    os.chmod(state / "synapses.db", 0o444)
    os.chmod(state, 0o555)
    try:
        done = subprocess.run([*wrap, sys.executable, "-m", "neuralmind.cli.main", "feedback",
                               "a.py::f", str(built), "--positive", "--context", "b.py::g"],
                              capture_output=True, text=True, timeout=60)
    finally:
        os.chmod(state, 0o755)
        os.chmod(state / "synapses.db", 0o644)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr[-2000:])
    assert "reinforced" not in done.stdout and "Traceback" not in done.stderr
    assert "neuralmind: error: feedback not recorded:" in done.stderr
    assert _neighbors(built) == []
