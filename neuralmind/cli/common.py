"""Argument helpers shared by the command modules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from neuralmind.cli.main import UsageError


def workspace_root(path: str | None) -> Path:
    """Resolve the PATH argument: it must be an existing directory."""
    p = Path(path or ".").expanduser()
    if not p.exists():
        raise UsageError(f"{p}: no such directory")
    if not p.is_dir():
        raise UsageError(f"{p}: not a directory")
    return p.resolve()


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")
