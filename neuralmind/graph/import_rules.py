"""Per-language rules that turn an import as written into workspace files.

Each rule returns the files the import reaches (edges) and the local names it
binds (for resolving calls through imported names). Only what the language
makes decidable from paths alone is resolved: package managers, include paths
and build files are out of reach, so `import numpy` or `#include <vector>`
simply resolve to nothing.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

from neuralmind.graph.model import FileExtract, Reference

_FAMILIES = {"typescript": "js", "tsx": "js", "javascript": "js", "cpp": "c"}


def family_of(language: str) -> str:
    """Languages whose files may import and call each other share a family."""
    return _FAMILIES.get(language, language)


@dataclass(frozen=True, slots=True)
class Binding:
    """What a local name refers to: a module (`mode="module"`) or `remote` in `files`."""

    mode: str                  # "module" or "symbol"
    files: tuple[str, ...]
    remote: str = ""


@dataclass(slots=True)
class ImportResult:
    files: list[str] = field(default_factory=list)
    bindings: list[tuple[str, Binding]] = field(default_factory=list)  # alias "" = wildcard


_JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")


class ImportRules:
    """Path indexes for the workspace and one resolver per language family."""

    def __init__(self, extracts: Mapping[str, FileExtract]) -> None:
        self.languages = {p: fe.language for p, fe in extracts.items()}
        self.files = set(extracts)
        self.dirs: dict[str, list[str]] = {}
        for p in sorted(extracts):
            self.dirs.setdefault(posixpath.dirname(p), []).append(p)
        self._suffixes: dict[str, list[str]] | None = None
        self._py_modules: dict[str, list[str]] | None = None
        self._go_dirs: dict[str, list[str]] | None = None

    # -- shared helpers -----------------------------------------------------------------------

    def package_peers(self, path: str) -> list[str]:
        """Other files whose top-level names are visible without an import (Go, Java)."""
        lang = self.languages.get(path)
        if lang not in ("go", "java"):
            return []
        return [p for p in self.dirs.get(posixpath.dirname(path), ())
                if p != path and self.languages.get(p) == lang]

    def suffix_matches(self, tail: str) -> list[str]:
        """Files whose path ends with `tail` at a '/' boundary, shortest path first."""
        if self._suffixes is None:
            index: dict[str, list[str]] = {}
            for p in sorted(self.files):
                parts = p.split("/")
                for i in range(len(parts)):
                    index.setdefault("/".join(parts[i:]), []).append(p)
            self._suffixes = index
        return sorted(self._suffixes.get(tail, ()), key=lambda p: (len(p), p))

    @staticmethod
    def closest(importer: str, candidates: list[str]) -> list[str]:
        """Of several equally named candidates, the one nearest the importer."""
        if len(candidates) <= 1:
            return candidates

        def shared(p: str) -> int:
            a, b = importer.split("/"), p.split("/")
            n = 0
            while n < min(len(a), len(b)) and a[n] == b[n]:
                n += 1
            return n

        return [min(candidates, key=lambda p: (-shared(p), len(p), p))]

    def resolve_import(self, path: str, ref: Reference) -> ImportResult:
        rule = getattr(self, f"_import_{family_of(self.languages.get(path, ''))}", None)
        if rule is None:
            return ImportResult()
        return rule(path, ref)

    # -- Python -------------------------------------------------------------------------------

    def _python_modules(self) -> dict[str, list[str]]:
        """Dotted module name -> files, counted from each file's outermost package."""
        if self._py_modules is None:
            modules: dict[str, list[str]] = {}
            for p in sorted(self.files):
                if self.languages[p] != "python":
                    continue
                parts = p[: p.rfind(".")].split("/")
                if parts[-1] == "__init__":
                    parts.pop()
                d = posixpath.dirname(p)
                top = len(d.split("/")) if d else 0
                while top > 0 and "/".join(p.split("/")[:top]) + "/__init__.py" in self.files:
                    top -= 1
                name = ".".join(parts[top:])
                if name:
                    modules.setdefault(name, []).append(p)
            self._py_modules = modules
        return self._py_modules

    def _py_module_files(self, base: str) -> list[str]:
        """`a/b` -> `a/b.py`, `a/b.pyi` or `a/b/__init__.py`, whichever exist."""
        for candidate in (base + ".py", base + "/__init__.py", base + ".pyi",
                          base + "/__init__.pyi"):
            if candidate in self.files:
                return [candidate]
        return []

    def _import_python(self, path: str, ref: Reference) -> ImportResult:
        spec = ref.target
        if spec.startswith("."):
            level = len(spec) - len(spec.lstrip("."))
            d = posixpath.dirname(path)
            for _ in range(level - 1):
                d = posixpath.dirname(d)
            rest = spec[level:].replace(".", "/")
            base = "/".join(x for x in (d, rest) if x)
            if rest:
                files = self._py_module_files(base)
            else:
                files = [f for f in (base + "/__init__.py",) if base and f in self.files]

            def submodule(name: str) -> list[str]:
                return self._py_module_files(f"{base}/{name}" if base else name)
        else:
            modules = self._python_modules()
            files = self.closest(path, modules.get(spec, []))

            def submodule(name: str) -> list[str]:
                return self.closest(path, modules.get(f"{spec}.{name}", []))

        result = ImportResult()
        module_used = not ref.names
        for name, alias in ref.names:
            if name == "*":  # `import a.b [as m]` binds the module; `from m import *` spreads it
                if files:
                    result.bindings.append((alias, Binding("module", tuple(files))))
                    module_used = True
                continue
            sub = submodule(name)
            if sub:
                result.files.extend(sub)
                result.bindings.append((alias, Binding("module", tuple(sub))))
            elif files:
                result.bindings.append((alias, Binding("symbol", tuple(files), name)))
                module_used = True
        if module_used:
            result.files[:0] = files
        return result
