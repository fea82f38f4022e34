"""L0: who this project is, in ~100 tokens.

Sources, first found wins: `.neuralmind.toml` [project], `.neuralmind.yaml`
(name/description keys), AGENTS.md, CLAUDE.md, README. Only the title and the
first prose paragraph are kept: badges, images and HTML are noise to an LLM.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from neuralmind.config import IDENTITIES_KEPT
from neuralmind.statedir import file_stamp

_DOCS = ("AGENTS.md", "CLAUDE.md", "README.md", "README.rst", "README.txt", "README")
_NOISE = re.compile(r"^\s*(!\[|\[!\[|<|\.\. |:|\||-{3,}|={3,}|```)")


def _first_paragraph(text: str) -> tuple[str, str]:
    """(title, first prose paragraph) of a markdown/rst document."""
    title, para, lines = "", [], text.splitlines()
    for i, line in enumerate(lines):
        s = line.strip()
        if not title and s.startswith("#"):
            title = s.lstrip("#").strip()
            continue
        if not title and s and i + 1 < len(lines) and set(lines[i + 1].strip()) <= set("=-~") \
                and lines[i + 1].strip():
            title = s
            continue
        if not s:
            if para:
                break
            continue
        if s.startswith("#") or _NOISE.match(line) or set(s) <= set("=-~"):
            if para:
                break
            continue
        para.append(s)
    return title, " ".join(para)


def _yaml_fields(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^(name|description|project)\s*:\s*(.+?)\s*$", line)
        if m:
            out[m.group(1)] = m.group(2).strip("'\"")
    return out


_SOURCES = (".neuralmind.toml", ".neuralmind.yaml", *_DOCS)
# root -> (each source's `file_stamp`, the identity read from them)
_identities: dict[Path, tuple[tuple[tuple[int, ...] | None, ...], tuple[str, str]]] = {}


def project_identity(root: Path) -> tuple[str, str]:
    """(name, description) for the project at `root`, read again only when one of its
    sources changed (every answer's L0 read and parsed the README: ~0.2 ms)."""
    stamps = tuple(file_stamp(root / f) for f in _SOURCES)
    held = _identities.get(root)
    if held is not None and held[0] == stamps:
        return held[1]
    identity = _read_identity(root)
    if root not in _identities and len(_identities) >= IDENTITIES_KEPT:
        _identities.clear()
    _identities[root] = (stamps, identity)
    return identity


def _read_identity(root: Path) -> tuple[str, str]:
    name, desc = root.name, ""
    toml_path = root / ".neuralmind.toml"
    if toml_path.is_file():
        try:
            project = tomllib.loads(toml_path.read_text(encoding="utf-8")).get("project", {})
            if project.get("description"):
                return str(project.get("name") or name), str(project["description"])
        except (OSError, tomllib.TOMLDecodeError):
            pass
    yaml_path = root / ".neuralmind.yaml"
    if yaml_path.is_file():
        try:
            f = _yaml_fields(yaml_path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            f = {}
        if f.get("description"):
            return f.get("name") or f.get("project") or name, f["description"]
    for doc in _DOCS:
        p = root / doc
        if p.is_file():
            try:
                title, para = _first_paragraph(p.read_text(encoding="utf-8", errors="replace")[:20000])
            except OSError:
                continue
            if para:
                return (title if title and len(title) < 80 else name), para
    return name, desc


def render_identity(root: Path, languages: dict[str, int], files: int, nodes: int) -> str:
    name, desc = project_identity(root)
    langs = ", ".join(f"{lang} ({n})" for lang, n in sorted(languages.items(), key=lambda x: -x[1])[:4])
    lines = [f"# Project: {name}"]
    if desc:
        lines.append(desc)
    if files:
        lines.append(f"Code: {files} files, {nodes} symbols; languages: {langs}.")
    return "\n".join(lines)
