"""Crash safety: kill -9 a build at random moments, and the language server right after it
acknowledged a write. Nothing committed may be lost or left half-written."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from lsp_wire import LspProcess
from reliability_support import CLI, ENV, cli, integrity, store_path

from neuralmind.doctor import ERROR, run_doctor
from neuralmind.engine.workspace import Workspace
from neuralmind.index.search_index import SearchIndex
from neuralmind.memory.decisions.store import DecisionStore

KILL_RUNS = 3


def _mutate(root: Path, rng: random.Random, run: int, n: int = 25) -> list[str]:
    """Rewrite `n` modules' docstrings and add a function to each; return the new names."""
    added = []
    for i in rng.sample(range(200), n):
        p = root / "pkg" / f"mod{i:03d}.py"
        name = f"added_in_run{run}_{i}"
        text = p.read_text(encoding="utf-8").replace("rules, part", f"rules (rev {run}), part")
        p.write_text(text + f"\n\ndef {name}(order):\n    \"\"\"Run {run} rule.\"\"\"\n"
                     "    return order\n", encoding="utf-8")
        added.append(name)
    return added


def _group_gone(pgid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _assert_usable(root: Path, question: str) -> None:
    done = cli("validate", str(root))
    assert done.returncode == 0, done.stdout + done.stderr
    problems = [c for c in run_doctor(root, model=False)
                if c.status == ERROR or c.name == "moved aside"]
    assert not problems, problems       # nothing half-written, nothing had to be moved aside
    done = cli("query", question, str(root), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hits"], done.stdout
    assert "Traceback" not in done.stderr


def test_build_killed_at_random_moments(repo: Path) -> None:
    rng = random.Random(20261130)
    phases = []
    added: list[str] = []
    for run in range(KILL_RUNS):
        added = _mutate(repo, rng, run)
        proc = subprocess.Popen([*CLI, "build", str(repo)], env=ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        time.sleep(rng.uniform(0.3, 4.0))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        err = proc.stderr.read().decode() if proc.stderr else ""
        phases.append(err.strip().splitlines()[-1] if err.strip() else "start-up")
        assert _group_gone(proc.pid), "build left processes behind"
        _assert_usable(repo, "normalise an invoice value before it is stored")
    done = cli("build", str(repo))
    assert done.returncode == 0, done.stderr
    _assert_usable(repo, "normalise an invoice value before it is stored")
    # the finished build holds the last run's edits, searchable by name
    hits = json.loads(cli("search", added[0], str(repo), "--json").stdout)["hits"]
    assert hits and hits[0]["symbol"] == added[0], hits[:3]
    print("killed in phases:", phases)


def _synapse_rows(db: Path) -> list[tuple[str, str, str, float]]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT a, b, namespace, weight FROM synapses").fetchall()
    finally:
        con.close()


def test_language_server_killed_after_acknowledged_writes(repo: Path) -> None:
    rng = random.Random(9)
    files = [f"pkg/mod{i:03d}.py" for i in rng.sample(range(200), 12)]
    recorded: list[str] = []
    fed_back: list[tuple[str, str]] = []
    for round_ in range(3):
        lsp = LspProcess(repo)
        try:
            lsp.initialize({"mcp": False})
            lsp.wait_ready()
            # editing traffic whose learning batches may be mid-write when the kill lands
            for rel in rng.sample(files, 4):
                uri = lsp.doc(rel)
                text = (repo / rel).read_text(encoding="utf-8")
                lsp.notify("textDocument/didOpen", {"textDocument": {
                    "uri": uri, "languageId": "python", "version": 1, "text": text}})
                lsp.notify("textDocument/didChange", {
                    "textDocument": {"uri": uri, "version": 2},
                    "contentChanges": [{"text": text + "\n# touched\n"}]})
                lsp.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            node, ctx = f"{files[round_]}::helper_{int(files[round_][7:10])}", files[round_ + 3]
            reply = lsp.request("neuralmind/feedback",
                                {"node": node, "positive": True, "context": [ctx]})
            assert "error" not in reply, reply
            fed_back.append((node, ctx))
            reply = lsp.request("neuralmind/decisions/record", {
                "title": f"Invoices round {round_} stay immutable",
                "rationale": "Audits need the original totals.", "files": [files[round_]]})
            assert "error" not in reply, reply
            recorded.append(reply["result"]["id"])
            time.sleep(rng.uniform(0.0, 0.3))     # anywhere inside the next learning window
        finally:
            lsp.kill9()
        assert _group_gone(lsp.proc.pid)
        state = store_path(repo, "synapses.db").parent       # the learned folder
        assert integrity(state / "synapses.db") == "ok"
        assert integrity(state / "memory.db") == "ok"
        assert not list(state.glob("*.corrupt-*")) + list((repo / ".neuralmind").glob("*.corrupt-*"))
        store = DecisionStore(repo)
        for rid in recorded:               # every acknowledged decision survived
            assert store.get(rid).id == rid
        rows = _synapse_rows(state / "synapses.db")
        assert all(0.0 < w <= 1.0 for _, _, _, w in rows)    # whole rows, never torn values
        pairs = {frozenset((a, b)) for a, b, _, _ in rows}
        for node, ctx in fed_back:         # every acknowledged feedback is there
            assert frozenset((node, ctx)) in pairs, (node, ctx)


def test_a_full_build_removes_what_killed_writes_left(tmp_path: Path) -> None:
    """A kill mid-write leaves the write's temporary file (mkstemp's `.NAME.*.tmp`): the next
    full build removes the stale ones, and leaves alone one that may be a write in progress."""
    (tmp_path / "billing.py").write_text("def total(order):\n    return order.sum\n", encoding="utf-8")
    state = tmp_path / ".neuralmind"
    state.mkdir()
    stale, fresh = state / ".bm25.bin.k1ll3d.tmp", state / ".graph.db.writing.tmp"
    for p in (stale, fresh):
        p.write_bytes(b"half a write" * 1000)
    hours_ago = time.time() - 2 * 3600
    os.utime(stale, (hours_ago, hours_ago))
    Workspace(tmp_path).build(embed=False)
    assert not stale.exists() and fresh.exists()
    hits, _mode, _notice = Workspace(tmp_path).search("total")
    assert hits[0].node.name == "total"                     # and the build itself went through


def _searchable(lsp: LspProcess, name: str) -> bool:
    hits = lsp.request("neuralmind/search", {"query": name, "k": 5})["result"]["hits"]
    return any(h["symbol"].endswith(name) for h in hits)


def _save_function(lsp: LspProcess, rel: str, name: str) -> None:
    path = lsp.root / rel
    path.write_text(path.read_text(encoding="utf-8")
                    + f"\n\ndef {name}(order):\n    return order\n", encoding="utf-8")
    lsp.notify("textDocument/didSave", {"textDocument": {"uri": lsp.doc(rel)}})
    deadline = time.monotonic() + 30
    while not _searchable(lsp, name):
        assert time.monotonic() < deadline, f"{name} never became searchable"
        time.sleep(0.02)


def _indexed_on_disk(root: Path, name: str) -> bool:
    reader = SearchIndex(root / ".neuralmind", root=root)
    return any(h.id.endswith("::" + name) for h in reader.search(name, mode="keyword").hits)


def test_language_server_killed_before_its_index_write_loses_no_save(small_repo: Path) -> None:
    """A server writes the search index once saves pause, up to FLUSH_MAX_DEFER_SECONDS after
    a save (longer on a big index, KERN11): killed before that write, it loses no save. The
    graph holds the saved file, and the next server's start-up build indexes it again."""
    rel, name = "pkg/mod003.py", "settle_ledger_after_kill"
    lsp = LspProcess(small_repo)
    try:
        lsp.initialize({"mcp": False})
        lsp.wait_ready()
        _save_function(lsp, "pkg/mod004.py", "warm_the_save_path")   # the first save's costs
        deadline = time.monotonic() + 30    # and its write, once saves paused (2 s here)
        while not _indexed_on_disk(small_repo, "warm_the_save_path"):
            assert time.monotonic() < deadline, "the first save was never written"
            time.sleep(0.1)
        _save_function(lsp, rel, name)
    finally:
        lsp.kill9()
    # killed before the write (saves pause ≥ 2 s first): the index on disk lacks the save
    assert not _indexed_on_disk(small_repo, name)
    lsp = LspProcess(small_repo)
    try:
        lsp.initialize({"mcp": False})
        deadline = time.monotonic() + 90      # its start-up build's graph served
        while not _searchable(lsp, name):
            assert time.monotonic() < deadline, "the save was lost"
            time.sleep(0.1)
        lsp.wait_ready()
    finally:
        lsp.shutdown()
    assert _indexed_on_disk(small_repo, name)
