"""Per-language rules that turn an import as written into workspace files.

Each rule returns the files the import reaches (edges) and the local names it
binds (for resolving calls through imported names). Only what the language
makes decidable from paths alone is resolved: package managers, include paths
and build files are out of reach, so `import numpy` or `#include <vector>`
simply resolve to nothing.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from neuralmind.graph.languages import DECLARED_NAMESPACES, PACKAGE_PEERS, family_of, spec_for
from neuralmind.graph.model import FileExtract, Reference
from neuralmind.graph.path_suffixes import PathSuffixes


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
        # Namespaces declared as module nodes (C#, PHP): (family, qualname) -> files.
        self.namespaces: dict[tuple[str, str], list[str]] = {}
        self.file_namespaces: dict[str, list[str]] = {}
        for p in sorted(extracts):
            fe = extracts[p]
            if fe.language not in DECLARED_NAMESPACES:
                continue
            for node in fe.nodes:
                if node.kind == "module" and "#" not in node.qualname:
                    self.namespaces.setdefault((fe.language, node.qualname), []).append(p)
                    self.file_namespaces.setdefault(p, []).append(node.qualname)
        self._suffixes = PathSuffixes(self.files)
        self._py_modules: dict[str, list[str]] | None = None
        self._dir_suffixes: dict[str, list[str]] | None = None

    # -- shared helpers -----------------------------------------------------------------------

    def implicit_bindings(self, path: str) -> list[Binding]:
        """Modules whose names are visible without an import statement.

        Go and Java see their package (the files of the same directory); C# and
        PHP see the namespaces the file itself declares.
        """
        lang = self.languages.get(path)
        if lang in PACKAGE_PEERS:
            # The file itself included: every file of the package then shares one binding.
            peers = tuple(p for p in self.dirs.get(posixpath.dirname(path), ())
                          if self.languages.get(p) == lang)
            return [Binding("module", peers)] if len(peers) > 1 else []
        if lang in DECLARED_NAMESPACES:
            fam = family_of(lang)
            return [Binding("module", tuple(self.namespaces[(fam, ns)]), ns)
                    for ns in self.file_namespaces.get(path, ())]
        return []

    def suffix_matches(self, tail: str) -> list[str]:
        """Files whose path ends with `tail` at a '/' boundary, shortest path first."""
        return self._suffixes.matches(tail)

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
        """The files and names an import reaches, by the language spec's `import_rule`."""
        spec = spec_for(self.languages.get(path, ""))
        if spec is None or spec.import_rule is None:
            return ImportResult()
        rule: Callable[[str, Reference], ImportResult] = getattr(self, spec.import_rule)
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

    def _py_absolute(self, importer: str, dotted: str) -> list[str]:
        """The file of an absolute module: by package root, else by path suffix.

        The suffix fallback finds modules in namespace packages (no __init__.py) and
        under source roots; single names are left to the package index so that
        `import os` never lands on some workspace `os.py` deep in a tree.
        """
        found = self._python_modules().get(dotted)
        if found:
            return self.closest(importer, found)
        if "." not in dotted:
            return []
        tail = dotted.replace(".", "/")
        for candidate in (tail + ".py", tail + "/__init__.py"):
            found = self.suffix_matches(candidate)
            if found:
                return self.closest(importer, found)
        return []

    def import_python(self, path: str, ref: Reference) -> ImportResult:
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
            files = self._py_absolute(path, spec)

            def submodule(name: str) -> list[str]:
                return self._py_absolute(path, f"{spec}.{name}")

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

    # -- JavaScript / TypeScript ----------------------------------------------------------------

    def _js_file(self, base: str) -> str | None:
        """`./a` -> a.ts, a.tsx, a.js, ... or a/index.*; `./a.js` may be a.ts on disk."""
        if base in self.files:
            return base
        stems = [base]
        for ext in (".js", ".jsx", ".mjs", ".cjs"):
            if base.endswith(ext):
                stems.append(base[: -len(ext)])
        for stem in stems:
            for ext in _JS_EXTS:
                if stem + ext in self.files:
                    return stem + ext
        for ext in _JS_EXTS:
            if f"{base}/index{ext}" in self.files:
                return f"{base}/index{ext}"
        return None

    def _js_alias(self, importer: str, rest: str) -> str | None:
        """`@/x` and `~/x`, the usual tsconfig/bundler aliases for the source root.

        Tried as `src/x` and `x` under each folder above the importer, nearest first.
        """
        d = posixpath.dirname(importer)
        while True:
            for root in (posixpath.join(d, "src"), d):
                found = self._js_file(posixpath.join(root, rest) if root else rest)
                if found is not None:
                    return found
            if not d:
                return None
            d = posixpath.dirname(d)

    def import_js(self, path: str, ref: Reference) -> ImportResult:
        target = ref.target
        if target.startswith((".", "/")):
            base = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            found = self._js_file(base.lstrip("/"))
        elif target.startswith(("@/", "~/")):
            found = self._js_alias(path, target[2:])
        else:
            return ImportResult()  # a package from node_modules
        if found is None:
            return ImportResult()
        files = (found,)
        result = ImportResult(files=[found])
        for name, alias in ref.names:
            if name == "*":
                result.bindings.append((alias, Binding("module", files)))
            elif name == "default":  # the default export is usually named like its import
                result.bindings.append((alias, Binding("symbol", files, alias)))
            else:
                result.bindings.append((alias, Binding("symbol", files, name)))
        return result

    # -- Go ---------------------------------------------------------------------------------------

    def dir_suffixes(self, tail: str) -> list[str]:
        """Directories whose path ends with `tail` at a '/' boundary."""
        if self._dir_suffixes is None:
            index: dict[str, list[str]] = {}
            for d in sorted(self.dirs):
                parts = d.split("/") if d else []
                for i in range(len(parts)):
                    index.setdefault("/".join(parts[i:]), []).append(d)
            self._dir_suffixes = index
        return self._dir_suffixes.get(tail, [])

    def import_go(self, path: str, ref: Reference) -> ImportResult:
        segments = [s for s in ref.target.split("/") if s]
        if not segments:
            return ImportResult()
        # The standard library has no dot in its first element: match it only whole.
        shortest = 1 if "." in segments[0] else len(segments)
        for k in range(len(segments), shortest - 1, -1):
            dirs = [d for d in self.dir_suffixes("/".join(segments[-k:]))
                    if any(self.languages[f] == "go" for f in self.dirs[d])]
            if dirs:
                d = self.closest(path, dirs)[0]
                files = tuple(f for f in self.dirs[d] if self.languages[f] == "go"
                              and not f.endswith("_test.go"))
                if not files:
                    return ImportResult()
                return ImportResult(list(files), [(alias, Binding("module", files))
                                                  for name, alias in ref.names])
        return ImportResult()

    # -- Rust -------------------------------------------------------------------------------------

    def _rust_root(self, path: str) -> str | None:
        d = posixpath.dirname(path)
        while True:
            for name in ("lib.rs", "main.rs"):
                if (f"{d}/{name}" if d else name) in self.files:
                    return d
            if not d:
                return None
            d = posixpath.dirname(d)

    def _rust_file(self, root: str, module: list[str]) -> str | None:
        if not module:
            for name in ("lib.rs", "main.rs"):
                f = f"{root}/{name}" if root else name
                if f in self.files:
                    return f
            return None
        base = "/".join([root, *module] if root else module)
        for candidate in (base + ".rs", base + "/mod.rs"):
            if candidate in self.files:
                return candidate
        return None

    @staticmethod
    def _rust_module_of(path: str, root: str) -> list[str]:
        rel = path[len(root) + 1:] if root else path
        parts = rel.removesuffix(".rs").split("/")
        if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
            parts.pop()
        return parts

    def import_rust(self, path: str, ref: Reference) -> ImportResult:
        segments = ref.target.split("::")
        root = self._rust_root(path)
        if segments[0] == "self" and len(segments) == 2 and ref.names == [("*", segments[1])]:
            # `mod x;`: x.rs / x/mod.rs beside lib.rs, main.rs or mod.rs, else in a folder
            # named after this file.
            d, stem = posixpath.dirname(path), posixpath.basename(path)[:-3]
            child = d if stem in ("lib", "main", "mod") else posixpath.join(d, stem)
            f = self._rust_file(child, [segments[1]])
            if f is None:
                return ImportResult()
            return ImportResult([f], [(segments[1], Binding("module", (f,)))])
        if root is None:
            return ImportResult()
        current = self._rust_module_of(path, root)
        if segments[0] == "crate":
            module = segments[1:]
        elif segments[0] in ("self", "super"):
            module = list(current)
            i = 0
            while i < len(segments) and segments[i] in ("self", "super"):
                if segments[i] == "super" and module:
                    module.pop()
                i += 1
            module += segments[i:]
        elif self._rust_file(root, segments[:1]) is not None:
            module = segments  # 2015-style path to a top-level module of this crate
        else:
            return ImportResult()  # another crate
        # The longest prefix that is a file; the rest names items inside it.
        for k in range(len(module), -1, -1):
            f = self._rust_file(root, module[:k])
            if f is not None:
                break
        else:
            return ImportResult()
        inner = module[k:]
        result = ImportResult()
        module_used = False
        for name, alias in ref.names:
            if name == "*":
                result.bindings.append((alias, Binding("module", (f,), ".".join(inner))))
                module_used = True
                continue
            sub = self._rust_file(root, [*module, name]) if not inner else None
            if sub is not None:
                result.files.append(sub)
                result.bindings.append((alias, Binding("module", (sub,))))
            else:
                result.bindings.append((alias, Binding("symbol", (f,), ".".join([*inner, name]))))
                module_used = True
        if module_used:
            result.files.insert(0, f)
        return result

    # -- Java -------------------------------------------------------------------------------------

    def import_java(self, path: str, ref: Reference) -> ImportResult:
        base = ref.target.replace(".", "/")
        result = ImportResult()
        for name, alias in ref.names:
            if name == "*":
                files = tuple(f for f in self._dir_by_suffix(path, base, ".java"))
                if files:
                    result.files.extend(files)
                    result.bindings.append(("", Binding("module", files)))
                    continue
                owner = self.closest(path, self.suffix_matches(base + ".java"))
                if owner:  # import static a.b.C.*
                    result.files.extend(owner)
                    cls = base.rsplit("/", 1)[-1]
                    result.bindings.append(("", Binding("module", tuple(owner), cls)))
                continue
            cls_file = self.closest(path, self.suffix_matches(f"{base}/{name}.java"))
            if cls_file:
                result.files.extend(cls_file)
                result.bindings.append((alias, Binding("symbol", tuple(cls_file), name)))
                continue
            owner = self.closest(path, self.suffix_matches(base + ".java"))
            if owner:  # import static a.b.C.member
                cls = base.rsplit("/", 1)[-1]
                result.files.extend(owner)
                result.bindings.append((alias, Binding("symbol", tuple(owner), f"{cls}.{name}")))
        return result

    def _dir_by_suffix(self, importer: str, tail: str, ext: str) -> list[str]:
        dirs = self.dir_suffixes(tail)
        if not dirs:
            return []
        d = self.closest(importer, dirs)[0]
        return [f for f in self.dirs.get(d, ()) if f.endswith(ext)]

    # -- C# ---------------------------------------------------------------------------------------

    def import_csharp(self, path: str, ref: Reference) -> ImportResult:
        result = ImportResult()
        for name, alias in ref.names:
            if name == "*":
                files = tuple(self.namespaces.get(("csharp", ref.target), ()))
                if files:
                    result.files.extend(f for f in files if f != path)
                    result.bindings.append((alias, Binding("module", files, ref.target)))
                continue
            files = tuple(self.namespaces.get(("csharp", ref.target), ()))
            if files:
                narrowed = tuple(f for f in files if posixpath.basename(f) == f"{name}.cs")
                files = narrowed or files
                result.files.extend(f for f in files if f != path)
                result.bindings.append((alias, Binding("symbol", files, f"{ref.target}.{name}")))
        return result

    # -- C / C++ ----------------------------------------------------------------------------------

    def import_c(self, path: str, ref: Reference) -> ImportResult:
        target = ref.target
        system = target.startswith("<")
        target = target.strip("<>")
        found: list[str] = []
        if not system:
            local = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            if local in self.files:
                found = [local]
        if not found and (not system or "/" in target) and not target.startswith("."):
            found = self.closest(path, self.suffix_matches(target))
        if not found:
            return ImportResult()
        return ImportResult(found, [("", Binding("module", tuple(found)))])

    # -- Ruby -------------------------------------------------------------------------------------

    def import_ruby(self, path: str, ref: Reference) -> ImportResult:
        target = ref.target.removesuffix(".rb") + ".rb"
        if target.startswith("."):
            local = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            found = [local] if local in self.files else []
        elif "/" in target:
            found = self.closest(path, self.suffix_matches(target))
        else:  # `require 'x'` reaches the workspace only through lib/x.rb or x.rb
            found = [f for f in self.suffix_matches(target)
                     if f == target or f.endswith("lib/" + target)][:1]
        if not found:
            return ImportResult()
        return ImportResult(found, [("", Binding("module", tuple(found)))])

    # -- PHP --------------------------------------------------------------------------------------

    def import_php(self, path: str, ref: Reference) -> ImportResult:
        target = ref.target
        if not ref.names:  # require/include of a path
            local = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            found = [local] if local in self.files else \
                self.closest(path, self.suffix_matches(target.lstrip("./")))
            return ImportResult(found, [("", Binding("module", tuple(found)))] if found else [])
        result = ImportResult()
        for name, alias in ref.names:
            files = tuple(self.namespaces.get(("php", target), ()))
            narrowed = tuple(f for f in files if posixpath.basename(f) == f"{name}.php")
            if narrowed or files:
                chosen = narrowed or files
                result.files.extend(f for f in chosen if f != path)
                result.bindings.append((alias, Binding("symbol", chosen, f"{target}.{name}")))
                continue
            parts = [*target.split("."), name]  # PSR-4: the path ends like the namespace
            for i in range(len(parts) - 1):
                found = self.closest(path, self.suffix_matches("/".join(parts[i:]) + ".php"))
                if found:
                    result.files.extend(found)
                    result.bindings.append((alias, Binding("symbol", tuple(found), name)))
                    break
        return result
