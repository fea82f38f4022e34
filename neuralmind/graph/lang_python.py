"""Python: classes, functions, methods, docstrings, imports, calls and bases."""

from __future__ import annotations

import builtins
import inspect
import re

from tree_sitter import Node as TSNode

from neuralmind.graph.lang_spec import ImportSpec, LanguageSpec, Source, cap_doc, collapse

DEFINITIONS = """
(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
"""

CALLS = """
(call function: [(identifier) (attribute)] @call)
"""

IMPORTS = """
(import_statement) @import
(import_from_statement) @import
(future_import_statement) @import
"""

_STRING_PREFIX = re.compile(r"^[rRuUbBfF]*")


def string_value(text: str) -> str:
    text = _STRING_PREFIX.sub("", text.strip())
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 2 * len(quote):
            return text[len(quote):-len(quote)]
    return text


def docstring(node: TSNode, src: Source) -> str | None:
    """The first statement of the body when it is a string literal; else None (use comments)."""
    body = node if node.type == "module" else node.child_by_field_name("body")
    if body is None:
        return None
    for child in body.named_children:
        if child.type == "comment":
            continue
        if child.type == "expression_statement" and child.named_child_count == 1:
            child = child.named_children[0]
        if child.type in ("string", "concatenated_string"):
            return cap_doc(inspect.cleandoc(string_value(src.text(child))))
        break
    return None


def _dotted(node: TSNode, src: Source) -> str:
    return "".join(src.text(node).split())


def import_refs(node: TSNode, src: Source) -> list[ImportSpec]:
    if node.type == "import_statement":
        out: list[ImportSpec] = []
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                module = _dotted(child.child_by_field_name("name"), src)
                alias = src.text(child.child_by_field_name("alias"))
                out.append((module, [("*", alias)]))
            else:
                module = _dotted(child, src)
                out.append((module, [("*", module)]))
        return out
    if node.type == "future_import_statement":
        return []
    module_node = node.child_by_field_name("module_name")
    if module_node is None:
        return []
    module = _dotted(module_node, src)
    names: list[tuple[str, str]] = []
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            names.append((_dotted(child.child_by_field_name("name"), src),
                          src.text(child.child_by_field_name("alias"))))
        else:
            name = _dotted(child, src)
            names.append((name, name))
    if any(c.type == "wildcard_import" for c in node.named_children):
        names.append(("*", ""))
    return [(module, names)]


def bases(node: TSNode, src: Source) -> list[tuple[str, str]]:
    args = node.child_by_field_name("superclasses")
    if args is None:
        return []
    return [("inherits", _dotted(arg, src)) for arg in args.named_children
            if arg.type in ("identifier", "attribute")]


def signature(node: TSNode, src: Source) -> str | None:
    """From `def`/`class` to the colon that opens the body (comments after it excluded)."""
    body = node.child_by_field_name("body")
    colon = None
    for child in node.children:
        if body is not None and child.start_byte >= body.start_byte:
            break
        if child.type == ":":
            colon = child
    if colon is None:
        return None
    return collapse(src.between(node.start_byte, colon.end_byte))


SPECS = {
    "python": LanguageSpec(
        name="python",
        definitions=DEFINITIONS,
        calls=CALLS,
        imports=IMPORTS,
        import_refs=import_refs,
        bases=bases,
        docstring=docstring,
        signature=signature,
        wrappers=frozenset({"decorated_definition"}),
        extensions=(".py", ".pyi"),
        import_rule="import_python",
        builtins=frozenset(dir(builtins)),
        star_reexports=True,
    ),
}
