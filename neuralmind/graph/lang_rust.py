"""Rust: functions, impl methods (qualified by the impl's type), structs, enums, traits, mods."""

from __future__ import annotations

import re

from tree_sitter import Node as TSNode

from neuralmind.graph.lang_spec import ImportSpec, LanguageSpec, Source

DEFINITIONS = """
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(union_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(trait_item name: (type_identifier) @name) @def.trait
(mod_item name: (identifier) @name body: (declaration_list)) @def.module
(impl_item type: (_) @name) @def.scope
(macro_definition name: (identifier) @name) @def.function
"""

CALLS = """
(call_expression function: [(identifier) (scoped_identifier) (field_expression)] @call)
(call_expression function: (generic_function function: (_) @call))
"""

IMPORTS = """
(use_declaration) @import
(mod_item !body) @import
"""

_GENERIC = re.compile(r"<.*>", re.S)


def clean_name(text: str) -> str:
    """`&'a mut foo::Bar<T>` -> `Bar`: what an impl block is for."""
    text = _GENERIC.sub("", text)
    text = re.sub(r"^&\s*('\w+\s+)?(mut\s+)?|^dyn\s+", "", text.strip())
    return text.split("::")[-1].strip()


def _flatten(node: TSNode, prefix: list[str], src: Source,
             out: list[tuple[list[str], str]]) -> None:
    """Every path a use tree imports, with its local alias ("*" alias "" = glob)."""
    t = node.type
    if t in ("identifier", "crate", "self", "super", "metavariable"):
        name = src.text(node)
        out.append(([*prefix, name], name))
    elif t == "scoped_identifier":
        parts = src.text(node).replace(" ", "").split("::")
        out.append(([*prefix, *parts], parts[-1]))
    elif t == "use_as_clause":
        path, alias = node.child_by_field_name("path"), node.child_by_field_name("alias")
        if path is not None and alias is not None:
            out.append(([*prefix, *src.text(path).replace(" ", "").split("::")], src.text(alias)))
    elif t == "use_wildcard":
        inner = node.named_children[0] if node.named_children else None
        parts = src.text(inner).replace(" ", "").split("::") if inner is not None else []
        out.append(([*prefix, *parts, "*"], ""))
    elif t == "scoped_use_list":
        path = node.child_by_field_name("path")
        more = src.text(path).replace(" ", "").split("::") if path is not None else []
        lst = node.child_by_field_name("list")
        if lst is not None:
            _flatten(lst, [*prefix, *more], src, out)
    elif t == "use_list":
        for child in node.named_children:
            _flatten(child, prefix, src, out)


def import_refs(node: TSNode, src: Source) -> list[ImportSpec]:
    if node.type == "mod_item":  # `mod util;` loads util.rs / util/mod.rs
        name = src.text(node.child_by_field_name("name"))
        return [(f"self::{name}", [("*", name)])]
    arg = node.child_by_field_name("argument")
    if arg is None:
        return []
    paths: list[tuple[list[str], str]] = []
    _flatten(arg, [], src, paths)
    grouped: dict[str, list[tuple[str, str]]] = {}
    for parts, alias in paths:
        if parts[-1] == "*":
            grouped.setdefault("::".join(parts[:-1]), []).append(("*", ""))
        elif parts[-1] == "self" and len(parts) > 1:  # use a::b::{self} binds b
            grouped.setdefault("::".join(parts[:-2]), []).append((parts[-2], parts[-2]))
        elif len(parts) == 1:
            grouped.setdefault(parts[0], []).append(("*", alias))
        else:
            grouped.setdefault("::".join(parts[:-1]), []).append((parts[-1], alias))
    return [(target, names) for target, names in grouped.items() if target]


def _type_path(text: str) -> str:
    """`shapes::Shape<T>` -> `shapes::Shape`: the path resolution can follow."""
    return re.sub(r"\s+", "", _GENERIC.sub("", text))


def bases(node: TSNode, src: Source) -> list[tuple[str, str]]:
    if node.type == "impl_item":
        trait = node.child_by_field_name("trait")
        return [("implements", _type_path(src.text(trait)))] if trait is not None else []
    if node.type == "trait_item":
        bounds = node.child_by_field_name("bounds")
        if bounds is not None:
            return [("inherits", _type_path(src.text(b))) for b in bounds.named_children
                    if b.type in ("type_identifier", "scoped_type_identifier", "generic_type")]
    return []


SPECS = {
    "rust": LanguageSpec(
        name="rust",
        definitions=DEFINITIONS,
        calls=CALLS,
        imports=IMPORTS,
        import_refs=import_refs,
        bases=bases,
        clean_name=clean_name,
        comment_types=frozenset({"line_comment", "block_comment"}),
        skip_before=frozenset({"attribute_item"}),
        method_containers=frozenset({"trait", "scope"}),
        extensions=(".rs",),
        import_rule="import_rust",
        builtins=frozenset(),
        star_reexports=True,
    ),
}
