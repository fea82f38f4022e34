"""Everything NeuralMind knows about one language, in one `LanguageSpec`.

A language is one `lang_*.py` module whose `SPECS` name its spec(s): the files it
parses (extensions, file names), tree-sitter queries (run in C, which keeps the
extractor fast on large trees) plus a few small hooks for the parts that differ too
much between grammars to express as a query (import statements, base classes,
docstrings), and what resolution needs (its family, its builtins, its import rule,
how names are scoped). `languages.py` derives every table from the specs, and
tests/graph/test_language_registry.py fails when a spec lacks a part.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node as TSNode

# One import as written: (module spec, [(imported name, local alias)]). It becomes a
# Reference(kind="imports", target=spec, names=...). Conventions for `names`:
#   ("*", "m")        the module itself bound to `m` (`import a.b as m`, Go `import m "x"`,
#                     `import * as m from`, `mod m;`); `import a.b` binds ("*", "a.b")
#   ("*", "")         every name of the module brought into scope (`from m import *`,
#                     Java `.*`, C# `using`, `#include`, Go dot import, `export * from`)
#   ("default", "X")  a JavaScript default import
#   (name, alias)     one name; `names == []` is a side-effect import (`import './x'`).
ImportSpec = tuple[str, list[tuple[str, str]]]


class Source:
    """The file's bytes with cheap text access; tree-sitter works on byte offsets."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def text(self, node: TSNode) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def between(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")


def _no_imports(node: TSNode, src: Source) -> list[ImportSpec]:
    return []


def _no_bases(node: TSNode, src: Source) -> list[tuple[str, str]]:
    return []


def _no_docstring(node: TSNode, src: Source) -> str | None:
    return None


@dataclass(frozen=True)
class LanguageSpec:
    """Queries and hooks for one language.

    `definitions` captures `@def.<kind>` (a NODE_KINDS kind, or `def.scope` for a
    block that only qualifies names, like a Rust `impl`), `@name`, and optionally
    `@receiver` (a Go method's receiver type). `calls` captures `@call` on the
    callee expression. `imports` captures `@import` on whole statements.
    """

    name: str
    definitions: str
    calls: str = ""
    imports: str = ""
    import_refs: Callable[[TSNode, Source], list[ImportSpec]] = _no_imports
    bases: Callable[[TSNode, Source], list[tuple[str, str]]] = _no_bases
    docstring: Callable[[TSNode, Source], str | None] = _no_docstring
    comment_types: frozenset[str] = frozenset({"comment"})
    # Siblings allowed between a leading comment and its declaration.
    skip_before: frozenset[str] = frozenset()
    # Parents that wrap a declaration (decorators, `export`, templates): the span
    # and the leading comment belong to the wrapper.
    wrappers: frozenset[str] = frozenset()
    # Wrappers whose own keywords belong in the signature (Go `type X struct`).
    signature_wrappers: frozenset[str] = frozenset()
    # Node types that start a declaration's body when it has no `body` field.
    body_types: frozenset[str] = frozenset()
    # Kinds whose functions are methods.
    method_containers: frozenset[str] = frozenset(
        {"class", "struct", "interface", "trait", "enum", "scope"})
    qual_sep: str = "."
    # How a declared name splits into qualifier parts (C++ `Foo::bar`).
    name_split: re.Pattern[str] | None = None
    # Cleans a name as written (markdown heading text, generic arguments).
    clean_name: Callable[[str], str] | None = None
    # Custom signature; returning None falls back to "declaration up to the body".
    signature: Callable[[TSNode, Source], str | None] | None = None
    # For calls captured as whole call nodes (Java `method_invocation`): the target text.
    call_target: Callable[[TSNode, Source], str] | None = None
    # The name a method gives its receiver (Go `func (s *Server)`): `s.x` means `self.x`.
    receiver_name: Callable[[TSNode, Source], str] | None = None
    # Declarations that, written without a body, govern the rest of the file
    # (C# `namespace X;`, PHP `namespace X;`).
    open_scopes: frozenset[str] = frozenset()

    # --- what the registry and resolution need (every spec declares each one) ----------
    extensions: tuple[str, ...] = ()      # lower-case, with the dot
    filenames: tuple[str, ...] = ()       # whole file names (`Rakefile`)
    # Languages whose files import and call each other share a family ("" = `name`).
    family: str = ""
    # The ImportRules method that turns this family's imports into files; None: the
    # language has no imports; "" (the default) is a spec that forgot to say.
    import_rule: str | None = ""
    # Names the unique-name guess must never bind to a workspace definition (None: not
    # declared; empty: none).
    builtins: frozenset[str] | None = None
    # A bare name inside a method may mean another member of the class (Java, C#, C++,
    # Ruby); elsewhere members go through `self`/`this`.
    members_in_scope: bool = False
    # Star imports re-export (Python `from x import *` in `__init__`, `export * from`,
    # Rust `pub use x::*`).
    star_reexports: bool = False
    # Names are visible across the files of one directory (Go and Java packages).
    package_peers: bool = False
    # Files see the namespaces they declare as module nodes (C#, PHP).
    declared_namespaces: bool = False

    @property
    def family_name(self) -> str:
        return self.family or self.name


_WS = re.compile(r"\s+")
SIGNATURE_MAX = 300
DOCSTRING_MAX = 1000


_OPEN_PAREN = re.compile(r"([(\[]) ")
_CLOSE_PAREN = re.compile(r",? ([)\]])")


def collapse(text: str, limit: int = SIGNATURE_MAX) -> str:
    """Whitespace-collapsed, capped text for signatures.

    Wrapped parameter lists (`def f(\n    a,\n    b,\n):`) read as `def f(a, b):`.
    """
    text = _WS.sub(" ", text).strip()
    text = _CLOSE_PAREN.sub(r"\1", _OPEN_PAREN.sub(r"\1", text))
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# Leading annotations and attributes (`@Override`, `[Serializable]`, `[[nodiscard]]`)
# are not part of a signature, like Python decorators.
_ANNOTATIONS = re.compile(r"^(?:(?:@[\w.]+(?:\((?:[^()]|\([^()]*\))*\))?|\[\[?[^\]]*\]\]?)\s*)+")
_LINE_MARKER = re.compile(r"^\s*(?://[/!]?|#+!?|--)\s?")
_BLOCK_LINE = re.compile(r"^\s*\*+(?!/) ?")


def clean_comment(text: str) -> str:
    """A comment's text without its markers (`//`, `///`, `#`, `/* */`, Javadoc stars)."""
    text = text.strip()
    if text.startswith("/*"):
        text = text[2:]
        if text.endswith("*/"):
            text = text[:-2]
        text = text.lstrip("*!")
        lines = [_BLOCK_LINE.sub("", line).rstrip() for line in text.splitlines()]
    elif text.startswith("=begin"):  # Ruby block comment
        lines = text.splitlines()[1:-1]
    else:
        lines = [_LINE_MARKER.sub("", line).rstrip() for line in text.splitlines()]
    return _XML_DOC_TAGS.sub("", dedent_lines(lines)).strip()


# C# XML documentation wrappers carry no meaning of their own.
_XML_DOC_TAGS = re.compile(r"</?(?:summary|remarks|para|returns|value)\b[^>]*>")


def dedent_lines(lines: list[str]) -> str:
    """Join lines with common indentation removed and blank edges trimmed."""
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    return cap_doc("\n".join(line[cut:] for line in lines))


def cap_doc(text: str) -> str:
    text = text.strip()
    return text if len(text) <= DOCSTRING_MAX else text[: DOCSTRING_MAX - 1].rstrip() + "…"


def string_literal_value(text: str) -> str:
    """`"x"`, `'x'`, `` `x` ``, `<x>` -> `x` (quotes and angle brackets off)."""
    text = text.strip()
    if len(text) >= 2 and text[0] in "\"'`<" and text[-1] in "\"'`>":
        return text[1:-1]
    return text


def leading_comment(node: TSNode, spec: LanguageSpec, src: Source) -> str:
    """The comment block directly above `node` (no blank line between), cleaned."""
    prev = node.prev_sibling
    while prev is None and node.parent is not None and node.parent.start_byte == node.start_byte:
        node = node.parent  # first statement of a body node (Ruby): look above the body
        prev = node.prev_sibling
    line = node.start_point[0]
    while prev is not None and prev.type in spec.skip_before:
        line = prev.start_point[0]
        prev = prev.prev_sibling
    parts: list[str] = []
    while prev is not None and prev.type in spec.comment_types:
        blank_lines = line - 1 - _last_row(prev)
        # One blank line may separate a `/** */` doc block from what it documents.
        doc_block_above = not parts and blank_lines == 1 and _is_doc_block(src.text(prev))
        if blank_lines > 0 and not doc_block_above:
            break
        before = prev.prev_sibling
        if before is not None and before.type not in spec.comment_types \
                and _last_row(before) == prev.start_point[0]:
            break  # a trailing comment on the previous statement's line
        parts.append(src.text(prev))
        line = prev.start_point[0]
        prev = before
    if not parts:
        return ""
    return cap_doc("\n".join(clean_comment(p) for p in reversed(parts)))


_LICENCE_WORDS = re.compile(r"copyright|licen[cs]e|spdx-license", re.I)


def _is_doc_block(text: str) -> bool:
    """A `/** ... */` block (JSDoc, TSDoc, Javadoc, PHPDoc) documents the definition after
    it across one blank line, as those tools read it: koa writes every method so, and its
    functions had no docstring at all (BENCHMARKS RETR11). A licence header is not one."""
    return text.startswith("/**") and not text.startswith("/**/") and not _LICENCE_WORDS.search(
        text)


def _last_row(node: TSNode) -> int:
    """The row of a node's last character (some tokens swallow their newline)."""
    row, col = node.end_point
    return row - 1 if col == 0 and row > node.start_point[0] else row


def generic_signature(node: TSNode, spec: LanguageSpec, src: Source) -> str:
    """The declaration from its first keyword up to its body, whitespace-collapsed."""
    start = node.start_byte
    parent = node.parent
    if parent is not None and parent.type in spec.signature_wrappers \
            and parent.named_children and parent.named_children[0].id == node.id:
        start = parent.start_byte  # `const f = ...`, `type X struct`: keep the keyword
    body = node.child_by_field_name("body")
    if body is None and spec.body_types:
        body = find_child(node, spec.body_types, depth=2)
    if body is not None and body.start_byte > start:
        text = src.between(start, body.start_byte)
    else:
        text = src.between(start, node.end_byte).split("\n", 1)[0]
    return _ANNOTATIONS.sub("", collapse(text)).rstrip("{; ")


def find_child(node: TSNode, types: frozenset[str], depth: int = 1) -> TSNode | None:
    """The first named descendant (breadth-first, `depth` levels) of one of `types`."""
    level = [node]
    for _ in range(depth):
        nxt: list[TSNode] = []
        for parent in level:
            for child in parent.named_children:
                if child.type in types:
                    return child
                nxt.append(child)
        level = nxt
    return None
