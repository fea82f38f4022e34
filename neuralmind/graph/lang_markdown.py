"""Markdown: ATX headings become `section` nodes named by their heading path."""

from __future__ import annotations

import re

from tree_sitter import Node as TSNode

from neuralmind.graph.lang_spec import LanguageSpec, Source, cap_doc

DEFINITIONS = """
(section (atx_heading heading_content: (_) @name)) @def.section
"""


def clean_name(text: str) -> str:
    """Heading text without closing hashes, emphasis markers or extra spaces."""
    text = re.sub(r"\s+#+\s*$", "", text.strip())
    return re.sub(r"\s+", " ", text.replace("`", "").replace("**", "")).strip()


# A paragraph made only of images, badges, links or HTML tags says nothing to a reader.
_DECORATION = re.compile(r"(?:!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\([^()]*\)|<[^<>]+>|\s)+")


def _first_paragraph(node: TSNode, src: Source) -> str:
    for child in node.named_children:
        if child.type == "paragraph":
            text = re.sub(r"\s*\n\s*", " ", src.text(child))
            if _DECORATION.fullmatch(text):
                continue
            return cap_doc(text)
        if child.type == "section":
            break  # a subsection's text is not this section's summary
    return ""


def docstring(node: TSNode, src: Source) -> str | None:
    """A section's first paragraph; a document's first paragraph anywhere near the top."""
    if node.type == "document":
        for child in node.named_children:
            if child.type == "paragraph":
                return _first_paragraph(node, src)
            if child.type == "section":
                return _first_paragraph(child, src)
        return ""
    return _first_paragraph(node, src)


def signature(node: TSNode, src: Source) -> str | None:
    heading = node.named_children[0] if node.named_children else None
    return re.sub(r"\s+", " ", src.text(heading)).strip() if heading is not None else ""


SPECS = {
    "markdown": LanguageSpec(
        name="markdown",
        definitions=DEFINITIONS,
        docstring=docstring,
        signature=signature,
        clean_name=clean_name,
        comment_types=frozenset(),
        qual_sep="/",
        method_containers=frozenset(),
        extensions=(".md", ".markdown"),
        import_rule=None,
        builtins=frozenset(),
    ),
}
