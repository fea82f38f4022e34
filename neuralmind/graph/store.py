"""The stored code graph: `<state>/graph.db`, SQLite with one row per file.

Why SQLite and not one JSON file: both load Django's graph (~2.8k files, ~43k nodes,
~190k unresolved references) in about half a second, because either way the cost is
parsing compact JSON rows and building dataclasses. The difference is the write after
a one-file change, which the LSP server does on every save: a JSON document must be
re-serialised and rewritten whole (~20 MB, ~0.8 s for Django), while here only the
rows whose content changed are rewritten (the saved file's extract and the few files
whose resolved edges moved) in one transaction. The transaction is also the crash
guarantee: a build killed at any moment leaves the previous committed graph (WAL
mode, so readers never wait for the writer either).

Tables:
    meta(key, value)   format, store (layout version), schema, generation, token,
                       built_at, meta (JSON), communities (JSON)
    files(path, sha1, language, size, mtime_ns, lines, partial, error, extract, out)
        path = UTF-8 bytes (surrogateescape), error and the JSON columns ASCII-escaped
        extract = {"n": [[kind, name, qualname, start, end, signature, docstring,
                          content_hash, id or 0, language or 0], ...],
                   "e": [[source, target, kind, resolved, count], ...],     # contains
                   "r": [[source, kind, target, line, names], ...]}         # references
        out     = [[source, target id, kind, resolved, count], ...]   # resolved edges
                  whose source lies in this file
    Sources inside a file's rows are node positions in that file (an id string when
    not). Node.community is not stored per node: it follows from communities' files.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import signal
import sqlite3
import sys
import time
import uuid
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from neuralmind.graph.graph import (
    Community,
    FileInfo,
    Graph,
    assign_node_communities,
    group_by_source_file,
)
from neuralmind.graph.model import (
    SCHEMA_VERSION,
    Edge,
    FileExtract,
    Node,
    PackedReferences,
    edge_key,
    node_id,
    reference_kind_code,
)
from neuralmind.heap import no_gc
from neuralmind.sqlite_tx import immediate
from neuralmind.statedir import move_aside

log = logging.getLogger("neuralmind.graph")

GRAPH_FILE = "graph.db"
FORMAT = "neuralmind-graph"
KNOWN_SCHEMAS = frozenset({SCHEMA_VERSION})
STORE_VERSION = "1"          # layout of the tables below; the IR itself is SCHEMA_VERSION
BUSY_TIMEOUT = 30.0


def _dumps(obj: Any) -> str:
    # ASCII escapes keep odd file names (undecodable bytes as lone surrogates) round-tripping.
    return json.dumps(obj, separators=(",", ":"))


def _enc(path: str) -> bytes:
    """Paths are stored as bytes: a name with undecodable bytes (a lone surrogate after
    git's or os's surrogateescape decoding) is not valid UTF-8 text."""
    return path.encode("utf-8", "surrogateescape")


def _dec(raw: bytes | str) -> str:
    return raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else raw


def _pos(local: dict[str, int], nid: str) -> int | str:
    i = local.get(nid)
    return nid if i is None else i


def extract_to_text(ex: FileExtract) -> str:
    local: dict[str, int] = {}
    for n in ex.nodes:
        local.setdefault(n.id, len(local))
    nodes = []
    for n in ex.nodes:
        derived = node_id(ex.path, n.qualname or None)
        nodes.append([n.kind, n.name, n.qualname, n.start_line, n.end_line, n.signature,
                      n.docstring, n.content_hash, 0 if n.id == derived else n.id,
                      0 if n.language == ex.language else n.language])
    return _dumps({
        "n": nodes,
        "e": [[_pos(local, e.source), _pos(local, e.target), e.kind, e.resolved, e.count]
              for e in ex.edges],
        "r": [[_pos(local, r.source), r.kind, r.target, r.line, r.names] for r in ex.references],
    })


def out_to_text(ex: FileExtract | None, edges: list[Edge]) -> str:
    local: dict[str, int] = {}
    for n in ex.nodes if ex else ():
        local.setdefault(n.id, len(local))
    return _dumps([[_pos(local, e.source), e.target, e.kind, e.resolved, e.count] for e in edges])


# Rows are decoded one file at a time, so JSON shares no string between files: node ids,
# kinds and call targets repeated across files are interned (one object per distinct
# string in the process, shared with the search index): ~10 MB less on 20k nodes.
_intern = sys.intern
# One int object per line number: a node's line past 256 was an int of its own (28 bytes);
# the kernel's graph holds 835k nodes. References are loaded as columns (PackedReferences:
# their lines a 32-bit array), not objects: the kernel's graph holds 4.75M of them.
_LINES: dict[int, int] = {}


def _extract_from_text(path: str, info: FileInfo, text: str) -> FileExtract:
    d = json.loads(text)
    lang = _intern(info.language)
    line = _LINES.setdefault
    # a top-level symbol's name is its qualname: one string for both (C: most nodes)
    nodes = [Node(_intern(r[8] or node_id(path, r[2] or None)), _intern(r[0]),
                  r[2] if r[1] == r[2] else r[1], r[2], path, line(r[3], r[3]),
                  line(r[4], r[4]), _intern(r[9]) if r[9] else lang, r[5], r[6], r[7])
             for r in d["n"]]
    ids = [n.id for n in nodes]
    edges = [Edge(ids[r[0]] if r[0].__class__ is int else _intern(r[0]),
                  ids[r[1]] if r[1].__class__ is int else _intern(r[1]), _intern(r[2]), r[3],
                  r[4]) for r in d["e"]]
    rows = d["r"]
    kind = reference_kind_code
    refs = PackedReferences(
        tuple([ids[r[0]] if r[0].__class__ is int else _intern(r[0]) for r in rows]),
        bytes([kind(r[1]) for r in rows]), tuple([_intern(r[2]) for r in rows]),
        array("I", [r[3] for r in rows]),
        {i: [tuple(x) for x in r[4]] for i, r in enumerate(rows) if r[4]} or None)
    return FileExtract(path, lang, info.sha1, nodes, edges, refs, info.partial, info.error)


def _out_from_text(ex: FileExtract, text: str) -> list[Edge]:
    ids = [n.id for n in ex.nodes]
    return [Edge(ids[r[0]] if r[0].__class__ is int else _intern(r[0]), _intern(r[1]),
                 _intern(r[2]), r[3], r[4])
            for r in json.loads(text)]



_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path BLOB PRIMARY KEY, sha1 TEXT NOT NULL, language TEXT NOT NULL, size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, lines INTEGER NOT NULL, partial INTEGER NOT NULL,
    error TEXT NOT NULL, extract TEXT NOT NULL, out TEXT NOT NULL
);
"""


def graph_path(state_dir: Path) -> Path:
    return Path(state_dir) / GRAPH_FILE


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), timeout=BUSY_TIMEOUT, isolation_level=None)


def _move_db_aside(path: Path, reason: str) -> None:
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        with contextlib.suppress(OSError):
            if side.exists():
                move_aside(side, reason)
    move_aside(path, reason)


class DamagedGraph(Exception):
    """The stored graph cannot be used as is (unknown schema, malformed rows)."""


def _read(con: sqlite3.Connection) -> Graph:
    con.execute("BEGIN")
    try:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        return _read_rows(con, meta)
    finally:
        con.execute("COMMIT")


def _read_rows(con: sqlite3.Connection, meta: dict[str, str]) -> Graph:
    """The graph from its rows, read one at a time inside the caller's read transaction:
    the stored JSON is never all in memory at once (the Linux kernel's is ~550 MB)."""
    with contextlib.closing(con.execute(
            "SELECT path, sha1, language, size, mtime_ns, lines, partial, error, extract, out "
            "FROM files ORDER BY path")) as rows:
        return _graph_from_rows(rows, meta)


def _graph_from_rows(rows: sqlite3.Cursor, meta: dict[str, str]) -> Graph:
    first = rows.fetchone()
    if not meta and first is None:
        return Graph()
    if meta.get("format") != FORMAT:
        raise DamagedGraph("not a NeuralMind graph")
    if meta.get("store") != STORE_VERSION:
        raise DamagedGraph(f"store layout {meta.get('store')!r}, expected {STORE_VERSION}")
    try:
        schema = int(meta.get("schema", "0"))
    except ValueError:
        raise DamagedGraph(f"bad schema value {meta.get('schema')!r}") from None
    if schema not in KNOWN_SCHEMAS:
        raise DamagedGraph(f"unknown schema version {schema} (this build knows {SCHEMA_VERSION})")
    extracts: dict[str, FileExtract] = {}
    files: dict[str, FileInfo] = {}
    out_by_file: dict[str, list[Edge]] = {}
    for raw_path, sha1, lang, size, mtime_ns, lines, partial, error, extract, out in (
            itertools.chain((first,), rows) if first is not None else ()):
        path = _dec(raw_path)
        info = files[path] = FileInfo(sha1, lang, size, mtime_ns, bool(partial),
                                      json.loads(error), lines)
        ex = extracts[path] = _extract_from_text(path, info, extract)
        edges = _out_from_text(ex, out)
        if edges:
            out_by_file[path] = edges
    g = Graph.from_parts(extracts, files, _in_edge_order(out_by_file))
    g.out_by_file = out_by_file
    g.communities = [Community(int(c["id"]), c["name"], list(c["files"]), list(c["top_symbols"]),
                               c["description"], int(c["size"]))
                     for c in json.loads(meta.get("communities", "[]"))]
    assign_node_communities(g)
    g.schema = schema
    g.generation = int(meta.get("generation", "0"))
    g.token = meta.get("token", "")
    g.built_at = float(meta.get("built_at", "0"))
    g.meta = dict(json.loads(meta.get("meta", "{}")))
    return g


def _in_edge_order(out_by_file: dict[str, list[Edge]]) -> list[Edge]:
    """All resolved edges in `edge_key` order. Each row is in that order and the rows come
    by path, so joining them is, unless one file's ids sort among another's (`a.py` and
    `a.py.x`): only then is one big sort (a long GIL hold) needed."""
    edges: list[Edge] = []
    last: tuple[str, str, str] | None = None
    ordered = True
    for path in sorted(out_by_file):
        rows = out_by_file[path]
        if ordered and last is not None and edge_key(rows[0]) < last:
            ordered = False
        last = edge_key(rows[-1])
        edges.extend(rows)
    if not ordered:
        edges.sort(key=edge_key)
    return edges


def load_graph(state_dir: Path) -> Graph:
    """The stored graph; empty when none is stored or the stored one is damaged.

    A damaged or unknown-schema database is moved aside (never deleted) with a warning,
    so the next build starts clean instead of failing on every call. A busy database
    (another process mid-checkpoint past the timeout) only warns.
    """
    path = graph_path(state_dir)
    if not path.exists():
        return Graph()
    try:
        con = _connect(path)
    except sqlite3.Error as e:
        log.warning("cannot open %s: %s; using an empty graph", path, e)
        return Graph()
    try:
        with no_gc(freeze=True):
            return _read(con)
    except sqlite3.OperationalError as e:
        if "locked" in str(e) or "busy" in str(e):
            log.warning("%s is busy (%s); using an empty graph for now", path, e)
            return Graph()
        if getattr(e, "sqlite_errorcode", 0) & 0xFF in _NOT_DAMAGE:
            return _read_unwritable(path, e)
        reason = str(e)
    except (sqlite3.DatabaseError, DamagedGraph, ValueError, KeyError, TypeError,
            IndexError, AttributeError) as e:
        reason = f"{type(e).__name__}: {e}"
    finally:
        con.close()
    _move_db_aside(path, reason[:200])
    return Graph()


# Errors of the folder or the disk, not of the file: a read-only or full `.neuralmind/`
# (SQLite cannot create the -shm file) must not get a healthy graph moved aside.
_NOT_DAMAGE = frozenset({3, 8, 10, 13, 14})   # PERM, READONLY, IOERR, FULL, CANTOPEN


def _read_unwritable(path: Path, error: sqlite3.Error) -> Graph:
    """The graph read without SQLite's shared-memory file, when the folder cannot take one."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
        try:
            with no_gc(freeze=True):
                graph = _read(con)
        finally:
            con.close()
    except (sqlite3.Error, DamagedGraph, ValueError, KeyError, TypeError) as e:
        log.warning("cannot read %s (%s; read-only: %s); using an empty graph", path, error, e)
        return Graph()
    log.warning("%s is not writable here (%s); serving the stored graph read-only", path, error)
    return graph


def stored_token(state_dir: Path) -> str | None:
    """The token of the stored graph (None when there is none): a cheap freshness check
    for a process that keeps the graph it last loaded or saved."""
    path = graph_path(state_dir)
    if not path.exists():
        return None
    try:
        con = _connect(path)
        try:
            row = con.execute("SELECT value FROM meta WHERE key='token'").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def save_graph(state_dir: Path, graph: Graph, previous: Graph | None = None,
               rows: Iterable[str] | None = None) -> None:
    """Commit `graph` in one transaction; readers see the old or the new graph.

    With `previous` (the graph this one was built from, still what is stored), only
    rows that differ are written; otherwise every row is rewritten. `rows`: the only
    files whose rows can differ from previous's (a save knows them), so the others are
    not compared: the Linux kernel's 55k rows took ~0.3 s per save to compare.
    """
    path = graph_path(state_dir)
    graph.generation += 1
    graph.token = uuid.uuid4().hex
    graph.built_at = time.time()
    with no_gc():
        new_out = group_by_source_file(graph)
        con = _connect(path)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.executescript(_SCHEMA_SQL)
            with immediate(con):
                stored = con.execute("SELECT value FROM meta WHERE key='token'").fetchone()
                incremental = (previous is not None and stored is not None
                               and stored[0] == previous.token)
                _write_rows(con, graph, new_out, previous if incremental else None,
                            rows if incremental else None)
                meta = {"format": FORMAT, "store": STORE_VERSION, "schema": str(graph.schema),
                        "generation": str(graph.generation), "token": graph.token,
                        "built_at": repr(graph.built_at),
                        "meta": _dumps(graph.meta),
                        "communities": _communities_text(graph, previous)}
                con.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                                meta.items())
                kill_point("mid_save")
        finally:
            con.close()


def _communities_text(graph: Graph, previous: Graph | None) -> str:
    """The communities' JSON, each community's text kept with it (`Graph.community_texts`,
    by object) so a save encodes only the communities it changed, not every file name of
    every community again. The same text as encoding the list at once."""
    before = previous.community_texts if previous is not None else {}
    texts: dict[int, tuple[Community, str]] = {}
    for c in graph.communities:
        known = before.get(id(c))
        texts[id(c)] = known if known is not None and known[0] is c else (
            c, _dumps(_community_json(c)))
    graph.community_texts = texts
    return "[" + ",".join(t for _, t in texts.values()) + "]"


def _community_json(c: Community) -> dict[str, Any]:
    # not dataclasses.asdict: it deep-copies every list (~35 ms per save on Django)
    return {"id": c.id, "name": c.name, "files": c.files, "top_symbols": c.top_symbols,
            "description": c.description, "size": c.size}


def _write_rows(con: sqlite3.Connection, graph: Graph, new_out: dict[str, list[Edge]],
                previous: Graph | None, only: Iterable[str] | None = None) -> None:
    if previous is None:
        con.execute("DELETE FROM files")
        old_out: dict[str, list[Edge]] = {}
    else:
        old_out = group_by_source_file(previous)
        gone = [p for p in (previous.files if only is None else sorted(only))
                if p in previous.files and p not in graph.files]
        con.executemany("DELETE FROM files WHERE path = ?", [(_enc(p),) for p in gone])
    rows = []
    outs = []
    for path in _rows_to_check(graph, only):
        info = graph.files[path]
        ex = graph.extracts[path]
        if previous is not None:
            old_info = previous.files.get(path)
            if old_info is not None and previous.extracts.get(path) is ex:
                out, old = new_out.get(path, []), old_out.get(path, [])
                if out is not old and out != old:
                    outs.append((out_to_text(ex, out), _enc(path)))
                if old_info is not info and old_info != info:
                    con.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?",
                                (info.size, info.mtime_ns, _enc(path)))
                continue
        rows.append((_enc(path), info.sha1, info.language, info.size, info.mtime_ns,
                     info.lines, int(info.partial), _dumps(info.error), extract_to_text(ex),
                     out_to_text(ex, new_out.get(path, []))))
    con.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.executemany("UPDATE files SET out=? WHERE path=?", outs)


def _rows_to_check(graph: Graph, only: Iterable[str] | None) -> list[str]:
    """The files whose rows are compared with what is stored: every file, or only those
    a save names (`save_graph`'s `rows`)."""
    return list(graph.files) if only is None else sorted(p for p in only if p in graph.files)


KILL_ENV = "NEURALMIND_TEST_KILL_AT"   # tests: SIGKILL this process at a named point


PAUSE_ENV = "NEURALMIND_TEST_PAUSE_AT"  # tests: SIGSTOP this process at these points (a,b)


def pause_point(name: str) -> None:
    """Stop (SIGSTOP) at `name` when a test asks for it, until the test continues us: a
    test holds a build child at a phase without racing it."""
    if name in os.environ.get(PAUSE_ENV, "").split(","):
        os.kill(os.getpid(), signal.SIGSTOP)


HOLD_ENV = "NEURALMIND_TEST_HOLD_AT"    # tests: hold a thread at a point: name=fifo(,...)
_held: set[str] = set()


def hold_point(name: str) -> None:
    """Block the calling thread at `name`, the first time it gets there, when a test asks
    for it, until the test has opened and closed the FIFO named for it: a test holds one
    thread of a server (its warm-up) while the others answer, without racing it (opening
    the FIFO's write end returns once this thread is here)."""
    for spec in os.environ.get(HOLD_ENV, "").split(","):
        point, _, fifo = spec.partition("=")
        if point == name and fifo and name not in _held:
            _held.add(name)
            with open(fifo, "rb") as f:
                f.read()


def kill_point(name: str) -> None:
    """Die like a killed process at `name` when the crash tests ask for it."""
    if os.environ.get(KILL_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
