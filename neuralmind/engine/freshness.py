"""What an answer is fresh against: the stamp every answer carries, and stale hits.

An answer is computed from one generation of the graph and its search index (one
engine call); the stamp says which (`index_generation`), where the work tree stands
(`head`, `dirty_files`: changed against HEAD), what the editor holds that is not on
disk (`unsaved_files`), and what is known changed but not indexed yet
(`pending_files`). A hit whose file changed on disk since that generation indexed it
(its size or modification time differs, or it is gone) is `stale`: its lines may
have moved. Lists are sorted and cut at FRESHNESS_MAX_FILES (`truncated` says so;
the counts are always whole).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuralmind.config import FRESHNESS_MAX_FILES
from neuralmind.graph.languages import language_for
from neuralmind.repo.git import changed_files, head_commit

if TYPE_CHECKING:
    from neuralmind.graph.store import Graph

NOTE_FILES = 3        # pending files a one-line note names (the stamp lists more)


def changed_since_indexed(graph: Graph, root: Path, files: Iterable[str]) -> set[str]:
    """Of `files`, those whose bytes on disk may differ from what `graph` indexed: one
    `stat` each. A file the graph does not know counts as changed."""
    out: set[str] = set()
    for rel in set(files):
        info = graph.files.get(rel)
        try:
            st = os.stat(root / rel)
        except OSError:
            out.add(rel)
            continue
        if info is None or (info.size, info.mtime_ns) != (st.st_size, st.st_mtime_ns):
            out.add(rel)
    return out


def stamp(generation: int, head: str | None, dirty: Iterable[str] | None,
          unsaved: Iterable[str], pending: Iterable[str]) -> dict[str, Any]:
    """The `freshness` object of an answer (`dirty` None: not a git work tree)."""
    lists = {"dirty_files": sorted(set(dirty or ())), "unsaved_files": sorted(set(unsaved)),
             "pending_files": sorted(set(pending))}
    return {
        "head": head,
        "index_generation": generation,
        **{k: v[:FRESHNESS_MAX_FILES] for k, v in lists.items()},
        "counts": {k.removesuffix("_files"): len(v) for k, v in lists.items()},
        "truncated": any(len(v) > FRESHNESS_MAX_FILES for v in lists.values()),
    }


def mark(out: dict[str, Any], fresh: dict[str, Any], stale: set[str]) -> dict[str, Any]:
    """An answer's JSON with its stamp, and `stale` on each hit (and ranked file)."""
    for key in ("hits", "files"):
        for item in out.get(key) or ():
            if isinstance(item, dict) and "file" in item:
                item["stale"] = item["file"] in stale
    out["freshness"] = fresh
    return out


def unfresh_note(out: dict[str, Any]) -> str:
    """One line for a pushed answer (an agent hook) whose files may be out of date; ""
    when nothing is pending and no file it names is stale: a push is paid for on every
    turn, and a clean stamp gives an agent nothing to act on (its JSON still has it)."""
    fresh = out["freshness"]
    pending = fresh["counts"]["pending"]
    stale = [item["file"] for item in out.get("files") or () if item.get("stale")]
    parts = []
    if pending:
        shown = ", ".join(fresh["pending_files"][:NOTE_FILES])
        more = ", ..." if pending > NOTE_FILES else ""
        parts.append(f"{pending} changed files not indexed yet ({shown}{more})")
    if stale:
        parts.append(f"changed since indexed, lines may have moved: {', '.join(stale)}")
    return f"NeuralMind index: {'; '.join(parts)}." if parts else ""


def answer_files(out: dict[str, Any]) -> list[str]:
    """The files an answer names, best first (its hits, and its ranked files if any)."""
    names = [h["file"] for key in ("files", "hits") for h in out.get(key) or ()
             if isinstance(h, dict) and "file" in h]
    return list(dict.fromkeys(names))


def stamp_answer(graph: Graph, root: Path, out: dict[str, Any], head: str | None,
                 dirty: list[str] | None, unsaved: Iterable[str], pending: Iterable[str],
                 not_indexed: Iterable[str]) -> dict[str, Any]:
    """`out` (an answer's JSON, computed from `graph`) with its stamp and `stale` on each
    hit: its file changed on disk since it was indexed, or its editor buffer (`not_indexed`)
    holds edits the index has not seen (a file extracted from a buffer is not compared with
    the disk: the buffer is what it answers from)."""
    files = answer_files(out)
    on_disk = [f for f in files if f not in graph.buffers]
    stale = changed_since_indexed(graph, root, on_disk) | (set(not_indexed) & set(files))
    return mark(out, stamp(graph.generation, head, dirty, unsaved, pending), stale)


def work_tree_now(graph: Graph, root: Path, languages: dict[str, str] | None,
                  ) -> dict[str, Any]:
    """HEAD, the change set and what of it is not indexed, asked of git now: the stamp's
    view for a process without a save queue (the CLI). Changed files no language claims
    (a README, an image) are never indexed, so never pending."""
    dirty = changed_files(root)
    candidates = [f for f in dirty or () if f in graph.files or language_for(f, languages)]
    return {"head": head_commit(root), "dirty": dirty,
            "pending": sorted(changed_since_indexed(graph, root, candidates))}
