"""The session-start pack's cache follows git HEAD: its "stale decisions on recently edited
files" are those of the last commits, so a commit, a checkout or a linked worktree's own
HEAD must render the pack again (real git, no engine: the cache is what the hook reads)."""

from __future__ import annotations

from pathlib import Path

from sample_workspace import git, make_repo

from neuralmind.engine import hook_cache


def _state(root: Path) -> Path:
    state = root / ".neuralmind"
    state.mkdir(exist_ok=True)
    (state / "graph.db").write_bytes(b"graph")
    return state


def test_a_commit_or_checkout_renders_the_pack_again(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "shop")
    state = _state(root)
    hook_cache.write(state, "pack at the first commit")
    assert hook_cache.read(state) == "pack at the first commit"

    (root / "app" / "billing.py").write_text("# changed\n", encoding="utf-8")
    assert hook_cache.read(state) is not None         # an uncommitted edit keeps HEAD
    git(root, "commit", "-q", "-am", "change billing")
    assert hook_cache.read(state) is None             # a commit moved HEAD

    hook_cache.write(state, "pack at the second commit")
    git(root, "checkout", "-q", "-b", "topic")         # same commit, another branch
    assert hook_cache.read(state) is None


def test_a_linked_worktree_and_a_subfolder_follow_their_own_head(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "shop")
    git(root, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "linked")
    linked = (tmp_path / "linked").resolve()
    sub_state = _state(linked / "app")                # a workspace below the top level
    hook_cache.write(sub_state, "pack")
    git(root, "commit", "-q", "--allow-empty", "-m", "main moves")
    assert hook_cache.read(sub_state) == "pack"       # another worktree's HEAD moved
    git(linked, "commit", "-q", "--allow-empty", "-m", "linked moves")
    assert hook_cache.read(sub_state) is None


def test_outside_git_the_pack_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    state = _state(root)
    hook_cache.write(state, "pack")
    assert hook_cache.read(state) == "pack"
    assert hook_cache.key(state).split()[1] == "-"
