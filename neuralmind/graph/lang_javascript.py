"""JavaScript, TypeScript and TSX: classes, functions, arrow functions, ES and CommonJS imports."""

from __future__ import annotations

import re

from tree_sitter import Node as TSNode

from neuralmind.graph.lang_spec import ImportSpec, LanguageSpec, Source, string_literal_value

_COMMON_DEFS = """
(class_declaration name: (_) @name) @def.class
(class name: (_) @name) @def.class
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_body (method_definition
  name: [(property_identifier) (private_property_identifier) (string)] @name) @def.function)
(variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @def.function
(expression_statement (assignment_expression left: (member_expression) @name
  right: [(arrow_function) (function_expression) (generator_function)]) @def.function)
(pair key: [(property_identifier) (string)] @name
  value: [(arrow_function) (function_expression) (generator_function)]) @def.function
(object (method_definition
  name: [(property_identifier) (private_property_identifier) (string)] @name) @def.function)
(variable_declarator name: (identifier) @name value: (object)) @def.scope
"""

_TS_DEFS = """
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(enum_declaration name: (_) @name) @def.enum
(internal_module name: (_) @name) @def.module
(class_body (abstract_method_signature name: (_) @name) @def.function)
(interface_body (method_signature name: (_) @name) @def.function)
"""

CALLS = """
(call_expression function: [(identifier) (member_expression)] @call)
(new_expression constructor: [(identifier) (member_expression)] @call)
"""

IMPORTS = """
(import_statement) @import
(export_statement source: (_)) @import
((call_expression function: (identifier) @_req arguments: (arguments . (string)))
  @import (#eq? @_req "require"))
"""


_NAME_NOISE = re.compile(r"^(?:this|self|window|globalThis|module\.exports|exports)\.|\.prototype\b")


def clean_name(text: str) -> str:
    """`Foo.prototype.bar` -> `Foo.bar`, `module.exports.x` -> `x`, `'key'` -> `key`."""
    return _NAME_NOISE.sub("", text.strip().strip("'\"`"))


def import_refs(node: TSNode, src: Source) -> list[ImportSpec]:
    if node.type == "call_expression":  # require('x')
        args = node.child_by_field_name("arguments")
        target = string_literal_value(src.text(args.named_children[0])) if args else ""
        parent = node.parent
        if parent is not None and parent.type == "variable_declarator":
            name = parent.child_by_field_name("name")
            if name is not None and name.type == "identifier":
                return [(target, [("*", src.text(name))])]
            if name is not None and name.type == "object_pattern":
                return [(target, _destructured(name, src))]
        return [(target, [])]
    source = node.child_by_field_name("source")
    if source is None:
        return []
    target = string_literal_value(src.text(source))
    names: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type == "import_clause":
            for part in child.named_children:
                if part.type == "identifier":
                    names.append(("default", src.text(part)))
                elif part.type == "namespace_import":
                    ident = [c for c in part.named_children if c.type == "identifier"]
                    if ident:
                        names.append(("*", src.text(ident[0])))
                elif part.type == "named_imports":
                    names.extend(_specifiers(part, "import_specifier", src))
        elif child.type == "export_clause":  # export { a as b } from './x'
            names.extend(_specifiers(child, "export_specifier", src))
    if node.type == "export_statement" and not names:
        names.append(("*", ""))  # export * from './x'
    return [(target, names)]


def _specifiers(node: TSNode, kind: str, src: Source) -> list[tuple[str, str]]:
    out = []
    for spec in node.named_children:
        if spec.type != kind:
            continue
        name = spec.child_by_field_name("name")
        alias = spec.child_by_field_name("alias")
        if name is not None:
            out.append((src.text(name), src.text(alias) if alias is not None else src.text(name)))
    return out


def _destructured(pattern: TSNode, src: Source) -> list[tuple[str, str]]:
    out = []
    for child in pattern.named_children:
        if child.type == "shorthand_property_identifier_pattern":
            out.append((src.text(child), src.text(child)))
        elif child.type == "pair_pattern":
            key, value = child.child_by_field_name("key"), child.child_by_field_name("value")
            if key is not None and value is not None and value.type == "identifier":
                out.append((src.text(key), src.text(value)))
    return out


_GENERIC = re.compile(r"<.*>", re.S)


def _type_text(node: TSNode, src: Source) -> str:
    return _GENERIC.sub("", src.text(node)).strip()


def bases(node: TSNode, src: Source) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type == "class_heritage":
            for part in child.named_children:
                if part.type == "extends_clause":
                    out.extend(("inherits", _type_text(v, src))
                               for v in part.children_by_field_name("value"))
                elif part.type == "implements_clause":
                    out.extend(("implements", _type_text(t, src)) for t in part.named_children)
                else:  # plain JavaScript: the heritage is the expression itself
                    out.append(("inherits", _type_text(part, src)))
        elif child.type == "extends_type_clause":  # interface A extends B, C
            out.extend(("inherits", _type_text(t, src)) for t in child.named_children)
    return [(k, n) for k, n in out if re.fullmatch(r"[\w$.]+", n)]


BUILTINS = frozenset({
    "require", "parseInt", "parseFloat", "setTimeout", "setInterval", "clearTimeout", "String",
    "Number", "Boolean", "Array", "Object", "Promise", "Error", "Symbol", "Map", "Set", "Date",
    "RegExp", "fetch"})


def _spec(name: str, typed: bool, extensions: tuple[str, ...]) -> LanguageSpec:
    return LanguageSpec(
        name=name,
        extensions=extensions,
        family="js",
        import_rule="import_js",
        builtins=BUILTINS,
        star_reexports=True,
        definitions=_COMMON_DEFS + (_TS_DEFS if typed else ""),
        calls=CALLS,
        imports=IMPORTS,
        import_refs=import_refs,
        bases=bases,
        comment_types=frozenset({"comment"}),
        skip_before=frozenset({"decorator"}),
        clean_name=clean_name,
        name_split=re.compile(r"\."),
        wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration",
                            "expression_statement", "assignment_expression"}),
        signature_wrappers=frozenset({"lexical_declaration", "variable_declaration"}),
        body_types=frozenset({"statement_block", "class_body"}),
    )


SPECS = {
    "javascript": _spec("javascript", typed=False,
                        extensions=(".js", ".mjs", ".cjs", ".jsx")),
    "typescript": _spec("typescript", typed=True, extensions=(".ts", ".mts", ".cts")),
    "tsx": _spec("tsx", typed=True, extensions=(".tsx",)),
}
