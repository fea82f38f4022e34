"""`team_dsn` in `.neuralmind.toml`: set and removed by editing that one line.

The stdlib reads TOML but does not write it, and a person's file has comments and an
order worth keeping; so we change only the `team_dsn = "..."` line (at the top level,
or in the `[neuralmind]` table when the file uses one), check that the result parses
to the same settings plus the change, and replace the file atomically.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from neuralmind.errors import EngineError
from neuralmind.statedir import atomic_write_bytes

FILE_NAME = ".neuralmind.toml"
KEY = "team_dsn"
_KEY_LINE = re.compile(rf"^\s*{KEY}\s*=")
_TABLE_LINE = re.compile(r"^\s*\[")
_NEURALMIND_TABLE = re.compile(r"^\s*\[\s*neuralmind\s*\]\s*(#.*)?$")


def _load(path: Path) -> tuple[str, dict[str, Any]]:
    if not path.is_file():
        return "", {}
    text = path.read_text(encoding="utf-8")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise EngineError("invalid_argument", f"{path} is not valid TOML ({e}): fix it first") from None


def _section(data: dict[str, Any]) -> dict[str, Any]:
    inner = data.get("neuralmind")
    return inner if isinstance(inner, dict) else data


def read_dsn(root: Path) -> str:
    try:
        _, data = _load(Path(root) / FILE_NAME)
    except EngineError:
        return ""
    value = _section(data).get(KEY, "")
    return value if isinstance(value, str) else ""


def write_dsn(root: Path, dsn: str | None) -> Path:
    """Set `team_dsn` (None removes it); other lines are kept as they are."""
    path = Path(root) / FILE_NAME
    text, before = _load(path)
    uses_table = isinstance(before.get("neuralmind"), dict)
    lines = [ln for ln in text.splitlines() if not _KEY_LINE.match(ln)] if text else []
    if dsn is not None:
        entry = f"{KEY} = {json.dumps(dsn)}"   # a JSON string is a valid TOML basic string
        if uses_table:
            header = next((i for i, ln in enumerate(lines) if _NEURALMIND_TABLE.match(ln)), None)
            if header is None:
                raise EngineError("invalid_argument", f"{path}: no [neuralmind] table line to "
                                  f"put {KEY} under: edit it by hand")
            at = header + 1
        else:
            at = next((i for i, ln in enumerate(lines) if _TABLE_LINE.match(ln)), len(lines))
        lines.insert(at, entry)
    new_text = "\n".join(lines) + "\n" if lines else ""
    expected = dict(before)
    target = dict(_section(before))
    target.pop(KEY, None)
    if dsn is not None:
        target[KEY] = dsn
    if uses_table:
        expected["neuralmind"] = target
    else:
        expected = target
    if tomllib.loads(new_text) != expected:
        raise EngineError("invalid_argument",
                          f"could not change {KEY} in {path} safely (a multi-line value?): "
                          "edit it by hand")
    atomic_write_bytes(path, new_text.encode("utf-8"))
    return path
