"""Index snapshots: the graph and search index of one commit, published to the team store.

A teammate or CI publishes the index of a commit (the working tree must equal that
commit, and no file outside it may be indexed, so the snapshot is what a clone at that
commit would build: an untracked file indexed here would otherwise reach every clone). A fresh clone
pulls the snapshot of its nearest ancestor commit that has one and then updates
incrementally: the stored file hashes let the build skip every file whose bytes did
not change, so only what changed since the snapshot is parsed and embedded.

Files travel as zlib-compressed chunks of `TEAM_SNAPSHOT_CHUNK_BYTES` in one
transaction (a snapshot is complete or absent), each file with its SHA-256, checked
before anything local is replaced. graph.db is copied with SQLite's backup API on both
sides (consistent while other readers have it open, and its WAL is handled).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg

from neuralmind import config
from neuralmind.errors import EngineError
from neuralmind.graph.store import GRAPH_FILE
from neuralmind.index.bm25 import LEGACY_FILE as LEGACY_BM25_FILE
from neuralmind.index.search_index import BM25_FILE, META_FILE, VECTORS_FILE
from neuralmind.index.search_meta import fold_delta
from neuralmind.index.state_files import META_DELTA_FILE
from neuralmind.statedir import exclusive_lock
from neuralmind.team.pg_schema import SCHEMA
from neuralmind.team.remote import RemoteStore

log = logging.getLogger("neuralmind.team")

FILES = (GRAPH_FILE, BM25_FILE, VECTORS_FILE, META_FILE)
LOCK_NAME = "index.lock"


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          timeout=60, check=False)


def resolve_commit(root: Path, ref: str) -> str:
    out = git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if out.returncode != 0 or not out.stdout.strip():
        raise EngineError("invalid_argument", f"{ref!r} is not a commit of this repository")
    return out.stdout.strip()


def check_tree_matches(root: Path, sha: str) -> None:
    """The tracked files of the working tree equal commit `sha`'s (else the index is not
    that commit's index)."""
    out = git(root, "diff", "--quiet", sha, "--")
    if out.returncode == 1:
        raise EngineError("invalid_argument",
                          f"the working tree differs from {sha[:12]}: commit or stash the "
                          "changes (or check that commit out) before publishing its index")
    if out.returncode != 0:
        raise EngineError("invalid_argument", f"git diff failed: {out.stderr.strip()}")


@contextlib.contextmanager
def _staging(state: Path) -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix=".team-snapshot-", dir=state))
    try:
        yield d
    finally:
        for p in d.iterdir():
            p.unlink(missing_ok=True)
        d.rmdir()


def _copy_db(src: Path, dst: Path) -> None:
    """A consistent copy of a SQLite database (WAL included) through the backup API."""
    s = sqlite3.connect(f"file:{quote(str(src))}?mode=ro", uri=True, timeout=30)
    d = sqlite3.connect(dst, timeout=30)
    try:
        s.backup(d)
    finally:
        d.close()
        s.close()


def _check_only_committed(root: Path, graph: Path, sha: str) -> None:
    """EngineError when the index holds files that commit `sha` does not (untracked ones:
    git decides what is ignored, so an untracked file is indexed here)."""
    con = sqlite3.connect(f"file:{quote(str(graph))}?mode=ro", uri=True)
    try:
        indexed = {bytes(r[0]).decode("utf-8", "surrogateescape") if isinstance(r[0], bytes)
                   else str(r[0]) for r in con.execute("SELECT path FROM files")}
    finally:
        con.close()
    listed = git(root, "-c", "core.quotepath=off", "ls-tree", "-r", "-z", "--name-only", sha)
    if listed.returncode != 0:
        raise EngineError("invalid_argument", f"git ls-tree failed: {listed.stderr.strip()}")
    extra = sorted(indexed - set(listed.stdout.split("\0")))
    if extra:
        shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        raise EngineError("invalid_argument",
                          f"{len(extra)} indexed file(s) are not in {sha[:12]} ({shown}): "
                          "commit them, or ignore them (.gitignore, .neuralmindignore) or "
                          "move them away, then publish again")


def _chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as f:
        while True:
            block = f.read(config.TEAM_SNAPSHOT_CHUNK_BYTES)
            if not block:
                return
            yield block


def publish(remote: RemoteStore, root: Path, state: Path, sha: str, author: str,
            ) -> dict[str, Any]:
    """Upload the index in `state` as commit `sha`'s snapshot (replacing an older one)."""
    missing = [n for n in FILES if not (state / n).is_file()]
    if missing:
        raise EngineError("not_indexed", f"no index to publish ({', '.join(missing)} missing): "
                          "run `neuralmind build` first")
    t0 = time.perf_counter()
    with _staging(state) as stage:
        with exclusive_lock(state / LOCK_NAME):   # no build replaces files while we copy
            _copy_db(state / GRAPH_FILE, stage / GRAPH_FILE)
            for name in FILES[1:]:
                shutil.copyfile(state / name, stage / name)
            if (state / META_DELTA_FILE).is_file():    # a server's changes since META_FILE
                shutil.copyfile(state / META_DELTA_FILE, stage / META_DELTA_FILE)
        fold_delta(stage / META_FILE)       # the snapshot's metadata is one whole file
        _check_only_committed(root, stage / GRAPH_FILE, sha)
        manifest: list[dict[str, Any]] = []
        raw_total = stored = 0
        try:
            with remote.conn.transaction():
                remote.conn.execute(f"DELETE FROM {SCHEMA}.snapshots WHERE repo_id = %s AND "
                                    "commit_sha = %s", (remote.repo_id, sha))
                snap_id = remote.conn.execute(
                    f"INSERT INTO {SCHEMA}.snapshots (repo_id, commit_sha, author, manifest, bytes)"
                    " VALUES (%s, %s, %s, '[]', 0) RETURNING id",
                    (remote.repo_id, sha, author)).fetchone()[0]
                for name in FILES:
                    digest, size, parts = hashlib.sha256(), 0, 0
                    for block in _chunks(stage / name):
                        digest.update(block)
                        packed = zlib.compress(block, config.TEAM_SNAPSHOT_LEVEL)
                        remote.conn.execute(
                            f"INSERT INTO {SCHEMA}.snapshot_chunks VALUES (%s, %s, %s, %s)",
                            (snap_id, name, parts, packed))
                        size, parts, stored = size + len(block), parts + 1, stored + len(packed)
                    manifest.append({"name": name, "bytes": size, "sha256": digest.hexdigest(),
                                     "parts": parts})
                    raw_total += size
                remote.conn.execute(f"UPDATE {SCHEMA}.snapshots SET manifest = %s, bytes = %s "
                                    "WHERE id = %s", (json.dumps(manifest), stored, snap_id))
        except psycopg.errors.InsufficientPrivilege:
            raise EngineError("read_only", "this team store role may not publish snapshots "
                              "(a reader)") from None
    return {"commit": sha, "files": manifest, "bytes": raw_total, "stored_bytes": stored,
            "seconds": round(time.perf_counter() - t0, 3)}


def list_snapshots(remote: RemoteStore) -> list[dict[str, Any]]:
    rows = remote.conn.execute(
        f"SELECT id, commit_sha, author, created_at, bytes FROM {SCHEMA}.snapshots "
        "WHERE repo_id = %s ORDER BY created_at DESC, id DESC", (remote.repo_id,)).fetchall()
    return [{"id": int(i), "commit": c, "author": a, "created_at": t.isoformat(),
             "stored_bytes": int(b)} for i, c, a, t, b in rows]


def nearest(root: Path, snapshots: list[dict[str, Any]]) -> tuple[dict[str, Any], int] | None:
    """The snapshot of the nearest ancestor of HEAD (HEAD itself is distance 0)."""
    best: tuple[dict[str, Any], int] | None = None
    for snap in snapshots:
        if git(root, "merge-base", "--is-ancestor", snap["commit"], "HEAD").returncode != 0:
            continue   # not an ancestor, or not in this clone at all
        out = git(root, "rev-list", "--count", f"{snap['commit']}..HEAD")
        if out.returncode != 0:
            continue
        distance = int(out.stdout.strip() or 0)
        if best is None or distance < best[1]:
            best = (snap, distance)
    return best


def local_index_exists(state: Path) -> bool:
    return (state / GRAPH_FILE).is_file()


def pull(remote: RemoteStore, state: Path, snap: dict[str, Any]) -> dict[str, Any]:
    """Download a snapshot, check it, and install it as this workspace's index."""
    t0 = time.perf_counter()
    manifest = remote.conn.execute(f"SELECT manifest FROM {SCHEMA}.snapshots WHERE id = %s",
                                   (snap["id"],)).fetchone()
    if manifest is None:
        raise EngineError("not_found", f"snapshot {snap['commit'][:12]} was removed meanwhile")
    files = manifest[0] if isinstance(manifest[0], list) else json.loads(manifest[0])
    state.mkdir(parents=True, exist_ok=True)
    with _staging(state) as stage:
        for f in files:
            digest = hashlib.sha256()
            with (stage / f["name"]).open("wb") as out:
                for part in range(f["parts"]):
                    row = remote.conn.execute(
                        f"SELECT data FROM {SCHEMA}.snapshot_chunks WHERE snapshot_id = %s AND "
                        "name = %s AND part = %s", (snap["id"], f["name"], part)).fetchone()
                    if row is None:
                        raise EngineError("team_snapshot", f"snapshot {snap['commit'][:12]} "
                                          f"lacks part {part} of {f['name']}")
                    block = zlib.decompress(row[0])
                    digest.update(block)
                    out.write(block)
                out.flush()
                os.fsync(out.fileno())
            if digest.hexdigest() != f["sha256"]:
                raise EngineError("team_snapshot", f"{f['name']} of snapshot "
                                  f"{snap['commit'][:12]} does not match its checksum")
        downloaded = time.perf_counter() - t0
        names = [f["name"] for f in files if f["name"] != LEGACY_BM25_FILE]
        with exclusive_lock(state / LOCK_NAME):
            _install(stage, state, names)
            if BM25_FILE not in names:   # ours would not match the snapshot's graph
                (state / BM25_FILE).unlink(missing_ok=True)
    out = {"commit": snap["commit"], "bytes": sum(f["bytes"] for f in files),
           "stored_bytes": snap.get("stored_bytes"), "download_seconds": round(downloaded, 3),
           "seconds": round(time.perf_counter() - t0, 3)}
    if BM25_FILE not in names:   # published before the flat keyword index (#21)
        out["notice"] = ("the snapshot's keyword index is of an older format: it is rebuilt "
                         "from the graph by the next build")
    return out


def _install(stage: Path, state: Path, names: list[str]) -> None:
    for name in names:
        target = state / name
        if name == GRAPH_FILE and target.exists():
            _copy_db(stage / name, target)   # into the live file: its WAL stays coherent
        else:
            os.replace(stage / name, target)
