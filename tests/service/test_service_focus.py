"""Focus: what the service asks a running build to embed first, and the build doing it.

The build worker is the real child process over a real repository with the real model;
its embedding is capped (`max_embedded_nodes`) so only what attention asks for past the
file nodes gets a vector, whatever the machine's speed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sample_workspace import make_repo

from neuralmind.engine import Workspace, coverage
from neuralmind.service.focus import Focus


def test_questions_lead_then_open_files_then_edits_and_their_neighbours() -> None:
    sent: list[list[str]] = []
    attention = Focus(sent.append)
    attention.opened("a.py")
    attention.opened("b.py")
    attention.edited("c.py", ["c_test.py", "a.py"])
    attention.asked(["q1.py", "q2.py"])
    assert sent[-1] == ["q1.py", "q2.py", "b.py", "a.py", "c.py", "c_test.py"]
    attention.asked(["q3.py", "q1.py"])
    attention.closed("b.py")
    attention.closed("never-opened.py")
    assert sent[-1] == ["q3.py", "q1.py", "q2.py", "a.py", "c.py", "c_test.py"]
    count = len(sent)
    attention.opened("a.py")           # already there, same order: nothing to send
    assert len(sent) == count and attention.is_edited("c.py")


def test_the_build_worker_embeds_the_attention_files_first_and_past_the_cap(
        tmp_path: Path) -> None:
    root = make_repo(tmp_path / "shop")
    config = json.dumps({"max_embedded_nodes": 1})
    proc = subprocess.Popen([sys.executable, "-m", "neuralmind.service.build_worker",
                             str(root), "--config", config], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root)
    out, _ = proc.communicate(json.dumps({"attention": ["app/users.py"]}).encode() + b"\n",
                              timeout=300)
    events = [json.loads(line) for line in out.splitlines()]
    assert proc.returncode == 0 and events[-1]["event"] == "done", events
    saved = [e["vectors"] for e in events if e["event"] == "vectors_saved"]
    ws = Workspace(root)
    # the child wrote only vectors: its server owns the keyword files and settles the
    # pending list when the child ends (index/vector_handoff.py), as this does
    assert ws.index.waiting("app/billing.py::compute_invoice_total")
    ws.index.handoff.start()
    ws.build_ended(complete=True)
    ws = Workspace(root)
    users = {n.id for n in ws.graph.nodes_by_file("app/users.py")}
    assert saved and saved[-1] == ws.index.vector_count == len(users) + 1
    assert all(not ws.index.waiting(i) for i in users)
    # no node waits: the rest is represented at file level
    assert coverage.semantic_files(ws.graph, ws.index, ["app/users.py", "app/billing.py"]) == 2
    # an edit of users.py brings its folder next (no imports in this repo)
    assert coverage.nearby_files(ws.graph, "app/users.py", 2) == ["app/__init__.py",
                                                                  "app/billing.py"]
    counts = ws.counts()
    assert counts["embeddings_pending"] == 0
    assert counts["file_level_nodes"] == len(ws.graph.nodes) - len(users) - 1
