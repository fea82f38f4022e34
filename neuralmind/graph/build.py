"""Bring the stored graph up to date: walk, extract what changed, resolve, group, save.

A full build walks the workspace; a file whose size and mtime match the stored ones is
not even read, one whose bytes hash to the stored sha1 is not re-parsed. An incremental
build (`changed=[...]`, what the LSP server calls on every save) looks at those paths
only. Cross-file edges and communities are deterministic functions of the extracts,
and an incremental build yields exactly the graph a full rebuild would: a one-off build
resolves every stored extract (with its unresolved references), while a process that
saves again and again keeps the resolution state on the graph (`Graph.resolver`, see
graph.resolve.Resolver) and patches it, re-resolving only the files whose lookups the
change can affect; communities are then patched from the edges that changed. The whole
write happens under the workspace's index lock, in one SQLite transaction.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import logging
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuralmind.config import WorkspaceConfig
from neuralmind.graph import big_file_worker
from neuralmind.graph.communities import (
    EdgeDelta,
    carry_communities,
    detect_communities,
    prepare_communities,
)
from neuralmind.graph.extract import CHUNKED_PARSE_OVER, extract_file, line_count
from neuralmind.graph.languages import language_for
from neuralmind.graph.model import FileExtract
from neuralmind.graph.resolve import Resolver, resolve
from neuralmind.graph.store import (
    FileInfo,
    Graph,
    kill_point,
    load_graph,
    save_graph,
    stored_token,
)
from neuralmind.graph.walk import check_paths, walk
from neuralmind.heap import no_gc
from neuralmind.statedir import exclusive_lock, state_dir

log = logging.getLogger("neuralmind.graph")

ProgressFn = Callable[[str, int, int], None]   # (phase, done, total)

# Extraction moves to worker processes only when enough files changed to repay their
# start-up (spawn + importing tree-sitter, ~0.3 s each); tree-sitter holds the GIL, so
# threads would not help.
POOL_MIN_FILES = 300
# A long-lived process (the LSP server) builds on every save: it keeps the graph it last
# built per workspace and reuses it while the stored token says nobody else wrote since,
# so a save does not pay for loading the whole graph again.
WARM_GRAPHS = 4
_warm: dict[Path, Graph] = {}
POOL_CHUNK = 16
# A change to more files than this (or a quarter of them) is resolved from scratch.
REPATCH_MAX_FILES = 200


@dataclass
class BuildReport:
    graph: Graph
    files_by_language: dict[str, int]
    nodes: int
    edges_resolved: int
    edges_heuristic: int
    communities: int
    skipped: dict[str, dict[str, Any]]        # reason -> {"count": n, "paths": [...]}
    partial_files: list[str]
    reextracted: list[str]
    removed: list[str]
    seconds: float
    failed_files: list[str] = field(default_factory=list)
    saved: bool = True                         # False when nothing changed on disk

    def to_json(self) -> dict[str, Any]:
        return {
            "files": sum(self.files_by_language.values()),
            "files_by_language": self.files_by_language,
            "nodes": self.nodes,
            "edges_resolved": self.edges_resolved,
            "edges_heuristic": self.edges_heuristic,
            "communities": self.communities,
            "skipped": self.skipped,
            "partial_files": self.partial_files,
            "failed_files": self.failed_files,
            "reextracted": self.reextracted,
            "removed": self.removed,
            "seconds": round(self.seconds, 3),
            "saved": self.saved,
        }


def _extract_one(root: str, path: str, language: str, old_sha1: str | None,
                 big_off_process: bool = False, data: bytes | None = None
                 ) -> tuple[str, FileExtract | None, str, int, str]:
    """Read and extract one file: (path, extract or None if unchanged, sha1, lines, error).

    `big_off_process`: a file over CHUNKED_PARSE_OVER goes to graph.big_file_worker (this
    process may be a server whose event loop must not wait for tree-sitter's GIL).
    `data`: the file's bytes as an editor buffer holds them (not read from disk)."""
    if data is None:
        try:
            with open(os.path.join(root, path), "rb") as f:
                data = f.read()
        except OSError as e:
            return path, None, "", 0, f"{type(e).__name__}: {e.strerror or e}"
    sha1 = hashlib.sha1(data).hexdigest()
    if sha1 == old_sha1:
        return path, None, sha1, line_count(data), ""
    if big_off_process and len(data) > CHUNKED_PARSE_OVER:
        return path, big_file_worker.extract(path, data, language), sha1, line_count(data), ""
    return path, extract_file(path, data, language), sha1, line_count(data), ""


def _extract_chunk(root: str, jobs: list[tuple[str, str, str | None]]
                   ) -> list[tuple[str, FileExtract | None, str, int, str]]:
    return [_extract_one(root, p, lang, old) for p, lang, old in jobs]


class GraphBuilder:
    """Builds `<root>/.neuralmind/graph.json` for one workspace."""

    def __init__(self, root: Path, config: WorkspaceConfig) -> None:
        self.root = Path(root).resolve()
        self.config = config
        self.state = state_dir(self.root)

    def _relative(self, paths: Iterable[str]) -> list[str]:
        """Repo-relative '/'-paths; paths outside the root are dropped."""
        out: set[str] = set()
        for p in paths:
            p = str(p).replace("\\", "/")
            full = os.path.normpath(p if os.path.isabs(p) else os.path.join(self.root, p))
            rel = os.path.relpath(full, self.root).replace(os.sep, "/")
            if rel.startswith("../") or rel == "..":
                # maybe the same place reached through a symlinked parent directory
                real = os.path.join(os.path.realpath(os.path.dirname(full)),
                                    os.path.basename(full))
                rel = os.path.relpath(real, self.root).replace(os.sep, "/")
            if rel == "." or rel.startswith("../") or rel == "..":
                log.debug("ignoring %s: outside the workspace", p)
                continue
            out.add(rel)
        return sorted(out)

    def _needs_full_walk(self, rels: list[str], prev: Graph) -> bool:
        """A changed directory (created, renamed or deleted) is a subtree: walk it all."""
        for rel in rels:
            if os.path.isdir(os.path.join(self.root, rel)):
                return True
            prefix = rel + "/"
            if rel not in prev.files and any(f.startswith(prefix) for f in prev.files):
                return True
        return False

    def build(self, changed: list[str] | None = None, progress: ProgressFn | None = None,
              previous: Graph | None = None, texts: dict[str, str] | None = None,
              ) -> BuildReport:
        """`previous`: the graph the caller holds (a Workspace's); used instead of reading
        the store when it is still what is stored (same token), and then the caller keeps
        the result, so no second copy is cached here.

        `texts`: unsaved editor buffers (rel -> text, among `changed`) extracted instead of
        the files on disk. Their FileInfo gets no modification time (-1), so the next look
        at the disk re-reads them; the graph keeps the texts (`Graph.buffers`) for readers
        of source lines. A file in `changed` without a text is read from disk again."""
        t0 = time.perf_counter()
        report = progress or (lambda phase, done, total: None)
        # frozen after: a save of whole Django builds ~78k objects that hold no cycles;
        # left young, the next collection walked them for 54-107 ms holding the GIL
        with exclusive_lock(self.state / "index.lock"), no_gc(freeze=True):
            stored = stored_token(self.state)
            prev = _warm.pop(self.state, None)   # a failed build must not leave it half-updated
            if previous is not None and previous.token and previous.token == stored:
                prev = previous
            elif prev is None or not prev.token or stored != prev.token:
                prev = load_graph(self.state)
            result = self._build_locked(prev, changed, report, t0, texts or {})
            if previous is None:
                _warm[self.state] = result.graph
                while len(_warm) > WARM_GRAPHS:
                    _warm.pop(next(iter(_warm)))
            return result

    def _build_locked(self, prev: Graph, changed: list[str] | None, report: ProgressFn,
                      t0: float, texts: dict[str, str]) -> BuildReport:
        overrides = self.config.languages or None
        extracts = prev.extracts.copy()     # a table clone even after deletions (Graph.patched)
        files = prev.files.copy()
        prev_files = prev.files.copy()
        skipped: dict[str, list[str]] = {r: list(v.get("paths", []))
                                          for r, v in prev.meta.get("skipped", {}).items()}
        report("walk", 0, 1)
        if changed is not None:
            rels = self._relative(changed)
            if self._needs_full_walk(rels, prev):
                changed = None
        if changed is None:
            known = {p: (i.size, i.mtime_ns) for p, i in prev.files.items()}
            wr = walk(self.root, self.config, known)
            present = set(wr.files)
            removed = sorted(p for p in prev.files if p not in present)
            skipped = wr.skipped
        else:
            wr = check_paths(self.root, self.config, rels)
            present = set(wr.files)
            removed = sorted(p for p in rels if p in prev.files and p not in present)
            asked = set(rels)
            for reason in list(skipped):
                skipped[reason] = [p for p in skipped[reason] if p not in asked]
            for reason, paths in wr.skipped.items():
                skipped[reason] = sorted(set(skipped.get(reason, [])) | set(paths))
            skipped = {r: v for r, v in sorted(skipped.items()) if v}
        report("walk", 1, 1)

        for p in removed:
            extracts.pop(p, None)
            files.pop(p, None)

        jobs: list[tuple[str, str, str | None]] = []
        touched = False        # some stored FileInfo changed without re-extraction
        data = {p: texts[p].encode("utf-8", "surrogatepass") for p in wr.files if p in texts}
        sizes = dict(wr.sizes)
        for p, b in data.items():
            sizes[p] = (len(b), -1)      # no disk time: the next look at the disk re-reads it
        for p in wr.files:
            size, mtime_ns = sizes[p]
            lang = language_for(p, overrides) or ""
            info = files.get(p)
            same_lang = info is not None and info.language == lang
            if same_lang and info is not None and (info.size, info.mtime_ns) == (size, mtime_ns):
                continue
            jobs.append((p, lang, info.sha1 if same_lang and info is not None else None))

        reextracted: list[str] = []
        results = self._run_extraction(jobs, report, data)
        for path, ex, sha1, lines, error in results:
            size, mtime_ns = sizes[path]
            if error:            # vanished or unreadable between walk and read
                skipped.setdefault("unreadable", []).append(path)
                if path in files:
                    extracts.pop(path, None)
                    files.pop(path, None)
                    removed.append(path)
                continue
            if ex is None:       # same bytes: refresh size/mtime only
                files[path] = dataclasses.replace(files[path], size=size, mtime_ns=mtime_ns)
                touched = True
                continue
            extracts[path] = ex
            files[path] = FileInfo(sha1, ex.language, size, mtime_ns, ex.partial, ex.error, lines)
            reextracted.append(path)
        for paths in skipped.values():
            paths.sort()
        removed.sort()
        reextracted.sort()

        looked = set(wr.files) | set(removed)       # read from disk now, unless a text
        buffers = {p: t for p, t in prev.buffers.items() if p not in looked}
        buffers.update({p: texts[p] for p in data})
        skipped_changed = skipped != {r: v.get("paths", [])
                                      for r, v in prev.meta.get("skipped", {}).items()}
        if not reextracted and not removed and prev.generation > 0:
            # Same extracts: edges and communities cannot differ; refresh file stats only.
            graph = prev
            graph.files = dict(sorted(files.items()))
            graph.buffers = buffers
            graph.meta["skipped"] = _skip_summary(skipped)
            saved = touched or skipped_changed
            if saved:
                kill_point("before_save")
                save_graph(self.state, graph, previous=_with_files(prev, prev_files),
                           rows=None if changed is None else set(wr.files))
        else:
            report("resolve", 0, 1)
            touched_files = sorted({*reextracted, *removed})
            resolver, delta, moved = _patched_resolver(prev, extracts, touched_files,
                                                       keep=changed is not None)
            resolved = resolver.edges if resolver is not None else resolve(extracts)
            report("resolve", 1, 1)
            graph = (Graph.patched(prev, extracts, files, resolved, reextracted, delta)
                     if changed is not None and not removed and prev.generation > 0 else None
                     ) or Graph.from_parts(extracts, files, resolved)
            graph.buffers = buffers
            if resolver is not None:
                graph.resolver = resolver
                graph.out_by_file = resolver.out.copy()     # a snapshot: the next save patches
            if prev.heuristic is not None and (resolved is prev.resolved or delta is not None):
                removed_edges, added_edges = delta or ([], [])
                graph.heuristic = (prev.heuristic - sum(not e.resolved for e in removed_edges)
                                   + sum(not e.resolved for e in added_edges))
            graph.generation = prev.generation
            graph.meta = {"skipped": _skip_summary(skipped), "git": wr.git}
            report("communities", 0, 1)
            if resolved is prev.resolved:
                graph.resolved = prev.resolved    # the identity tells communities "same edges"
            if resolved is prev.resolved and _same_outlines(prev, extracts, reextracted):
                carry_communities(graph, prev, reextracted)    # they cannot differ
                graph.roles_cache = prev.roles_cache     # L1's roles read nothing else
            elif prev.generation > 0:
                if delta is not None:    # the files' own edges too (only `contains` today)
                    delta = ([*delta[0], *(e for p in touched_files if p in prev.extracts
                                           for e in prev.extracts[p].edges)],
                             [*delta[1], *(e for p in touched_files if p in extracts
                                           for e in extracts[p].edges)])
                detect_communities(graph, previous=prev, changed_files=touched_files,
                                   delta=delta)
            else:
                detect_communities(graph)
            report("communities", 1, 1)
            report("save", 0, 1)
            kill_point("before_save")
            # the rows a save can change: the files looked at, those whose resolved edges moved
            rows = (None if changed is None or moved is None
                    else {*wr.files, *removed, *reextracted, *moved})
            save_graph(self.state, graph, previous=prev if prev.generation > 0 else None,
                       rows=rows)
            report("save", 1, 1)
            saved = True
        kill_point("after_save")

        # what the report needs of graph.summary(), at a third of its cost (every save)
        heuristic = graph.heuristic_edges()
        languages, partial, failed = _file_stats(
            graph, prev, None if changed is None else {*wr.files, *removed})
        return BuildReport(
            graph=graph,
            files_by_language=dict(sorted(languages.items())),
            nodes=len(graph.nodes),
            edges_resolved=graph.edge_count() - heuristic,
            edges_heuristic=heuristic,
            communities=len(graph.communities),
            skipped=graph.meta["skipped"],
            partial_files=sorted(partial),
            reextracted=reextracted,
            removed=removed,
            seconds=time.perf_counter() - t0,
            failed_files=sorted(failed),
            saved=saved,
        )

    def _run_extraction(self, jobs: list[tuple[str, str, str | None]], report: ProgressFn,
                        data: dict[str, bytes] | None = None,
                        ) -> list[tuple[str, FileExtract | None, str, int, str]]:
        data = data or {}
        total = len(jobs)
        if not total:
            return []
        root = str(self.root)
        results: list[tuple[str, FileExtract | None, str, int, str]] = []
        report("extract", 0, total)
        workers = min(os.cpu_count() or 1, 4)
        if total >= POOL_MIN_FILES and workers > 1 and not data:
            chunks = [jobs[i:i + POOL_CHUNK] for i in range(0, total, POOL_CHUNK)]
            ctx = multiprocessing.get_context("spawn")   # safe under a threaded server
            try:
                with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
                    futures = [pool.submit(_extract_chunk, root, c) for c in chunks]
                    for fut in concurrent.futures.as_completed(futures):
                        results.extend(fut.result())
                        report("extract", len(results), total)
                        if len(results) >= total // 2:
                            kill_point("extract")
            except (concurrent.futures.process.BrokenProcessPool, OSError) as e:
                # e.g. a caller script without `if __name__ == "__main__":`, which spawn
                # re-imports in every worker: finish in this process instead.
                log.warning("extraction workers failed (%s); continuing in-process", e)
            done = {r[0] for r in results}
            jobs = [j for j in jobs if j[0] not in done]
        if jobs:
            start = len(results)
            for i, (p, lang, old) in enumerate(jobs, start + 1):
                results.append(_extract_one(root, p, lang, old, big_off_process=True,
                                            data=data.get(p)))
                if i % 25 == 0 or i == total:
                    report("extract", i, total)
                if i == total // 2 + 1:
                    kill_point("extract")
        results.sort(key=lambda r: r[0])
        return results


def _file_stats(graph: Graph, prev: Graph, looked: set[str] | None
                ) -> tuple[Counter[str], set[str], set[str]]:
    """Files per language, partial files and failed files of `graph` (kept on it), from
    prev's with the `looked` files' records swapped when given: counting all 55k of the
    Linux kernel's took ~45 ms of every save."""
    if looked is not None and prev.file_stats is not None:
        languages, partial, failed = (Counter(prev.file_stats[0]), set(prev.file_stats[1]),
                                      set(prev.file_stats[2]))
        for path in looked:
            for info, sign in ((prev.files.get(path), -1), (graph.files.get(path), 1)):
                if info is None:
                    continue
                languages[info.language] += sign
                for flag, names in ((info.partial, partial), (bool(info.error), failed)):
                    if flag and sign > 0:
                        names.add(path)
                    elif flag:
                        names.discard(path)
        languages = +languages        # no language left at zero
    else:
        languages = Counter(info.language for info in graph.files.values())
        partial = {p for p, i in graph.files.items() if i.partial}
        failed = {p for p, i in graph.files.items() if i.error}
    graph.file_stats = (languages, partial, failed)
    return languages, partial, failed


def _same_outlines(prev: Graph, extracts: dict[str, FileExtract], paths: list[str]) -> bool:
    """What communities read from these files is unchanged: nodes (with docstrings, in
    order) and their own edges."""
    for path in paths:
        old, new = prev.extracts.get(path), extracts[path]
        if old is None or (
                [(n.id, n.kind, n.name, n.qualname, n.docstring) for n in old.nodes]
                != [(n.id, n.kind, n.name, n.qualname, n.docstring) for n in new.nodes]
                or [(e.source, e.target, e.kind, e.resolved, e.count) for e in old.edges]
                != [(e.source, e.target, e.kind, e.resolved, e.count) for e in new.edges]):
            return False
    return True


def _tracks(resolver: Resolver, graph: Graph) -> bool:
    """The resolver holds the resolution of exactly this graph's extracts (made from that
    very mapping, which nothing changes after: one test; else one per file, 55k on the
    Linux kernel)."""
    if resolver.source is graph.extracts:
        return True
    mine = resolver.extracts
    return len(mine) == len(graph.extracts) and all(
        mine.get(p) is ex for p, ex in graph.extracts.items())


def _patched_resolver(prev: Graph, extracts: dict[str, FileExtract], touched: list[str],
                      keep: bool) -> tuple[Resolver | None, EdgeDelta | None, list[str] | None]:
    """prev's resolver patched to `extracts`, with the resolved edges it removed and added
    and the files whose resolved edges changed; a new one (and no delta) when prev has none
    and `keep` (a save: the next save patches it); Nones for a one-off full build (resolve
    it)."""
    resolver, prev.resolver = prev.resolver, None    # patched in place: prev must not keep it
    if resolver is not None and not _tracks(resolver, prev):
        resolver = None
    if resolver is None and not (keep and extracts):
        return None, None, None
    if resolver is None or len(touched) > max(REPATCH_MAX_FILES, len(extracts) // 4):
        with no_gc(freeze=True):
            resolver = Resolver(extracts)
            resolver.adopt(prev.resolved)    # the identity tells communities "same edges"
        return resolver, None, None
    moved = resolver.update(extracts, touched)
    return resolver, (resolver.removed, resolver.added), moved


def prepare_incremental(graph: Graph) -> None:
    """Give `graph` the resolution state saves patch, so the first save does not pay for
    it (Django: ~2 s of pure Python, so other threads keep running meanwhile). For a
    long-lived process, after loading a graph."""
    if graph.resolver is not None and _tracks(graph.resolver, graph) or not graph.extracts:
        return
    with no_gc(freeze=True):
        resolver = Resolver(graph.extracts)
        resolver.adopt(graph.resolved)       # the identity tells communities "same edges"
        prepare_communities(graph)
        graph.layout()                       # where each file's nodes are (Graph.patched)
    graph.resolver = resolver
    graph.heuristic_edges()                  # counted once: saves carry it over
    if graph.file_stats is None:             # likewise (the first save counted 55k files)
        _file_stats(graph, graph, None)


def _with_files(graph: Graph, files: dict[str, FileInfo]) -> Graph:
    """A shallow view of `graph` with other file records (what is stored before a save)."""
    view = Graph()
    view.extracts, view.files, view.resolved = graph.extracts, files, graph.resolved
    view.nodes, view.generation, view.token = graph.nodes, graph.generation, graph.token
    view.out_by_file = graph.out_by_file
    return view


def _skip_summary(skipped: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    return {r: {"count": len(p), "paths": p} for r, p in sorted(skipped.items()) if p}
