"""How another program (an agent, a git hook) starts this installation of NeuralMind.

Agents spawn `neuralmind mcp` and run `neuralmind hook` with the environment of their own
shell, where this installation's virtual environment is rarely on PATH; so the command
names the installed script by its absolute path, else this interpreter with `-m`.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def neuralmind_argv() -> list[str]:
    """The argv prefix that runs the `neuralmind` command of this installation."""
    beside = Path(sys.executable).parent / "neuralmind"     # the venv's script, PATH or not
    exe = str(beside) if beside.is_file() else shutil.which("neuralmind")
    return [exe] if exe else [sys.executable, "-m", "neuralmind.cli.main"]
