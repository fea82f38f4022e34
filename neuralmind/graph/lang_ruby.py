"""Ruby: modules, classes, methods (incl. `def self.x`), require/require_relative, mixins."""

from __future__ import annotations

import re

from tree_sitter import Node as TSNode

from neuralmind.graph.lang_spec import ImportSpec, LanguageSpec, Source, string_literal_value

DEFINITIONS = """
(module name: (_) @name) @def.module
(class name: (_) @name) @def.class
(method name: (_) @name) @def.function
(singleton_method name: (_) @name) @def.function
"""

CALLS = """
(call method: (_)) @call
"""

IMPORTS = """
((call method: (identifier) @_m arguments: (argument_list . (string)))
  @import (#match? @_m "^(require|require_relative|load|autoload)$"))
"""

_SIMPLE_RECEIVER = re.compile(r"@?[\w:]+")
_MIXINS = frozenset({"include", "extend", "prepend"})


def call_target(node: TSNode, src: Source) -> str:
    """`Item.new.price` -> `.price`; `self.save` -> `self.save`; `helper(a)` -> `helper`."""
    method = node.child_by_field_name("method")
    if method is None:
        return ""
    name = src.text(method)
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return "" if name in _MIXINS or name.startswith("require") else name
    text = src.text(receiver)
    if name == "new" and _SIMPLE_RECEIVER.fullmatch(text):
        return text  # Foo.new constructs Foo
    return f"{text}.{name}" if _SIMPLE_RECEIVER.fullmatch(text) else f".{name}"


def import_refs(node: TSNode, src: Source) -> list[ImportSpec]:
    method = src.text(node.child_by_field_name("method"))
    args = node.child_by_field_name("arguments")
    strings = [c for c in args.named_children if c.type == "string"] if args else []
    if not strings:
        return []
    target = string_literal_value(src.text(strings[-1]))
    if method == "require_relative":
        target = "./" + target if not target.startswith(".") else target
    return [(target, [])]


def bases(node: TSNode, src: Source) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    superclass = node.child_by_field_name("superclass")
    if superclass is not None and superclass.named_children:
        out.append(("inherits", src.text(superclass.named_children[0])))
    body = node.child_by_field_name("body")
    for stmt in body.named_children if body is not None else ():
        if stmt.type != "call" or stmt.child_by_field_name("receiver") is not None:
            continue
        method = stmt.child_by_field_name("method")
        args = stmt.child_by_field_name("arguments")
        if method is not None and src.text(method) in _MIXINS and args is not None:
            out.extend(("implements", src.text(a)) for a in args.named_children
                       if a.type in ("constant", "scope_resolution"))
    return out


def signature(node: TSNode, src: Source) -> str | None:
    """The `def`/`class` line: Ruby bodies have no opening token to stop at."""
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    text = src.between(node.start_byte, end).split("\n", 1)[0]
    return re.sub(r"\s*[;=]?\s*(\bend)?\s*$", "", re.sub(r"\s+", " ", text))


SPECS = {
    "ruby": LanguageSpec(
        name="ruby",
        definitions=DEFINITIONS,
        calls=CALLS,
        imports=IMPORTS,
        import_refs=import_refs,
        bases=bases,
        call_target=call_target,
        signature=signature,
        name_split=re.compile(r"::"),
        method_containers=frozenset({"class", "module"}),
        extensions=(".rb", ".rake", ".gemspec"),
        filenames=("Rakefile", "Gemfile"),
        import_rule="import_ruby",
        builtins=frozenset({"new", "puts", "print", "raise", "require", "require_relative",
                            "attr_accessor", "attr_reader", "include", "extend", "lambda",
                            "proc"}),
        members_in_scope=True,
    ),
}
