"""Saves while the start-up build embeds (issue #21 parts 2 and 4): applied at once.

The real server over a real repository, its real build child held at two points by
`NEURALMIND_TEST_PAUSE_AT` (the child stops itself with SIGSTOP; the test continues it),
so every step below happens while the build is where the test says, with no sleeps:
- in the graph phase (graph written, not yet served), a save waits;
- once the graph is served and the child is about to embed, that save is applied, and a
  save made while the child embeds is searchable at once; the server embeds only the
  nodes whose text a save changed (the others are the child's);
- when the child ends, its vectors of the texts before the saves (and of a symbol a save
  removed) are not taken: the server's index keeps the saves, and what it writes has one
  vector per node, of the node's current text.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from raw_lsp import SERVER_ENV, RawServer, uri
from sample_workspace import make_repo

from neuralmind.engine import Workspace
from neuralmind.graph.store import PAUSE_ENV
from neuralmind.index.keyword_update import text_hash
from neuralmind.index.node_text import graph_texts
from neuralmind.service.build_worker import BUILD_EMBED_NICE, NICENESS

TIMEOUT_S = 120


def _poll(server: RawServer, check: Callable[[], Any], what: str) -> Any:
    """Ask the server (each check is a request) until `check` holds."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if value := check():
            return value
        server.request("neuralmind/status", {})     # a round trip, not a sleep
    raise AssertionError(f"timed out waiting for {what}")


def _stopped(pid: int) -> bool:
    """The process stopped itself (SIGSTOP at a pause point)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "T"


def _nice(pid: int) -> int:
    """The process's niceness (its main thread's: /proc/PID/stat field 19)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _symbols(server: RawServer, name: str) -> list[str]:
    hits = server.request("neuralmind/search", {"query": name, "k": 5})["result"]["hits"]
    return [h["symbol"] for h in hits]


def _status(server: RawServer) -> dict[str, Any]:
    return server.request("neuralmind/status", {})["result"]


def test_saves_wait_only_for_the_graph_phase_and_survive_the_embedding(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    server = RawServer(repo, env={**SERVER_ENV, PAUSE_ENV: "graph_ready,embed"})
    try:
        server.initialize({"mcp": False})
        child = _poll(server, lambda: next((p for p in server.children() if _stopped(p)), None),
                      "the build child at graph_ready")

        # graph phase: the save waits for the build's graph
        users = repo / "app" / "users.py"
        users.write_text(users.read_text() + "\n\ndef audit_login_attempts(username):\n"
                         '    """Count failed logins."""\n    return 0\n')
        server.notify("textDocument/didSave", {"textDocument": {"uri": uri(users)}})
        status = _status(server)
        assert status["files_pending"] == 1 and status["indexing"]["graph_ready"] is False
        assert "audit_login_attempts" not in _symbols(server, "audit_login_attempts")

        # the graph served, the child about to embed: the waiting save is applied
        os.kill(child, signal.SIGCONT)
        _poll(server, lambda: _stopped(child) and (_status(server)["indexing"] or {}).get(
            "graph_ready"), "the graph served and the child held before embedding")
        _poll(server, lambda: "audit_login_attempts" in _symbols(server, "audit_login_attempts"),
              "the save that waited")

        # a save while the child embeds: searchable at once; a symbol renamed away goes
        billing = repo / "app" / "billing.py"
        billing.write_text(billing.read_text().replace("def compute_invoice_total",
                                                       "def refund_invoice_total"))
        server.notify("textDocument/didSave", {"textDocument": {"uri": uri(billing)}})
        _poll(server, lambda: "refund_invoice_total" in _symbols(server, "refund_invoice_total"),
              "the save during embedding")
        assert _stopped(child) and _status(server)["indexing"] is not None   # still embedding
        # it embeds yielding the cores to us
        assert _nice(child) == min(19, _nice(server.proc.pid) + NICENESS + BUILD_EMBED_NICE)

        # the server embeds only the texts the saves changed (each new function, and its
        # file's node, which lists it); the files' other nodes are the child's to embed
        changed = 4
        _poll(server, lambda: _status(server)["embedded_nodes"] >= changed,
              "the saves' changed texts embedded")
        assert _status(server)["embedded_nodes"] == changed
        assert _stopped(child)

        # the child embeds the texts it read (before both saves) and ends
        os.kill(child, signal.SIGCONT)
        _poll(server, lambda: _status(server)["indexing"] is None, "the build's end")
        _poll(server, lambda: _status(server)["embeddings_pending"] == 0, "the saves' vectors")
        for name in ("audit_login_attempts", "refund_invoice_total"):
            assert name in _symbols(server, name)
        assert "compute_invoice_total" not in _symbols(server, "compute_invoice_total")
        server.shut_down()
    finally:   # a failed step may leave the child stopped: it must not outlive the test
        server.kill()

    # what the server wrote: the saves, and one vector per node, of its current text
    ws = Workspace(repo)
    names = {n.name for n in ws.graph.nodes.values()}
    assert {"audit_login_attempts", "refund_invoice_total"} <= names
    assert "compute_invoice_total" not in names
    texts = graph_texts(ws.graph, repo, list(ws.graph.nodes), keyword=False)
    vectors = ws.index._vectors
    assert sorted(vectors.ids()) == sorted(ws.graph.nodes)
    assert {i: vectors.text_hash(i) for i in texts} == {i: text_hash(t[2])
                                                        for i, t in texts.items()}
    assert ws.index.pending == 0
