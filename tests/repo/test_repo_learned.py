"""Learned memory is keyed by the repository's identity: worktrees share it, each keeps
its own graph and index; identity changes move what was learned (real git)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sample_workspace import git, make_repo

from neuralmind.engine import Workspace
from neuralmind.repo.git import changed_files, diff_names, head_commit
from neuralmind.repo.identity import normalise_remote, repo_identity
from neuralmind.repo.learned import learned_dir


def test_two_worktrees_share_learned_memory_and_keep_their_own_graph(
        tmp_path: Path, data_home: Path) -> None:
    main = make_repo(tmp_path / "main")
    git(main, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "feature"))
    feature = (tmp_path / "feature").resolve()
    (feature / "app" / "extra.py").write_text("def only_on_feature():\n    return 1\n")

    a, b = Workspace(main), Workspace(feature)
    assert a.learned == b.learned
    assert a.learned.parent == data_home / "repos"
    assert a.learned.name == repo_identity(main).key

    decision = a.decisions.record("Pool of four", "measured", files=["app/storage.py"])
    assert b.decisions.get(decision.id).title == "Pool of four"
    a.synapses.activate_files(["app/billing.py", "app/users.py"], namespace="personal")
    assert dict(b.synapses.neighbors("app/billing.py", namespaces=["personal"]))["app/users.py"] > 0

    a.build(embed=False)
    b.build(embed=False)
    assert "app/extra.py" in b.graph.files and "app/extra.py" not in a.graph.files
    assert a.state != b.state
    assert (a.state / "graph.db").is_file() and (b.state / "graph.db").is_file()
    registry = json.loads((a.learned / "repo.json").read_text())
    assert registry["worktrees"] == sorted([str(main), str(feature)])


def test_a_folder_outside_git_keeps_its_memory_locally(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert learned_dir(tmp_path / "plain") == (tmp_path / "plain" / ".neuralmind").resolve()


def test_memory_learned_before_the_first_commit_moves_with_the_identity(
        tmp_path: Path, data_home: Path) -> None:
    root = tmp_path / "young"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("def a():\n    return 1\n")
    ws = Workspace(root)
    assert ws.learned == (root / ".neuralmind").resolve()
    recorded = ws.decisions.record("Keep a", "because", files=["a.py"])

    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    again = Workspace(root)
    assert again.learned.parent == data_home / "repos"
    assert again.decisions.get(recorded.id).title == "Keep a"
    kept = [p.name for p in (root / ".neuralmind").iterdir() if p.name.startswith("memory.db.moved-")]
    assert kept, "the original store is kept beside, renamed"

    git(root, "remote", "add", "origin", "git@Example.com:team/young.git")
    moved = Workspace(root)
    assert moved.learned != again.learned
    assert moved.decisions.get(recorded.id).title == "Keep a"
    assert repo_identity(root).remote == "example.com/team/young"


@pytest.mark.parametrize("url, expected", [
    ("git@GitHub.com:team/app.git", "github.com/team/app"),
    ("ssh://git@github.com:22/team/app", "github.com/team/app"),
    ("https://user:secret@github.com/team/app/", "github.com/team/app"),
    ("/srv/git/app.git", "/srv/git/app.git"),
    ("", ""),
])
def test_remotes_are_normalised_without_credentials(url: str, expected: str) -> None:
    assert normalise_remote(url) == expected


def test_change_set_and_commit_diff_are_relative_to_a_subfolder_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "mono")
    sub = repo / "app"
    first = head_commit(repo)
    (sub / "billing.py").write_text("changed = 1\n")
    (sub / "new.py").write_text("x = 1\n")
    (repo / "README.md").write_text("outside the subfolder\n")
    assert changed_files(sub) == ["billing.py", "new.py"]
    assert changed_files(repo) == ["README.md", "app/billing.py", "app/new.py"]
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    assert first is not None and diff_names(sub, first, "HEAD") == ["billing.py", "new.py"]
    assert diff_names(sub, "0" * 40, "HEAD") is None
    assert changed_files(tmp_path) is None


def test_a_server_never_mixes_another_writers_index_with_its_graph(tmp_path: Path) -> None:
    from neuralmind.config import WorkspaceConfig

    repo = make_repo(tmp_path / "shop")
    Workspace(repo).build(embed=False)
    served = Workspace.open_for_serving(repo, WorkspaceConfig())
    generation, indexed = served.graph.generation, served.index.node_count
    (repo / "app" / "extra.py").write_text("def brand_new_helper():\n    return 1\n")
    Workspace(repo).build(embed=False)              # another process writes a generation
    hits, _, _ = served.search("brand_new_helper", 5)
    assert served.index.node_count == indexed        # the served generation, graph and index
    assert "app/extra.py" not in {h.node.file for h in hits}
    out = served.stamp_answer({"hits": [h.to_json() for h in hits]}, head=None, dirty=None)
    assert out["freshness"]["index_generation"] == generation
    served.update_files(["app/users.py"])           # the next save follows it: both together
    hits, _, _ = served.search("brand_new_helper", 5)
    assert hits[0].node.file == "app/extra.py"
    assert served.graph.generation > generation and served.index.node_count > indexed
