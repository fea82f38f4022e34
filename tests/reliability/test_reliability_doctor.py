"""`neuralmind doctor` beyond damaged files: hook, MCP discovery file, model, healthy state."""

from __future__ import annotations

import json
import os
from pathlib import Path

from reliability_support import cli

from neuralmind.doctor import ERROR, OK, WARNING, run_doctor
from neuralmind.memory.decisions.hook import install_hook


def _by_name(root: Path, model: bool = False) -> dict[str, object]:
    return {c.name: c for c in run_doctor(root, model=model)}


def test_healthy_workspace_is_all_ok(small_repo: Path) -> None:
    install_hook(small_repo)
    checks = run_doctor(small_repo, model=True)
    assert [c for c in checks if c.status != OK] == [], checks
    done = cli("doctor", str(small_repo), "--json", "--no-model")
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == OK


def test_hook_and_discovery_problems_come_with_fixes(small_repo: Path) -> None:
    hook = _by_name(small_repo)["git hook"]
    assert hook.status == WARNING and hook.fix == f"neuralmind init-hook {small_repo}"

    discovery = small_repo / ".neuralmind" / "mcp.json"
    discovery.write_text(json.dumps({"url": "http://127.0.0.1:9/mcp", "pid": 2 ** 22 + 7,
                                     "token": "t", "root": str(small_repo)}), encoding="utf-8")
    os.chmod(discovery, 0o600)
    stale = _by_name(small_repo)["MCP discovery"]
    assert stale.status == WARNING and "not running" in stale.message
    assert stale.fix == f"rm {discovery}"
    os.chmod(discovery, 0o644)
    exposed = _by_name(small_repo)["MCP discovery"]
    assert exposed.status == ERROR and exposed.fix == f"chmod 600 {discovery}"


def test_state_folder_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / ".neuralmind").write_text("oops", encoding="utf-8")
    checks = _by_name(tmp_path)
    assert checks["state folder"].status == ERROR and checks["state folder"].fix
    assert all(c.status != "crash" for c in checks.values())
    done = cli("doctor", str(tmp_path), "--no-model")
    assert done.returncode == 1 and "Traceback" not in done.stderr
