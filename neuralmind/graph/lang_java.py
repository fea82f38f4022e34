"""Java: classes, interfaces, enums, records, methods and constructors, imports, Javadoc."""

from __future__ import annotations

import re

from tree_sitter import Node as TSNode

from neuralmind.graph.lang_spec import ImportSpec, LanguageSpec, Source

DEFINITIONS = """
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(annotation_type_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.function
(constructor_declaration name: (identifier) @name) @def.function
"""

CALLS = """
(method_invocation) @call
(object_creation_expression type: (_) @call)
"""

IMPORTS = """
(import_declaration) @import
"""

_SIMPLE_RECEIVER = re.compile(r"[\w$]+(\.[\w$]+)*")
_GENERIC = re.compile(r"<.*>", re.S)


def call_target(node: TSNode, src: Source) -> str:
    """`Helper.go(a)` -> `Helper.go`; `new Item()` -> `Item`; `f().g()` -> `.g`."""
    if node.type != "method_invocation":
        return _GENERIC.sub("", src.text(node))
    name = node.child_by_field_name("name")
    if name is None:
        return ""
    obj = node.child_by_field_name("object")
    if obj is None:
        return src.text(name)
    text = src.text(obj)
    return f"{text}.{src.text(name)}" if _SIMPLE_RECEIVER.fullmatch(text) else \
        f".{src.text(name)}"


def import_refs(node: TSNode, src: Source) -> list[ImportSpec]:
    text = re.sub(r"\s+", "", src.text(node))
    text = text.removeprefix("import").removesuffix(";")
    text = text.removeprefix("static")
    if text.endswith(".*"):
        return [(text[:-2], [("*", "")])]
    head, _, last = text.rpartition(".")
    return [(head, [(last, last)])] if head else []


def _types(node: TSNode | None, src: Source) -> list[str]:
    if node is None:
        return []
    found = [n for n in node.named_children if n.type != "type_list"]
    for lst in (n for n in node.named_children if n.type == "type_list"):
        found.extend(lst.named_children)
    return [_GENERIC.sub("", src.text(n)).strip() for n in found]


def bases(node: TSNode, src: Source) -> list[tuple[str, str]]:
    out = [("inherits", t) for t in _types(node.child_by_field_name("superclass"), src)]
    out += [("implements", t) for t in _types(node.child_by_field_name("interfaces"), src)]
    for child in node.named_children:
        if child.type == "extends_interfaces":
            out += [("inherits", t) for t in _types(child, src)]
    return out


SPECS = {
    "java": LanguageSpec(
        name="java",
        definitions=DEFINITIONS,
        calls=CALLS,
        imports=IMPORTS,
        import_refs=import_refs,
        bases=bases,
        call_target=call_target,
        comment_types=frozenset({"block_comment", "line_comment"}),
        extensions=(".java",),
        import_rule="import_java",
        package_peers=True,
        builtins=frozenset(),
        members_in_scope=True,
    ),
}
