"""Go: functions, methods (qualified by receiver type), structs, interfaces, imports."""

from __future__ import annotations

import re

from tree_sitter import Node as TSNode

from neuralmind.graph.lang_spec import (
    ImportSpec,
    LanguageSpec,
    Source,
    leading_comment,
    string_literal_value,
)

DEFINITIONS = """
(function_declaration name: (identifier) @name) @def.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: (_) @receiver))
  name: (field_identifier) @name) @def.function
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
"""

CALLS = """
(call_expression function: [(identifier) (selector_expression)] @call)
"""

IMPORTS = """
(import_spec) @import
"""

_VERSION = re.compile(r"v\d+")


def default_package_name(path: str) -> str:
    """The name an import binds by default: the last element, skipping `/v2`."""
    parts = [p for p in path.split("/") if p]
    if len(parts) > 1 and _VERSION.fullmatch(parts[-1]):
        parts.pop()
    return parts[-1].removeprefix("go-") if parts else ""


def import_refs(node: TSNode, src: Source) -> list[ImportSpec]:
    path_node = node.child_by_field_name("path")
    if path_node is None:
        return []
    path = string_literal_value(src.text(path_node))
    name = node.child_by_field_name("name")
    if name is None:
        return [(path, [("*", default_package_name(path))])]
    alias = src.text(name)
    if alias == "_":
        return [(path, [])]
    return [(path, [("*", "" if alias == "." else alias)])]


def bases(node: TSNode, src: Source) -> list[tuple[str, str]]:
    """Embedded structs and interfaces: Go's form of inheritance."""
    kind = node.child_by_field_name("type")
    if kind is None:
        return []
    out: list[tuple[str, str]] = []
    if kind.type == "struct_type":
        for fields in kind.named_children:
            for field in fields.named_children:
                if field.type == "field_declaration" and field.child_by_field_name("name") is None:
                    t = field.child_by_field_name("type")
                    if t is not None:
                        out.append(("inherits", src.text(t).lstrip("*")))
    else:
        for elem in kind.named_children:
            if elem.type in ("type_elem", "constraint_elem"):
                out.extend(("inherits", src.text(t)) for t in elem.named_children
                           if t.type in ("type_identifier", "qualified_type"))
    return [(k, n) for k, n in out if re.fullmatch(r"[\w.]+", n)]


def _single_spec(node: TSNode) -> bool:
    parent = node.parent
    return parent is not None and parent.type == "type_declaration" and \
        sum(1 for c in parent.named_children if c.type == "type_spec") == 1


def docstring(node: TSNode, src: Source) -> str | None:
    if node.type == "type_spec":
        return leading_comment(node.parent if _single_spec(node) else node, SPECS["go"], src)
    return None


def signature(node: TSNode, src: Source) -> str | None:
    if node.type == "type_spec":
        kind = node.child_by_field_name("type")
        word = "struct" if kind is not None and kind.type == "struct_type" else "interface"
        return f"type {src.text(node.child_by_field_name('name'))} {word}"
    return None


def receiver_name(node: TSNode, src: Source) -> str:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ""
    for param in receiver.named_children:
        name = param.child_by_field_name("name")
        if name is not None:
            return src.text(name)
    return ""


SPECS = {
    "go": LanguageSpec(
        name="go",
        definitions=DEFINITIONS,
        calls=CALLS,
        imports=IMPORTS,
        import_refs=import_refs,
        bases=bases,
        docstring=docstring,
        signature=signature,
        receiver_name=receiver_name,
        extensions=(".go",),
        import_rule="import_go",
        package_peers=True,
        builtins=frozenset({"make", "len", "cap", "append", "new", "panic", "recover", "copy",
                            "delete", "close", "print", "println", "string", "int", "error"}),
    ),
}
