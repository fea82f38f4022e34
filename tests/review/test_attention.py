"""The editor's state as the engine keeps it for agents: validation, the symbol under the
selection (from the real code graph), clipping, confinement, the navigation trail."""

from __future__ import annotations

from pathlib import Path

import pytest
from review_support import make_history

from neuralmind.config import EDITOR_SELECTION_CHARS, EDITOR_TRAIL
from neuralmind.engine import Workspace
from neuralmind.errors import InvalidArgument


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    workspace = Workspace(make_history(tmp_path_factory.mktemp("attention") / "repo"))
    workspace.build(embed=False)
    return workspace


def report(ws: Workspace, active: str, line: int, text: str = "", **more: object) -> dict:
    return ws.report_editor_state({"active_file": active,
                                   "selection": {"start_line": line, "end_line": line,
                                                 "text": text}, **more})


def test_a_report_is_kept_with_the_symbol_under_the_selection(ws: Workspace) -> None:
    outside = str(Path(ws.root).parent / "elsewhere.py")
    state = report(ws, str(ws.root / "app/pool.py"), 9, "return 4",
                   visible=[{"start_line": 1, "end_line": 12}],
                   open_files=["app/pool.py", outside, "app/models.py"],
                   diagnostics=[{"start_line": 9, "end_line": 9, "message": "magic number",
                                 "severity": 2, "source": "pylint", "code": "R2004"}])
    assert state["active_file"] == "app/pool.py"
    assert state["symbol"]["name"] == "Pool.size" and state["symbol"]["kind"] == "method"
    assert state["selection"] == {"start_line": 9, "end_line": 9, "text": "return 4",
                                  "truncated": False}
    assert state["open_files"] == ["app/pool.py", "app/models.py"]    # outside: left out
    assert state["diagnostics"] == [{"start_line": 9, "end_line": 9, "severity": "warning",
                                     "message": "magic number", "source": "pylint",
                                     "code": "R2004"}]
    assert ws.editor_state()["trail"][0]["symbol"] == "Pool.size"


def test_long_selections_are_clipped(ws: Workspace) -> None:
    state = report(ws, "app/models.py", 4, "x" * (EDITOR_SELECTION_CHARS + 500))
    assert len(state["selection"]["text"]) == EDITOR_SELECTION_CHARS
    assert state["selection"]["truncated"] is True


def test_a_file_outside_the_workspace_is_not_shown(ws: Workspace) -> None:
    state = report(ws, "/etc/passwd", 1, "root:x:0:0")
    assert state["active_file"] is None and state["selection"] is None


def test_malformed_reports_are_refused_and_the_last_one_kept(ws: Workspace) -> None:
    report(ws, "app/sessions.py", 4)
    for bad in ("not an object", {"active_file": 3},
                {"active_file": "app/pool.py", "selection": {"start_line": 0}},
                {"active_file": "app/pool.py", "diagnostics": [{"start_line": 1}]},
                {"active_file": "app/pool.py", "open_files": "app/pool.py"}):
        with pytest.raises(InvalidArgument):
            ws.report_editor_state(bad)
    assert ws.editor_state()["active_file"] == "app/sessions.py"


def test_the_trail_keeps_the_last_visits_newest_first(ws: Workspace) -> None:
    report(ws, "app/pool.py", 12)          # Pool.name
    report(ws, "app/pool.py", 12)          # the same place: one visit
    report(ws, "app/pool.py", 8)           # Pool.size
    trail = ws.editor_state()["trail"]
    assert [t["symbol"] for t in trail[:2]] == ["Pool.size", "Pool.name"]
    for i in range(EDITOR_TRAIL + 5):
        report(ws, "app/models.py" if i % 2 else "app/sessions.py", 1)
    assert len(ws.editor_state()["trail"]) == EDITOR_TRAIL
