"""The text that stands for a node: what is embedded and what BM25 indexes.

Measured on the dev sets (BENCHMARKS.md, "Node text"): the embedded text is kind +
qualified name + path + signature + docstring (+ "defines a, b, ..." for a file):
short, so embedding stays cheap; the keyword text adds each symbol's whole body and, for
a file node, the whole file, because bodies help as keywords, where they cost nothing.
Body lines in the embedded text made texts 2-3x longer for no measured gain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from neuralmind.config import EMBED_MEMBERS
from neuralmind.graph.graph import Graph, extracted_lines
from neuralmind.graph.model import Node, file_of
from neuralmind.index.tokens import code_tokens


@dataclass
class NodeTextOptions:
    """What text stands for a node (the retrieval decision measured in the bench)."""

    path: bool = True
    docstring_chars: int = 600
    body_lines: int = 0           # code lines after the signature, for the embedded text
    keyword_body_lines: int = -1  # the same for the keyword text (-1: the whole body)
    humanize: bool = False        # also spell identifiers as words ("case insensitive dict")
    file_keyword_body: bool = True    # a file node's keyword text is the whole file
    embed_members: str = EMBED_MEMBERS  # which members get a vector: all, documented, none


DEFAULT_TEXT = NodeTextOptions()


def gets_vector(node: Node, opts: NodeTextOptions = DEFAULT_TEXT) -> bool:
    """Whether the node is embedded (`embed_members`): every file and top-level symbol is;
    a member (a dotted qualified name: a method, a nested function) per the option. Why an
    option: members are half the word pieces a build embeds (BENCHMARKS EMBED10)."""
    if opts.embed_members == "all" or node.kind == "file" or "." not in (node.qualname or ""):
        return True
    return opts.embed_members == "documented" and bool(node.docstring)


def humanize(identifier: str) -> str:
    words = [t for t in code_tokens(identifier) if "_" not in t and "." not in t]
    return " ".join(words)


def _body(node: Node, lines: list[str] | None, limit: int) -> list[str]:
    """Up to `limit` non-blank code lines of the node after its signature (-1: all)."""
    if not lines or limit == 0 or node.kind == "file":
        return []
    start = node.start_line + max(1, node.signature.count("\n") + 1) - 1
    doc = {ln.strip() for ln in node.docstring.splitlines() if ln.strip()}
    out: list[str] = []
    in_doc = False
    for raw in lines[start:node.end_line]:
        s = raw.strip()
        if s.startswith(('"""', "'''")):
            quote = s[:3]
            if not (len(s) >= 6 and s.endswith(quote)):
                in_doc = not in_doc
            continue
        if in_doc or not s or s in doc or s.startswith("#"):
            continue
        out.append(s)
        if 0 < limit <= len(out):
            break
    return out


def node_text(node: Node, lines: list[str] | None = None,
              opts: NodeTextOptions = DEFAULT_TEXT, children: Iterable[str] = ()) -> str:
    """The text embedded for a node: kind, qualified name, path, signature, docstring."""
    parts = [f"{node.kind} {node.qualname or node.name}"]
    if opts.humanize:
        parts.append(humanize(node.qualname or node.name))
    if opts.path:
        parts.append(node.file)
    if node.signature:
        parts.append(node.signature.strip())
    if node.docstring:
        parts.append(node.docstring.strip()[:opts.docstring_chars])
    kids = list(children)
    if kids:
        parts.append("defines " + ", ".join(kids[:40]))
    parts.extend(_body(node, lines, opts.body_lines))
    return "\n".join(parts)


def keyword_text(node: Node, lines: list[str] | None = None,
                 opts: NodeTextOptions = DEFAULT_TEXT, children: Iterable[str] = ()) -> str:
    """The text indexed by BM25: the names and prose of the node, optionally its code."""
    parts = [node.name, node.qualname, node.file if opts.path else "", node.signature,
             node.docstring, " ".join(children)]
    if node.kind == "file":
        if opts.file_keyword_body and lines:
            parts.extend(lines)
    else:
        parts.extend(_body(node, lines, opts.keyword_body_lines))
    return "\n".join(p for p in parts if p)


def file_children(graph: Graph, ids: Iterable[str] | None = None) -> dict[str, list[str]]:
    """file -> the names of its top-level symbols (a file node's text lists them).
    `ids`: only for the files of these node ids (a save), read per file: walking every node
    of the Linux kernel (835k) took ~0.4 s of each save."""
    files = None if ids is None else {file_of(i) for i in ids}
    nodes: Iterable[Node]
    if files is not None:
        nodes = [n for f in dict.fromkeys(files) for n in graph.nodes_by_file(f)]
    else:
        nodes = map(graph.nodes.__getitem__, graph.node_ids())
    children: dict[str, list[str]] = {}
    for n in nodes:
        if n.kind != "file" and n.qualname and "." not in n.qualname:
            children.setdefault(n.file, []).append(n.name)
    return children


def graph_texts(graph: Graph, root: Path, ids: Iterable[str], opts: NodeTextOptions = DEFAULT_TEXT,
                keyword: bool = True, children: dict[str, list[str]] | None = None,
                ) -> dict[str, tuple[str, str, str]]:
    """id -> (lowercased name, keyword text, embedded text) for the ids present in the
    graph (`keyword=False`: the keyword text is "" and no file is read for it; the
    embedded text is "" for a node that `gets_vector` leaves without one);
    `children`: `file_children(graph)`, made here when not given."""
    nodes: Mapping[str, Node] = graph.nodes
    if children is None:
        children = file_children(graph)
    cache: dict[str, list[str] | None] = {}
    need_lines = opts.body_lines or opts.keyword_body_lines
    out: dict[str, tuple[str, str, str]] = {}
    for node_id in ids:
        node = nodes.get(node_id)
        if node is None:
            continue
        lines = None
        if (need_lines if node.kind != "file" else opts.file_keyword_body) and (
                keyword or opts.body_lines):
            if node.file not in cache:
                cache[node.file] = extracted_lines(graph, root, node.file)
            lines = cache[node.file]
        kids = children.get(node.file, []) if node.kind == "file" else []
        out[node_id] = (node.name.lower(),
                        keyword_text(node, lines, opts, kids) if keyword else "",
                        node_text(node, lines, opts, kids) if gets_vector(node, opts) else "")
    return out
