"""Argument helpers shared by the command modules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from neuralmind.cli.errors import UsageError


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


def stderr_progress():  # noqa: ANN201 - returns a ProgressFn
    """A progress callback for long work: an updating line on a terminal, plain lines otherwise."""
    tty = sys.stderr.isatty()
    last: dict[str, int] = {}

    def report(phase: str, done: int, total: int) -> None:
        if tty:
            end = "\n" if done >= total else ""
            pct = 100 * done // total if total else 100
            sys.stderr.write(f"\r[neuralmind] {phase}: {done}/{total} ({pct}%)\x1b[K{end}")
            sys.stderr.flush()
            return
        step = max(1, total // 10)
        if done >= total or done - last.get(phase, -step) >= step:
            last[phase] = done
            print(f"[neuralmind] {phase}: {done}/{total}", file=sys.stderr)

    return report
