"""One file's bytes -> nodes, contains edges and unresolved references.

The extractor is generic: each language contributes a `LanguageSpec` (queries
plus small hooks, in `lang_<name>.py`). Definitions, calls and imports are found
with tree-sitter queries, which run in C; Python code only touches the matched
nodes. Nesting (which class holds which method, which function makes which call)
comes from one sweep over byte ranges, never from walking the tree.

`extract_file` never raises: a failure yields the file node alone with `error`
set, so one odd file cannot stop a build.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Any

from tree_sitter import Node as TSNode
from tree_sitter import QueryCursor

from neuralmind.graph import languages
from neuralmind.graph.lang_spec import (
    LanguageSpec,
    Source,
    cap_doc,
    clean_comment,
    generic_signature,
    leading_comment,
)
from neuralmind.graph.model import Edge, FileExtract, Node, Reference, node_id

log = logging.getLogger("neuralmind.graph")

# Watchdog: a file whose extraction runs longer than this is given up (file node only, error
# "ExtractTimeout"), so one hostile file cannot stall a build or a save. The parse is cut
# short at the deadline; a query cannot be interrupted, so it is checked after. The worst
# files the walker admits (<= 1 MB: 400k-deep nesting, 60k call lines) took 2-6 s on a
# loaded 2-core machine (benchmarks/stress/fuzz_extract.py); normal files take milliseconds.
EXTRACT_TIMEOUT_SECONDS = 10.0
# tree-sitter holds the GIL between two calls of the read callback, and the callback is
# where another thread (the editor's event loop) gets it back: 64 KB chunks stalled a
# ticker thread 15 ms on a 140 KB file, 8 KB chunks 6 ms, at the same parse speed.
_PARSE_CHUNK = 1 << 13
# But py-tree-sitter 0.26.1 never releases the chunks a read callback returns (~185 KB
# kept per parse of a 158 KB file: every save, for the life of a server), and bytearray
# chunks crash its queries. A file up to this size is parsed from bytes in one call
# (no leak; ~13 ms of GIL at most); larger ones, rare, go to graph.big_file_worker's
# process (parsed there in one call), or are read in chunks when it is not at hand.
CHUNKED_PARSE_OVER = 128 * 1024


class ExtractTimeout(Exception):
    """Extraction of one file ran past EXTRACT_TIMEOUT_SECONDS."""

def spec_for(language: str) -> LanguageSpec | None:
    return languages.spec_for(language)


@dataclass(slots=True)
class _Def:
    node: TSNode          # the declaration itself
    outer: TSNode         # the declaration with its wrappers (decorators, export)
    kind: str             # NODE_KINDS kind, or "scope"
    name: str
    prefix: list[str]     # qualifier parts written in the name or receiver
    start: int            # byte range used for nesting: the declaration without wrappers
    end: int
    end_line: int
    qual: str = ""
    id: str = ""          # "" for scopes, which make no node


# C++ constructs that never occur in C: a `.h` header containing them is C++.
_CPP_HEADER = re.compile(
    rb"^\s*(?:class\s+\w+[^;]*\{|namespace\s+[\w:]*\s*\{|template\s*<"
    rb"|(?:public|private|protected)\s*:)", re.M)


def extract_file(path: str, data: bytes, language: str, *,
                 one_call: bool = False) -> FileExtract:
    """Extract `path` (repo-relative, '/'-separated) written in `language`.

    A `.h` file handed over as C but written in C++ is parsed (and labelled) as cpp.
    `one_call`: parse even a large file from bytes in one call (same tree, no leak, no
    watchdog during the parse): for a process where holding the GIL stalls nobody.
    """
    language = _effective_language(path, data, language)
    try:
        return _extract(path, data, language, hashlib.sha1(data).hexdigest(), one_call)
    except Exception as exc:  # a grammar or hook bug must not stop the build
        log.warning("extraction failed for %s: %s", path, exc, exc_info=log.isEnabledFor(10))
        return failed_extract(path, data, language, exc)


def failed_extract(path: str, data: bytes, language: str, exc: Exception) -> FileExtract:
    """What a file that could not be extracted yields: its file node alone, `error` set."""
    language = _effective_language(path, data, language)
    return FileExtract(path, language, hashlib.sha1(data).hexdigest(),
                       [_file_node(path, data, language, "")], [], [],
                       error=f"{type(exc).__name__}: {exc}")


def _effective_language(path: str, data: bytes, language: str) -> str:
    if language == "c" and path.endswith(".h") and _CPP_HEADER.search(data):
        return "cpp"
    return language


def line_count(data: bytes) -> int:
    """Lines as the extractor numbers them: by LF, or by CR in a file that has no LF.

    Build and validate code should use this so that spans and file lengths agree.
    """
    sep = b"\r" if b"\n" not in data and b"\r" in data else b"\n"
    lines = data.count(sep)
    return max(1, lines if data.endswith(sep) else lines + 1)


def _file_node(path: str, data: bytes, language: str, docstring: str) -> Node:
    return Node(id=node_id(path), kind="file", name=os.path.basename(path), qualname="",
                file=path, start_line=1, end_line=line_count(data), language=language,
                docstring=docstring, content_hash=hashlib.sha1(data).hexdigest())


def _extract(path: str, data: bytes, language: str, sha1: str, one_call: bool) -> FileExtract:
    spec = spec_for(language)
    if spec is None:
        raise ValueError(f"unsupported language {language!r}")
    if b"\r" in data and b"\n" not in data:
        # Classic-Mac line endings: same length, so byte offsets stay valid.
        data = data.replace(b"\r", b"\n")
    src = Source(data)
    deadline = time.monotonic() + EXTRACT_TIMEOUT_SECONDS
    tree = _parse(language, data, deadline, one_call)
    root = tree.root_node
    file_doc = _file_docstring(root, src, spec)
    file_node = _file_node(path, data, language, file_doc)
    file_node.content_hash = sha1

    defs = _collect_defs(root, spec, src, deadline)
    nodes, edges, by_qual = _build_nodes(path, language, defs, spec, src)
    references: list[Reference] = []
    captures = _reference_captures(root, spec, deadline)
    _imports(captures.get("import", []), spec, src, path, references)
    _bases(defs, by_qual, spec, src, references)
    _calls(captures.get("call", []), spec, src, path, [d for d in defs if d.id], references)
    return FileExtract(path, language, sha1, [file_node, *nodes], edges, references,
                       partial=root.has_error)


# --- definitions -------------------------------------------------------------------------


def _parse(language: str, data: bytes, deadline: float, one_call: bool = False) -> Any:
    """Parse a large file in chunks so the watchdog can stop tree-sitter (which holds the
    GIL) and other threads run in between; a small one in one call (CHUNKED_PARSE_OVER)."""
    if one_call or len(data) <= CHUNKED_PARSE_OVER:
        return languages.parser(language).parse(data)
    late = False

    def read(offset: int, _point: object) -> bytes:
        nonlocal late
        if time.monotonic() > deadline:
            late = True
            return b""
        return data[offset:offset + _PARSE_CHUNK]

    tree = languages.parser(language).parse(read)
    if late:
        raise ExtractTimeout(f"parsing took over {EXTRACT_TIMEOUT_SECONDS:g} s")
    return tree


def _check(deadline: float | None, what: str) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise ExtractTimeout(f"{what} took over {EXTRACT_TIMEOUT_SECONDS:g} s")


def _collect_defs(root: TSNode, spec: LanguageSpec, src: Source,
                  deadline: float | None = None) -> list[_Def]:
    seen: set[int] = set()
    defs: list[_Def] = []
    cursor = QueryCursor(languages.query(spec.name, spec.definitions))
    # No progress_callback: with tree-sitter 0.26.1 any callback on a query segfaults.
    matches = cursor.matches(root)
    _check(deadline, "finding definitions")
    for _, caps in matches:
        kind = node = None
        for key, found in caps.items():
            if key.startswith("def."):
                kind, node = key[4:], found[0]
                break
        names = caps.get("name")
        if node is None or kind is None or not names or node.id in seen:
            continue
        seen.add(node.id)
        raw = src.text(names[0])
        if spec.clean_name is not None:
            raw = spec.clean_name(raw)
        parts = [p for p in spec.name_split.split(raw) if p] if spec.name_split else [raw]
        if not parts or not parts[-1].strip():
            continue
        prefix = parts[:-1]
        receiver = caps.get("receiver")
        if receiver:
            prefix = [_type_name(src.text(receiver[0]))]
        outer = node
        while outer.parent is not None and outer.parent.type in spec.wrappers:
            outer = outer.parent
        end, end_line = node.end_byte, _end_line(node)
        if node.type in spec.open_scopes and node.child_by_field_name("body") is None:
            end, end_line = root.end_byte, max(end_line, _end_line(root))
        defs.append(_Def(node, outer, kind, parts[-1].strip(), prefix,
                         node.start_byte, end, end_line))
    defs.sort(key=lambda d: (d.start, -d.end))
    return defs


_TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]*")


def _type_name(text: str) -> str:
    """`*Server[T]` -> `Server`: the bare type a receiver or impl names."""
    text = re.sub(r"<.*>|\[.*\]", "", text)
    names = _TYPE_NAME.findall(text.replace("::", "."))
    keep = [n for n in names if n not in ("mut", "const", "dyn", "impl")]
    return keep[-1] if keep else text.strip()


def _end_line(node: TSNode) -> int:
    row, col = node.end_point
    return row if col == 0 and row > node.start_point[0] else row + 1


def _build_nodes(path: str, language: str, defs: list[_Def], spec: LanguageSpec,
                 src: Source) -> tuple[list[Node], list[Edge], dict[str, str]]:
    nodes: list[Node] = []
    used: dict[str, int] = {}
    by_qual: dict[str, str] = {}          # first node id per qualname, for contains lookups
    # (child id, lexical parent, qualname prefix, whether the name carried a qualifier)
    parents: list[tuple[str, _Def | None, str, bool]] = []
    stack: list[_Def] = []
    sep = spec.qual_sep
    for d in defs:
        while stack and stack[-1].end <= d.start:
            stack.pop()
        parent = stack[-1] if stack else None
        base = parent.qual if parent else ""
        qual_parts = [base] if base else []
        qual_parts.extend(d.prefix)
        qual_parts.append(d.name)
        d.qual = sep.join(qual_parts)
        stack.append(d)
        if d.kind == "scope":
            continue
        kind = d.kind
        if kind == "function" and (d.prefix or (parent and parent.kind in spec.method_containers)):
            kind = "method"
        n = used.get(d.qual, 0) + 1
        used[d.qual] = n
        qual = d.qual if n == 1 else f"{d.qual}#{n}"
        d.id = node_id(path, qual)
        by_qual.setdefault(d.qual, d.id)
        sig = spec.signature(d.node, src) if spec.signature else None
        if sig is None:
            sig = generic_signature(d.node, spec, src)
        doc = spec.docstring(d.node, src)
        if doc is None:
            doc = leading_comment(d.outer, spec, src)
        nodes.append(Node(
            id=d.id, kind=kind, name=d.name, qualname=qual, file=path,
            start_line=d.outer.start_point[0] + 1, end_line=d.end_line,
            language=language, signature=sig, docstring=doc,
            content_hash=hashlib.sha1(src.data[d.outer.start_byte:d.node.end_byte]).hexdigest()))
        owner_prefix = sep.join([base, *d.prefix] if base else d.prefix)
        parents.append((d.id, parent, owner_prefix, bool(d.prefix)))
    edges: list[Edge] = []
    for child, parent, owner_prefix, qualified in parents:
        owner = by_qual.get(owner_prefix) if owner_prefix else None
        if parent is not None and parent.id and not (qualified and owner):
            owner = parent.id  # lexical nesting, unless the name itself says otherwise
        edges.append(Edge(owner if owner and owner != child else node_id(path), child,
                          "contains"))
    return nodes, edges, by_qual


_LICENCE = re.compile(r"copyright|licen[cs]e|spdx-license", re.I)
_PRAGMA_LINE = re.compile(r"^(?:/usr/bin/|/bin/|.*-\*-.*-\*-|vim?:)")


def _file_docstring(root: TSNode, src: Source, spec: LanguageSpec) -> str:
    """The module docstring, else the first comment block at the top that is not a licence."""
    doc = spec.docstring(root, src)
    if doc is not None:
        return doc
    blocks: list[list[str]] = []
    last = -2
    for child in root.children:
        if child.type == "php_tag":
            continue
        if child.type not in spec.comment_types:
            break
        if not blocks or child.start_point[0] > last + 1:
            blocks.append([])
        blocks[-1].append(clean_comment(src.text(child)))
        row, col = child.end_point
        last = row - 1 if col == 0 and row > child.start_point[0] else row
    for block in blocks:
        lines = [ln for ln in "\n".join(block).splitlines() if not _PRAGMA_LINE.match(ln)]
        text = "\n".join(lines).strip()
        if text and not _LICENCE.search(text):
            return cap_doc(text)
    return ""


# --- references --------------------------------------------------------------------------


def _reference_captures(root: TSNode, spec: LanguageSpec,
                        deadline: float | None = None) -> dict[str, list[TSNode]]:
    """Calls and imports in one pass over the tree (one query, two capture names)."""
    source = spec.calls + spec.imports
    if not source.strip():
        return {}
    captures = QueryCursor(languages.query(spec.name, source)).captures(root)
    _check(deadline, "finding references")
    return captures


def _in_order(nodes: list[TSNode]) -> list[TSNode]:
    """By position, outer after inner at the same start: tree-sitter's capture order for
    nested matches that start together (`Engine().start()`) varies from run to run."""
    return sorted(nodes, key=lambda n: (n.start_byte, n.end_byte))


def _imports(found: list[TSNode], spec: LanguageSpec, src: Source, path: str,
             out: list[Reference]) -> None:
    file_id = node_id(path)
    for node in _in_order(found):
        for target, names in spec.import_refs(node, src):
            if target:
                out.append(Reference(file_id, "imports", target, node.start_point[0] + 1, names))


def _bases(defs: list[_Def], by_qual: dict[str, str], spec: LanguageSpec, src: Source,
           out: list[Reference]) -> None:
    for d in defs:
        if d.kind == "function" or d.kind == "section":
            continue
        found = spec.bases(d.node, src)
        if not found:
            continue
        source = d.id or by_qual.get(d.qual, "")
        if not source:
            continue  # an impl of a type declared in another file
        line = d.node.start_point[0] + 1
        for kind, name in found:
            if name:
                out.append(Reference(source, kind, name, line))


_CALLEE_SEPARATORS = re.compile(r"::|->|\?\.|!\.")
_SIMPLE_CALLEE = re.compile(r"[@$]?[\w$]+(?:\.[\w$]+)*")
_LAST_NAME = re.compile(r"[\w$]+$")


def normalise_callee(text: str) -> str:
    """`a::b`, `a->b`, `a?.b` -> dotted; a complex receiver is reduced to `.name`."""
    text = _CALLEE_SEPARATORS.sub(".", text.strip())
    if text.startswith("super()."):  # Python: the base class's method
        text = "super" + text[7:]
    if _SIMPLE_CALLEE.fullmatch(text):
        return text.lstrip("$") if text.startswith("$this") else text
    last = _LAST_NAME.search(text)
    if last is None:
        return ""
    return "." + last.group(0) if "." in text else last.group(0)


def _calls(callees: list[TSNode], spec: LanguageSpec, src: Source, path: str,
           defs: list[_Def], out: list[Reference]) -> None:
    """Each call, attributed to the innermost declaration around it (one sweep).

    Ranges include wrappers, so a decorator's call belongs to the function it decorates.
    """
    if not callees:
        return
    callees = _in_order(callees)
    file_id = node_id(path)
    data = src.data
    call_target = spec.call_target
    ranges = sorted(((d.outer.start_byte, d.end, d.id) for d in defs),
                    key=lambda r: (r[0], -r[1]))
    receivers: dict[str, str] = {}
    if spec.receiver_name is not None:
        for d in defs:
            name = spec.receiver_name(d.node, src)
            if name:
                receivers[d.id] = name + "."
    stack: list[tuple[int, int, str]] = []
    i = 0
    for callee in callees:
        pos = callee.start_byte
        while i < len(ranges) and ranges[i][0] <= pos:
            while stack and stack[-1][1] <= ranges[i][0]:
                stack.pop()
            stack.append(ranges[i])
            i += 1
        while stack and stack[-1][1] <= pos:
            stack.pop()
        if call_target is not None:
            target = normalise_callee(call_target(callee, src))
        else:
            target = normalise_callee(data[pos:callee.end_byte].decode("utf-8", "replace"))
        if not target:
            continue
        source = stack[-1][2] if stack else file_id
        receiver = receivers.get(source)
        if receiver and target.startswith(receiver):
            target = "self." + target[len(receiver):]
        out.append(Reference(source, "calls", target, callee.start_point[0] + 1))
