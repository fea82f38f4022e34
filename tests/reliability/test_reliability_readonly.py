"""A read-only or full `.neuralmind/` (and, read-only, the repository's learned folder): a
clear one-line error for writes, queries still served from what is stored, nothing moved
aside, and a language server that keeps serving.

Root ignores chmod, so the folder is made read-only with a bind mount (and full with a
tiny tmpfs) inside a private mount namespace (`unshare -m`) that dies with the test's
processes; without the privilege to mount, the test is skipped."""

from __future__ import annotations

import hashlib
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsp_wire import LspProcess
from reliability_support import CLI, ENV, integrity

QUESTION = "normalise an invoice value before it is stored"


def _can_mount() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs -o size=16k tmpfs /mnt"], capture_output=True)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _can_mount(), reason="needs the privilege to mount "
                                "(read-only bind / tmpfs) in a private mount namespace")


def _read_only(*folders: Path) -> str:
    return " && ".join(f"mount --bind {s} {s} && mount -o remount,bind,ro {s}"
                       for s in (shlex.quote(str(f)) for f in folders))


def _learned(root: Path) -> Path:
    """The repository's learned folder as the CLI finds it (bound now, before any mount)."""
    done = subprocess.run([sys.executable, "-c", "import sys; from neuralmind.repo.learned "
                           "import learned_dir; print(learned_dir(sys.argv[1]))", str(root)],
                          env=ENV, capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())


def _full(state: Path) -> str:
    """A tmpfs holding a copy of the state, then filled to the last byte."""
    s, copy = shlex.quote(str(state)), shlex.quote(str(state) + ".copy")
    return (f"cp -a {s} {copy} && mount -t tmpfs -o size=8m tmpfs {s} && cp -a {copy}/. {s}/ "
            f"&& (dd if=/dev/zero of={s}/filler bs=64k 2>/dev/null; "
            f"dd if=/dev/zero of={s}/filler2 bs=1 2>/dev/null; true)")


def _in_namespace(setup: str, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = " ".join(shlex.quote(a) for a in [*CLI, *args])
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                           f"{setup} && exec {cmd}"], env=ENV, capture_output=True, text=True,
                          timeout=120)


def _digests(state: Path) -> dict[str, str]:
    return {p.name: hashlib.sha1(p.read_bytes()).hexdigest() for p in sorted(state.iterdir())
            if p.is_file()}


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("kind", ["read-only", "full"])
def test_cli_on_unwritable_state(small_repo: Path, kind: str) -> None:
    state, learned = small_repo / ".neuralmind", _learned(small_repo)
    before = _digests(state)
    setup = _read_only(state, learned) if kind == "read-only" else _full(state)
    root = str(small_repo)

    done = _in_namespace(setup, "query", QUESTION, root, "--json")
    assert done.returncode == 0 and '"hits"' in done.stdout, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    line = _one_line_error(_in_namespace(setup, "build", root))
    assert "neuralmind: error:" in line and any(
        w in line for w in ("readonly", "Read-only", "space", "full", "disk")), line
    record = _in_namespace(setup, "decisions", "record", root, "--title", "T",
                           "--rationale", "R", "--files", "pkg/mod001.py")
    if kind == "read-only" or record.returncode != 0:  # a full disk may still fit a WAL frame
        line = _one_line_error(record)
        assert any(w in line for w in ("readonly", "Read-only", "space", "full", "disk",
                                       "cannot be opened for writing")), line
    doctor = _in_namespace(setup, "doctor", root, "--no-model")
    if kind == "read-only":
        assert doctor.returncode == 1 and "is not writable" in doctor.stdout, doctor.stdout
        assert _digests(state) == before              # nothing moved aside, nothing lost
        assert integrity(learned / "synapses.db") == integrity(learned / "memory.db") == "ok"
    else:                                             # look at the filled copy from inside
        check = _in_namespace(setup, "doctor", root, "--no-model", "--json")
        assert '"moved aside"' not in check.stdout and "is damaged" not in check.stdout, \
            check.stdout


def test_language_server_on_read_only_state_keeps_serving(small_repo: Path) -> None:
    state, learned = small_repo / ".neuralmind", _learned(small_repo)
    before = _digests(state)
    lsp = LspProcess(small_repo, wrap=["unshare", "-m", "--propagation", "private", "sh", "-c",
                                       f"{_read_only(state, learned)} && exec"])
    try:
        lsp.initialize({"mcp": False})               # its background build fails at once
        for round_ in range(3):
            started = time.monotonic()
            reply = lsp.request("neuralmind/context", {"query": QUESTION})
            assert "error" not in reply and reply["result"]["hits"], reply
            if round_:        # learning that cannot write must not make queries wait
                assert time.monotonic() - started < 2.0
            uri = lsp.doc("pkg/mod001.py")
            lsp.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1,
                "text": (small_repo / "pkg/mod001.py").read_text(encoding="utf-8")}})
            lsp.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            time.sleep(0.3)
        status = lsp.request("neuralmind/status", {})["result"]
        assert lsp.proc.poll() is None                # alive: no crash, no restart loop
        assert status["nodes"] > 0
        err = lsp.stderr_text()
        assert "Read-only file system" in err            # the cause is named in the log
        # one failed build plus one failed update per save: no retry loop
        assert err.count("Read-only file system") <= 1 + 2 * 3, err[-3000:]
    finally:
        lsp.shutdown()
    assert _digests(state) == before
