"""The language registry: which files we parse, with which spec and grammar.

Every table here derives from the `LanguageSpec`s of the `lang_*.py` modules (a
language is one spec module; add one to `SPEC_MODULES`): the languages, the
extensions and file names that select them, their families, builtins and name
scoping. Grammars come from tree-sitter-language-pack 0.13.0, which bundles them
(1.x downloads them at first use and fails offline). Parsers and compiled queries
are cached per language and thread: compiling a query costs milliseconds, a
parser is not safe to share between threads.
"""

from __future__ import annotations

import logging
import os
import threading
from functools import cache

from tree_sitter import Language, Parser, Query

from neuralmind.graph import (
    lang_c,
    lang_csharp,
    lang_go,
    lang_java,
    lang_javascript,
    lang_markdown,
    lang_php,
    lang_python,
    lang_ruby,
    lang_rust,
)
from neuralmind.graph.lang_spec import LanguageSpec

log = logging.getLogger("neuralmind.graph")

# One module per language (or per family of grammars, like C/C++), in registry order.
SPEC_MODULES = (lang_python, lang_javascript, lang_go, lang_rust, lang_java, lang_c,
                lang_csharp, lang_ruby, lang_php, lang_markdown)

SPECS: dict[str, LanguageSpec] = {name: spec for module in SPEC_MODULES
                                  for name, spec in module.SPECS.items()}
LANGUAGES = tuple(SPECS)
EXTENSIONS: dict[str, str] = {ext: s.name for s in SPECS.values() for ext in s.extensions}
# Files recognised by their whole name rather than an extension.
FILENAMES: dict[str, str] = {f: s.name for s in SPECS.values() for f in s.filenames}
# Per family (languages that import and call each other): what resolution needs.
FAMILY_BUILTINS: dict[str, frozenset[str]] = {}
for _spec in SPECS.values():
    FAMILY_BUILTINS[_spec.family_name] = (FAMILY_BUILTINS.get(_spec.family_name, frozenset())
                                          | (_spec.builtins or frozenset()))
MEMBERS_IN_SCOPE = frozenset(s.family_name for s in SPECS.values() if s.members_in_scope)
STAR_REEXPORTS = frozenset(s.family_name for s in SPECS.values() if s.star_reexports)
PACKAGE_PEERS = frozenset(s.name for s in SPECS.values() if s.package_peers)
DECLARED_NAMESPACES = frozenset(s.name for s in SPECS.values() if s.declared_namespaces)


def spec_for(language: str) -> LanguageSpec | None:
    return SPECS.get(language)


def family_of(language: str) -> str:
    """Languages whose files may import and call each other share a family."""
    spec = SPECS.get(language)
    return spec.family_name if spec is not None else language

# Minified bundles parse slowly and carry no readable structure.
_MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".bundle.js")


def language_for(path: str, overrides: dict[str, str] | None = None) -> str | None:
    """The language that parses `path`, or None when it is not a file we parse.

    `overrides` maps an extension (".h", with or without the dot) or a whole file
    name to a language name; an override to an unknown language (or "") turns the
    file off.
    """
    base = os.path.basename(path)
    lower = base.lower()
    if lower.endswith(_MINIFIED_SUFFIXES):
        return None
    ext = os.path.splitext(lower)[1]
    if overrides:
        for key in (base, ext, ext.lstrip(".")):
            if key and key in overrides:
                lang = overrides[key]
                return lang if lang in LANGUAGES else None
    return FILENAMES.get(base) or EXTENSIONS.get(ext)


@cache
def grammar(language: str) -> Language:
    """The bundled grammar for `language` (KeyError-free: callers pass LANGUAGES only)."""
    from tree_sitter_language_pack import get_language  # ~20 ms, with the first parser

    return get_language(language)  # type: ignore[arg-type]


_local = threading.local()


def parser(language: str) -> Parser:
    """A parser for `language`, one per thread (tree-sitter parsers hold state)."""
    cache: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    p = cache.get(language)
    if p is None:
        p = cache[language] = Parser(grammar(language))
    return p


_query_lock = threading.Lock()
_queries: dict[tuple[str, str], Query] = {}


def query(language: str, source: str) -> Query:
    """The compiled query `source` for `language`; compiled once per process."""
    key = (language, source)
    q = _queries.get(key)
    if q is None:
        with _query_lock:
            q = _queries.get(key)
            if q is None:
                q = _queries[key] = Query(grammar(language), source)
    return q
