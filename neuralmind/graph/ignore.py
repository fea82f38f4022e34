"""A gitignore-syntax matcher, used for `.gitignore` outside git, `.neuralmindignore` and
config `exclude` globs.

Semantics follow gitignore(5): blank lines and `#` comments are skipped, `!` re-includes,
a trailing `/` matches directories only, a pattern with a `/` before its last character is
anchored to the directory of its file (otherwise it matches a name at any depth), `*` and
`?` never cross `/`, `**` does, and the last matching pattern wins. A deeper ignore file
overrides a shallower one. A file inside an excluded directory cannot be re-included; the
walk gets that for free by pruning, and `is_ignored` checks every ancestor.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("neuralmind.graph")


@dataclass(frozen=True, slots=True)
class Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _translate(glob: str) -> str:
    """Regex for one gitignore glob (no anchoring, no trailing slash)."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                at_start = i == 0 or glob[i - 1] == "/"
                j = i + 2
                if at_start and (j == n or glob[j] == "/"):
                    if j == n:              # trailing `**`: everything below
                        out.append(".*")
                        i = j
                    else:                   # `**/`: zero or more directories
                        out.append("(?:.*/)?")
                        i = j + 1
                    continue
                out.append("[^/]*")         # `**` inside a name acts like `*`
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        elif c == "[":
            j = i + 1
            if j < n and glob[j] in "!^":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                body = glob[i + 1:j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_rule(line: str) -> Rule | None:
    """One gitignore line -> a rule matched against paths relative to the file's directory."""
    line = line.rstrip("\n").rstrip("\r")
    if not line or line.startswith("#"):
        return None
    # Trailing spaces are dropped unless escaped with a backslash.
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    negate = False
    if line.startswith("!"):
        negate, line = True, line[1:]
    elif line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = _translate(line)
    prefix = "" if anchored else "(?:.*/)?"
    return Rule(re.compile(f"^{prefix}{body}$", re.DOTALL), negate, dir_only)


@dataclass(slots=True)
class IgnoreFile:
    """The rules of one ignore file, relative to `base` ("" for the root)."""

    base: str
    rules: list[Rule] = field(default_factory=list)

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included, None = no rule matched."""
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1:]
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(rel):
                return not rule.negate
        return None


def parse_lines(base: str, lines: list[str]) -> IgnoreFile:
    return IgnoreFile(base, [r for r in map(parse_rule, lines) if r is not None])


class IgnoreMatcher:
    """Ignore files collected per directory; `names` says which files count (e.g. .gitignore)."""

    def __init__(self, root: Path, names: tuple[str, ...], extra: list[str] | None = None) -> None:
        self.root = root
        self.names = names
        self._by_dir: dict[str, list[IgnoreFile]] = {}
        self._extra = parse_lines("", extra) if extra else None

    def _files_for(self, directory: str) -> list[IgnoreFile]:
        cached = self._by_dir.get(directory)
        if cached is not None:
            return cached
        found: list[IgnoreFile] = []
        for name in self.names:
            p = self.root / directory / name if directory else self.root / name
            try:
                text = p.read_text(encoding="utf-8", errors="replace")
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                continue
            except OSError as e:
                log.warning("cannot read %s: %s", p, e)
                continue
            found.append(parse_lines(directory, text.splitlines()))
        self._by_dir[directory] = found
        return found

    def _match_one(self, rel: str, is_dir: bool) -> bool:
        """Decision for `rel` alone (ancestors not considered); deeper files win."""
        verdict: bool | None = None
        if self._extra is not None:
            verdict = self._extra.match(rel, is_dir)
        parts = rel.split("/")
        # Ancestor directories from the root down; a deeper file overrides a shallower one.
        for depth in range(len(parts)):
            directory = "/".join(parts[:depth])
            for f in self._files_for(directory):
                m = f.match(rel, is_dir)
                if m is not None:
                    verdict = m
        return bool(verdict)

    def entry_ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether one walk entry is ignored, given that its parent directory was not."""
        return self._match_one(rel, is_dir)

    def is_ignored(self, rel: str, is_dir: bool = False) -> bool:
        """Whether `rel` is ignored, itself or through an ignored ancestor directory."""
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            if self._match_one("/".join(parts[:depth]), True):
                return True
        return self._match_one(rel, is_dir)
