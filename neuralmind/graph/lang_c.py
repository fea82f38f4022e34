"""C and C++: functions, out-of-line methods, classes, structs, enums, namespaces, includes."""

from __future__ import annotations

import re

from tree_sitter import Node as TSNode

from neuralmind.graph.lang_spec import ImportSpec, LanguageSpec, Source

# A function's name sits inside its declarator, possibly behind pointers/references.
_FUNCTION_NAME = """
[
  (function_declarator declarator: (_) @name)
  (pointer_declarator declarator: (function_declarator declarator: (_) @name))
  (pointer_declarator declarator: (pointer_declarator
    declarator: (function_declarator declarator: (_) @name)))
  %s
]"""

_CPP_REF = """(reference_declarator (function_declarator declarator: (_) @name))"""

_C_DEFS = """
(function_definition declarator: %s) @def.function
(struct_specifier name: (_) @name body: (_)) @def.struct
(union_specifier name: (_) @name body: (_)) @def.struct
(enum_specifier name: (_) @name body: (_)) @def.enum
(type_definition type: (struct_specifier !name body: (_)) declarator: (type_identifier) @name)
  @def.struct
"""

_CPP_DEFS = """
(class_specifier name: (_) @name body: (_)) @def.class
(namespace_definition name: (_) @name) @def.module
(field_declaration_list (field_declaration declarator: (function_declarator
  declarator: (_) @name)) @def.function)
(field_declaration_list (declaration declarator: (function_declarator
  declarator: (_) @name)) @def.function)
"""

C_CALLS = """
(call_expression function: [(identifier) (field_expression)] @call)
"""

CPP_CALLS = """
(call_expression function: [(identifier) (field_expression) (qualified_identifier)] @call)
(call_expression function: (template_function name: (_) @call))
"""

IMPORTS = """
(preproc_include) @import
"""

_GENERIC = re.compile(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>")


def import_refs(node: TSNode, src: Source) -> list[ImportSpec]:
    path = node.child_by_field_name("path")
    if path is None:
        return []
    text = src.text(path).strip()
    if path.type == "string_literal":
        return [(text.strip('"'), [("*", "")])]
    return [(text, [("*", "")])]  # <system/header.h>: kept with its brackets


def clean_name(text: str) -> str:
    return _GENERIC.sub("", re.sub(r"\s+", "", text))


def bases(node: TSNode, src: Source) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type == "base_class_clause":
            out.extend(("inherits", clean_name(src.text(b))) for b in child.named_children
                       if b.type in ("type_identifier", "qualified_identifier", "template_type"))
    return out


BUILTINS = frozenset({"printf", "malloc", "free", "sizeof", "memcpy", "strlen", "assert"})


def _spec(name: str, cpp: bool, extensions: tuple[str, ...]) -> LanguageSpec:
    fn = _FUNCTION_NAME % (_CPP_REF if cpp else "")
    return LanguageSpec(
        name=name,
        extensions=extensions,
        family="c",
        import_rule="import_c",
        builtins=BUILTINS,
        members_in_scope=True,
        definitions=_C_DEFS % fn + (_CPP_DEFS if cpp else ""),
        calls=CPP_CALLS if cpp else C_CALLS,
        imports=IMPORTS,
        import_refs=import_refs,
        bases=bases,
        wrappers=frozenset({"template_declaration"}) if cpp else frozenset(),
        name_split=re.compile(r"::") if cpp else None,
        clean_name=clean_name,
        method_containers=frozenset({"class", "struct"}),
    )


SPECS = {
    "c": _spec("c", cpp=False, extensions=(".c", ".h")),
    "cpp": _spec("cpp", cpp=True, extensions=(".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp",
                                              ".hxx", ".h++", ".ipp", ".inl")),
}
