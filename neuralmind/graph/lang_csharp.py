"""C#: namespaces (as modules), classes, structs, interfaces, enums, records, methods, usings."""

from __future__ import annotations

import re

from tree_sitter import Node as TSNode

from neuralmind.graph.lang_spec import ImportSpec, LanguageSpec, Source

DEFINITIONS = """
(namespace_declaration name: (_) @name) @def.module
(file_scoped_namespace_declaration name: (_) @name) @def.module
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.function
(constructor_declaration name: (identifier) @name) @def.function
(local_function_statement name: (identifier) @name) @def.function
"""

CALLS = """
(invocation_expression function: [(identifier) (member_access_expression) (generic_name)] @call)
(object_creation_expression type: (_) @call)
"""

IMPORTS = """
(using_directive) @import
"""

_GENERIC = re.compile(r"<.*>", re.S)
_INTERFACE_NAME = re.compile(r"I[A-Z]")


def import_refs(node: TSNode, src: Source) -> list[ImportSpec]:
    text = re.sub(r"\s+", " ", src.text(node)).strip().removesuffix(";")
    text = re.sub(r"^(global )?using (static )?", "", text)
    if "=" in text:  # using H = Acme.Util.Helper;
        alias, _, target = (t.strip() for t in text.partition("="))
        head, _, last = _GENERIC.sub("", target).rpartition(".")
        return [(head, [(last, alias)])] if head else [(last, [("*", alias)])]
    return [(text.replace(" ", ""), [("*", "")])]


def bases(node: TSNode, src: Source) -> list[tuple[str, str]]:
    """Base list entries; C# does not mark interfaces, the `IName` convention does."""
    out: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type != "base_list":
            continue
        for i, base in enumerate(child.named_children):
            if base.type not in ("identifier", "qualified_name", "generic_name"):
                continue
            name = _GENERIC.sub("", src.text(base)).strip()
            short = name.rsplit(".", 1)[-1]
            if node.type == "interface_declaration":
                out.append(("inherits", name))
            elif _INTERFACE_NAME.match(short) or i > 0:
                out.append(("implements", name))
            else:
                out.append(("inherits", name))
    return out


SPECS = {
    "csharp": LanguageSpec(
        name="csharp",
        definitions=DEFINITIONS,
        calls=CALLS,
        imports=IMPORTS,
        import_refs=import_refs,
        bases=bases,
        skip_before=frozenset({"attribute_list"}),
        name_split=re.compile(r"\."),
        clean_name=lambda text: re.sub(r"\s+", "", text),
        open_scopes=frozenset({"file_scoped_namespace_declaration"}),
        extensions=(".cs",),
        import_rule="import_csharp",
        declared_namespaces=True,
        builtins=frozenset(),
        members_in_scope=True,
    ),
}
