"""`search_meta.json`: each indexed node's name and keyword-text hash, the pending list,
and the token of the graph generation the keyword side was written for (`index/generation.py`),
with `search_meta.delta.json` beside it: what a server changed since that file was written.

Read and written member by member (`jsonstream.py`): 148 MB on the Linux kernel, and a
reloading server keeps serving meanwhile. Node ids are interned, shared with the graph
and the other indexes.

Why a delta: a server's index writes rewrote the whole file for a few saves' worth of
changes, and encoding it was half the writer thread's GIL time beside the saves (KERN11:
~1,500 of 3,028 samples on the kernel). A server now writes the entries changed since the
last full file, the pending list and the token (`MetaChanges.plan`); the next full write
folds them in, and a reader applies them on load. Crash safety: every file is replaced
atomically; each full file has a fresh `id` and a delta names the full file it applies to
(`base`), so a delta left by a kill between a full write and the delta's removal is
ignored (the full file already holds it), and a delta is always whole (each one holds
everything changed since its base, and replaces the previous one).
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from neuralmind.config import META_DELTA_MAX_SHARE
from neuralmind.index.jsonstream import members, read_slices, write_object
from neuralmind.index.state_files import META_DELTA_FILE

FORMAT_VERSION = 1


@dataclass
class Meta:
    """The metadata as read: the full file with its delta (if any) applied."""

    names: dict[str, str] = field(default_factory=dict)         # id -> lowercased name
    kw_hash: dict[str, bytes] = field(default_factory=dict)     # id -> keyword-text hash
    pending: set[str] = field(default_factory=set)
    graph_token: str | None = None      # None in files written before it was kept
    file_id: str | None = None          # the full file's (None: written before ids)
    changed: set[str] = field(default_factory=set)   # the delta's ids (not in the full file)
    found: bool = False     # the full file was read (else all empty: absent or damaged)


def delta_path(path: Path) -> Path:
    return path.with_name(META_DELTA_FILE)


def read_meta(path: Path) -> Meta:
    """The metadata at `path` and its delta; all empty when the file is absent, damaged or
    of another format (the index is then rebuilt). A damaged delta, or one for another full
    file, is ignored (the keyword base's document count then disagrees if it mattered, and
    the index is rebuilt, as for any metadata that does not match it)."""
    meta = Meta()
    # one string per distinct name (the exact-name map's keys are these too): JSON decodes
    # a string per node, and the Linux kernel's 835k nodes share far fewer names
    shared: dict[str, str] = {}
    try:
        head = _read(path, meta.names, meta.kw_hash, shared)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return Meta()
    if head.get("format") != FORMAT_VERSION:
        return Meta()
    meta.pending, meta.graph_token = set(head.get("pending", ())), head.get("graph")
    meta.file_id = head.get("id")
    meta.found = True
    if meta.file_id is None:
        return meta
    changes: dict[str, str] = {}
    hashes: dict[str, bytes] = {}
    removed: set[str] = set()
    try:
        delta = _read(delta_path(path), changes, hashes, shared, removed)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return meta
    if delta.get("format") != FORMAT_VERSION or delta.get("base") != meta.file_id:
        return meta     # (a kill between a full write and its delta's removal)
    for node_id in removed:
        meta.names.pop(node_id, None)
        meta.kw_hash.pop(node_id, None)
    meta.names.update(changes)
    meta.kw_hash.update(hashes)
    meta.pending, meta.graph_token = set(delta.get("pending", ())), delta.get("graph")
    meta.changed = removed | changes.keys()
    return meta


def _read(path: Path, names: dict[str, str], kw_hash: dict[str, bytes],
          shared: dict[str, str], removed: set[str] | None = None) -> dict[str, object]:
    """Fill `names` and `kw_hash` from the file's nodes (a delta's removed ids, null there,
    to `removed`); returns its other members."""
    head: dict[str, object] = {}
    for key, value in members(read_slices(path), stream=frozenset({"nodes"})):
        if key != "nodes":
            head[key] = value
            continue
        if head.get("format") != FORMAT_VERSION:
            break
        for k, v in value:
            k = sys.intern(k)
            if v is None and removed is not None:
                removed.add(k)
            else:
                names[k], kw_hash[k] = shared.setdefault(v[0], v[0]), bytes.fromhex(v[1])
    return head


def write_meta(path: Path, names: dict[str, str], kw_hash: dict[str, bytes],
               pending: set[str], graph_token: str, file_id: str | None = None) -> str:
    """Replace the full file (a fresh id unless given), then remove the delta it folds in;
    returns the id."""
    file_id = file_id or secrets.token_hex(8)
    _write(path, {"format": FORMAT_VERSION, "id": file_id, "pending": sorted(pending),
                  "graph": graph_token},
           ((i, [names[i], h.hex()]) for i, h in kw_hash.items()))
    delta_path(path).unlink(missing_ok=True)
    return file_id


def write_delta(path: Path, base: str, changes: dict[str, tuple[str, bytes] | None],
                pending: set[str], graph_token: str) -> None:
    """Replace the delta of the full file `base` (at `path`): `changes` holds every id
    changed since it was written (None: removed)."""
    _write(delta_path(path), {"format": FORMAT_VERSION, "base": base,
                              "pending": sorted(pending), "graph": graph_token},
           ((i, None if v is None else [v[0], v[1].hex()]) for i, v in changes.items()))


def _write(path: Path, head: dict[str, object], nodes: Iterable[tuple[str, object]]) -> None:
    text = json.dumps(head, separators=(",", ":"), ensure_ascii=False)
    write_object(path, text[:-1] + ',"nodes":', nodes)


def fold_delta(path: Path) -> None:
    """Rewrite the full file with its delta folded in (nothing when there is no delta): for
    a copy of the index that travels without its delta (a team snapshot)."""
    if not delta_path(path).exists():
        return
    meta = read_meta(path)
    if meta.file_id is not None:
        write_meta(path, meta.names, meta.kw_hash, meta.pending, meta.graph_token or "",
                   meta.file_id)
    delta_path(path).unlink(missing_ok=True)


@dataclass
class MetaWrite:
    """One write of the metadata, taken on the engine thread and written on any: the whole
    of it, or (`base` set) the entries changed since the full file `base`."""

    pending: set[str]
    graph_token: str
    seq: int                                  # the changes it holds: numbered up to here
    names: dict[str, str] | None = None       # a full write's
    kw_hash: dict[str, bytes] | None = None
    base: str | None = None                   # a delta's
    changes: dict[str, tuple[str, bytes] | None] = field(default_factory=dict)
    file_id: str = ""                         # the full file's id, once written

    def write(self, path: Path) -> MetaWrite:
        if self.base is not None:
            write_delta(path, self.base, self.changes, self.pending, self.graph_token)
        else:
            assert self.names is not None and self.kw_hash is not None
            self.file_id = write_meta(path, self.names, self.kw_hash, self.pending,
                                      self.graph_token)
        return self


class MetaChanges:
    """Which nodes' metadata changed since the full file on disk, so a write can be a delta.

    Each change is numbered; a full write's snapshot records the number it was taken at, so
    the changes made while it was written stay for the next delta."""

    def __init__(self) -> None:
        self.file_id: str | None = None     # the full file the index's metadata came from
        self._changed: dict[str, int] = {}  # id -> the change's number
        self._seq = 0

    def loaded(self, meta: Meta) -> None:
        self.file_id = meta.file_id
        self._changed = dict.fromkeys(meta.changed, 0)

    def note(self, node_ids: Iterable[str]) -> bool:
        """These nodes' names or hashes changed; True when there was any."""
        self._seq += 1
        seq, any_ = self._seq, False
        for node_id in node_ids:
            self._changed[node_id], any_ = seq, True
        return any_

    def plan(self, names: dict[str, str], kw_hash: dict[str, bytes], pending: set[str],
             graph_token: str, delta: bool) -> MetaWrite:
        """The next write (under the index's lock): a delta when `delta` is allowed, the
        full file is known, and the delta holds at most META_DELTA_MAX_SHARE of the nodes
        (a bigger one costs nearly a full write, and every load pays to fold it in)."""
        entries = len(self._changed) + len(pending)
        if delta and self.file_id is not None and entries <= META_DELTA_MAX_SHARE * len(kw_hash):
            changes = {i: (names[i], kw_hash[i]) if i in kw_hash else None
                       for i in self._changed}
            return MetaWrite(set(pending), graph_token, self._seq, base=self.file_id,
                             changes=changes)
        return MetaWrite(set(pending), graph_token, self._seq, dict(names), dict(kw_hash))

    def written(self, done: MetaWrite) -> None:
        """`done` is on disk: after a full write, the changes it holds are in the file."""
        if done.base is None:
            self.file_id = done.file_id
            self._changed = {i: s for i, s in self._changed.items() if s > done.seq}
