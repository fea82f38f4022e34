"""PHP: namespaces (as modules), classes, interfaces, traits, enums, functions, use/require."""

from __future__ import annotations

import re

from tree_sitter import Node as TSNode

from neuralmind.graph.lang_spec import ImportSpec, LanguageSpec, Source, string_literal_value

DEFINITIONS = """
(namespace_definition name: (_) @name) @def.module
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(function_definition name: (name) @name) @def.function
(method_declaration name: (name) @name) @def.function
"""

CALLS = """
(function_call_expression function: [(name) (qualified_name)] @call)
(member_call_expression) @call
(nullsafe_member_call_expression) @call
(scoped_call_expression) @call
(object_creation_expression [(name) (qualified_name)] @call)
"""

IMPORTS = """
(namespace_use_declaration) @import
(require_expression) @import
(require_once_expression) @import
(include_expression) @import
(include_once_expression) @import
"""

_SIMPLE = re.compile(r"\$?[\w\\]+")


def call_target(node: TSNode, src: Source) -> str:
    """`$this->save()` -> `this.save`; `Helper::go()` -> `Helper.go`; `f()->g()` -> `.g`."""
    if node.type in ("name", "qualified_name"):
        return src.text(node).lstrip("\\").replace("\\", ".")
    name = node.child_by_field_name("name")
    if name is None:
        return ""
    owner = node.child_by_field_name("object") or node.child_by_field_name("scope")
    text = src.text(owner) if owner is not None else ""
    if not _SIMPLE.fullmatch(text):
        return f".{src.text(name)}"
    text = text.lstrip("\\").replace("\\", ".")
    if text == "$this":
        text = "this"
    return f"{text}.{src.text(name)}"


def _ns(text: str) -> str:
    return re.sub(r"\s+", "", text).strip("\\").replace("\\", ".")


def import_refs(node: TSNode, src: Source) -> list[ImportSpec]:
    if node.type != "namespace_use_declaration":  # require 'x.php' / __DIR__ . '/x.php'
        strings = [c for c in _descendants(node) if c.type in ("string", "encapsed_string")]
        if not strings:
            return []
        return [(string_literal_value(src.text(strings[-1])).lstrip("/"), [])]
    prefix = ""
    group = None
    for child in node.named_children:
        if child.type == "namespace_name":
            prefix = _ns(src.text(child))
        elif child.type == "namespace_use_group":
            group = child
    clauses = group.named_children if group is not None else node.named_children
    out: dict[str, list[tuple[str, str]]] = {}
    for clause in clauses:
        if clause.type != "namespace_use_clause":
            continue
        parts = [c for c in clause.named_children if c.type in ("name", "qualified_name")]
        alias_node = clause.child_by_field_name("alias")
        if alias_node is not None:
            parts = [p for p in parts if p.id != alias_node.id]
        if not parts:
            continue
        full = ".".join(x for x in (prefix, _ns(src.text(parts[0]))) if x)
        head, _, last = full.rpartition(".")
        alias = src.text(alias_node) if alias_node is not None else last
        out.setdefault(head, []).append((last, alias))
    return [(head, names) for head, names in out.items() if head]


def _descendants(node: TSNode) -> list[TSNode]:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(n.named_children))
    return out


def bases(node: TSNode, src: Source) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type == "base_clause":
            out.extend(("inherits", _ns(src.text(n))) for n in child.named_children)
        elif child.type == "class_interface_clause":
            out.extend(("implements", _ns(src.text(n))) for n in child.named_children)
    body = node.child_by_field_name("body")
    for stmt in body.named_children if body is not None else ():
        if stmt.type == "use_declaration":  # trait use inside a class
            out.extend(("implements", _ns(src.text(n))) for n in stmt.named_children
                       if n.type in ("name", "qualified_name"))
    return out


SPECS = {
    "php": LanguageSpec(
        name="php",
        definitions=DEFINITIONS,
        calls=CALLS,
        imports=IMPORTS,
        import_refs=import_refs,
        bases=bases,
        call_target=call_target,
        name_split=re.compile(r"\\"),
        open_scopes=frozenset({"namespace_definition"}),
        method_containers=frozenset({"class", "interface", "trait", "enum"}),
        extensions=(".php",),
        import_rule="import_php",
        declared_namespaces=True,
        builtins=frozenset({"count", "isset", "array_map", "array_filter", "sprintf", "strlen",
                            "in_array", "implode", "explode", "is_array", "json_encode"}),
    ),
}
