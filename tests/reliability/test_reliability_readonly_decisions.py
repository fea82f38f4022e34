"""Decisions stay readable when `.neuralmind/` cannot be written, and writes say why in one line.

Two real ways a folder becomes unwritable, both exercised on real SQLite files:

- `chmod -w` on the folder and on memory.db. Root ignores file modes, and the interpreter
  lives under /root (mode 0700), so switching to uid 65534 cannot even start Python here.
  What works: run the command in a new *user namespace* (`unshare -U`, no uid map). The
  process keeps its kernel uid (0, the files' owner, so /root and the venv stay readable)
  but its capabilities only count inside the namespace, which maps no file owner: file
  modes apply to it as to any owner, and the removed write bits deny writes.
- A read-only bind mount inside a private mount namespace (`unshare -m`), as a read-only
  disk would be.

Each variant is skipped (saying why) where its namespace cannot be created.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from reliability_support import CLI, ENV, make_repo

TITLES = ["Invoices keep cents as integers", "Carts expire after a day", "Users log in by token"]

ENGINE_READS = """
import json, sys
from neuralmind.memory.schema import StoreError
from neuralmind.engine import Workspace

store = Workspace(sys.argv[1]).decisions
hits = store.search("invoice cents", mode="keyword").records
found = store.memory_search("carts expire", mode="keyword")
try:
    store.record("New rule", "A reason.")
    write = "written"
except StoreError as e:
    write = str(e)
print(json.dumps({"search": [d.title for d in hits], "memory": json.dumps(found),
                  "write": write, "read_only": store.read_only_reason}))
"""


def _works(argv: list[str]) -> bool:
    return shutil.which(argv[0]) is not None and subprocess.run(
        [*argv, "true"], capture_output=True).returncode == 0


def _chmod(state: Path) -> list[str]:
    os.chmod(state / "memory.db", 0o444)
    os.chmod(state, 0o555)
    return ["unshare", "-U"] if os.geteuid() == 0 else []


def _mount(state: Path) -> list[str]:
    s = shlex.quote(str(state))
    return ["unshare", "-m", "--propagation", "private", "sh", "-c",
            f"mount --bind {s} {s} && mount -o remount,bind,ro {s} && exec \"$@\"", "sh"]


VARIANTS = {
    "chmod": (_chmod, ["unshare", "-U"] if os.geteuid() == 0 else ["env"]),
    "ro-mount": (_mount, ["unshare", "-m", "--propagation", "private", "sh", "-c",
                          "mount -t tmpfs -o size=16k tmpfs /mnt"]),
}


RECORD = """
import sys
from neuralmind.memory.decisions.store import DecisionStore

store = DecisionStore(sys.argv[1])
for i, title in enumerate(sys.argv[2:]):
    store.record(title, f"Reason {i}: audits and carts need it.", files=[f"pkg/mod00{i}.py"])
"""


@pytest.fixture(params=["closed", "writer-open"])
def recorded(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Decisions written by a process that exited (its last close merged and removed the
    -wal/-shm files) or by one still holding memory.db open (an editor's server: -wal and
    -shm stay beside it)."""
    from neuralmind.memory.decisions.store import DecisionStore

    root = make_repo(tmp_path / "shop", n_files=3)
    if request.param == "closed":
        subprocess.run([sys.executable, "-c", RECORD, str(root), *TITLES], env=ENV, check=True)
        assert not (root / ".neuralmind" / "memory.db-wal").exists()
        return root
    store = DecisionStore(root)
    for i, title in enumerate(TITLES):
        store.record(title, f"Reason {i}: audits and carts need it.", files=[f"pkg/mod00{i}.py"])
    assert (root / ".neuralmind" / "memory.db-wal").exists()
    request.addfinalizer(lambda: store.connection().close())
    return root


def _digests(state: Path) -> dict[str, str]:
    """Content of every file but the -shm (the WAL index readers update, not data)."""
    return {p.name: hashlib.sha1(p.read_bytes()).hexdigest() for p in sorted(state.iterdir())
            if not p.name.endswith("-shm")}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_decisions_readable_from_unwritable_state(recorded: Path, variant: str) -> None:
    make_unwritable, probe = VARIANTS[variant]
    if not _works(probe):
        pytest.skip(f"cannot create the namespace for {variant}: {' '.join(probe)}")
    state = recorded / ".neuralmind"
    before = _digests(state)
    wrap = make_unwritable(state)
    root = str(recorded)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*wrap, *argv], env=ENV, capture_output=True, text=True, timeout=120)

    try:
        query = run(*CLI, "decisions", "query", "invoice cents", root, "--mode", "keyword",
                    "--json")
        assert query.returncode == 0, query.stderr[-2000:]
        assert [d["title"] for d in json.loads(query.stdout)][:1] == [TITLES[0]]

        audit = run(*CLI, "decisions", "audit", root, "--format", "json")
        assert audit.returncode == 0, audit.stderr[-2000:]
        assert sorted(d["title"] for d in json.loads(audit.stdout)) == sorted(TITLES)

        first_id = json.loads(audit.stdout)[0]["id"]
        show = run(*CLI, "decisions", "show", first_id[:8], "--path", root, "--json")
        assert show.returncode == 0 and json.loads(show.stdout)[0]["id"] == first_id, show.stderr

        for write in (["decisions", "record", root, "--title", "T", "--rationale", "R"],
                      ["decisions", "invalidate", first_id, root, "--reason", "gone"]):
            done = run(*CLI, *write)
            assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
            assert "Traceback" not in done.stderr
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and "is not writable" in lines[0], done.stderr

        engine = run(sys.executable, "-c", ENGINE_READS, root)
        assert engine.returncode == 0, engine.stderr[-3000:]
        out = json.loads(engine.stdout)
        assert out["search"][:1] == [TITLES[0]]
        assert TITLES[1] in out["memory"]
        assert "is not writable" in out["write"] and out["read_only"]
    finally:
        os.chmod(state, 0o755)
        os.chmod(state / "memory.db", 0o644)
    assert _digests(state) == before                 # nothing written, created or moved aside
