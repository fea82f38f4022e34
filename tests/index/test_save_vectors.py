"""A save's vectors (index/save_vectors.py): only the nodes whose embedded text it changed.

Real parser, model and index. After a build stopped at `max_embedded_nodes` (here: the
file nodes only), a save that adds a function embeds that function and its file's node
(whose text lists it); the file's other symbols stay at file level, neither embedded nor
pending. A symbol whose text a save changes gets a vector of its new text."""

from __future__ import annotations

from pathlib import Path

from neuralmind.config import WorkspaceConfig
from neuralmind.engine import Workspace
from neuralmind.index.keyword_update import text_hash
from neuralmind.index.node_text import graph_texts

FILES = {
    "pkg/retry.py": ("def backoff_delay(attempt):\n    return 2 ** attempt\n\n\n"
                     "def give_up(attempt):\n    return attempt > 5\n"),
    "pkg/session.py": "class Session:\n    def send(self, request):\n        return request\n",
}


def _embed_saved(ws: Workspace, ids: list[str]) -> int:
    plan = ws.save_plan(ids)
    return 0 if plan is None else ws.store_saved(plan, plan.embed())


def _current(ws: Workspace, node_id: str) -> bool:
    text = graph_texts(ws.graph, ws.root, [node_id], keyword=False)[node_id][2]
    return ws.index._vectors.text_hash(node_id) == text_hash(text)


def test_a_save_embeds_only_the_texts_it_changed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    ws = Workspace(root, WorkspaceConfig(max_embedded_nodes=2))
    ws.build()
    assert sorted(ws.index._vectors.ids()) == ["pkg/retry.py", "pkg/session.py"]
    assert ws.index.pending == 0

    path = root / "pkg/retry.py"
    path.write_text(path.read_text() + "\n\ndef jitter_window(value):\n    return value\n")
    _, ids = ws.update_files(["pkg/retry.py"])
    assert ids == ["pkg/retry.py", "pkg/retry.py::jitter_window"]
    assert ws.index.pending == 2      # those two: backoff_delay and give_up stay at file level
    assert _embed_saved(ws, ids) == 2
    assert sorted(ws.index._vectors.ids()) == [
        "pkg/retry.py", "pkg/retry.py::jitter_window", "pkg/session.py"]
    assert ws.index.pending == 0 and _current(ws, "pkg/retry.py")

    # a changed signature is a changed text: its node gets a vector of the new text
    path.write_text(path.read_text().replace("def give_up(attempt)", "def give_up(attempt, cap)"))
    _, ids = ws.update_files(["pkg/retry.py"])
    assert ids == ["pkg/retry.py::give_up"]
    assert _embed_saved(ws, ids) == 1 and _current(ws, "pkg/retry.py::give_up")
    assert ws.index.pending == 0

    # a plan whose node a later save changed again stores nothing of the old text
    path.write_text(path.read_text().replace("def jitter_window(value)",
                                             "def jitter_window(value, spread)"))
    _, ids = ws.update_files(["pkg/retry.py"])
    plan = ws.save_plan(ids)
    assert plan is not None and plan.ids == ["pkg/retry.py::jitter_window"]
    vectors = plan.embed()
    path.write_text(path.read_text().replace("(value, spread)", "(value, spread, seed)"))
    _, again = ws.update_files(["pkg/retry.py"])
    assert ws.store_saved(plan, vectors) == 0
    assert _embed_saved(ws, again) == 1 and _current(ws, "pkg/retry.py::jitter_window")
