"""Which files we parse, and the tree-sitter grammars that parse them.

Grammars come from tree-sitter-language-pack 0.13.0, which bundles them (1.x
downloads them at first use and fails offline). Parsers and compiled queries
are cached per language and thread: compiling a query costs milliseconds, a
parser is not safe to share between threads.
"""

from __future__ import annotations

import logging
import os
import threading
from functools import cache

from tree_sitter import Language, Parser, Query

log = logging.getLogger("neuralmind.graph")

LANGUAGES = (
    "python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp",
    "csharp", "ruby", "php", "markdown",
)

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hh": "cpp", ".hpp": "cpp",
    ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".inl": "cpp",
    ".cs": "csharp",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby",
    ".php": "php",
    ".md": "markdown", ".markdown": "markdown",
}

# Files recognised by their whole name rather than an extension.
FILENAMES: dict[str, str] = {"Rakefile": "ruby", "Gemfile": "ruby"}

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
