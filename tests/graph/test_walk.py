"""The file walk: ignore rules, git mode, and every skip reason, on real temp trees."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from neuralmind.config import WorkspaceConfig
from neuralmind.graph.ignore import IgnoreMatcher, parse_rule
from neuralmind.graph.walk import check_paths, walk


def write(root: Path, rel: str, text: str | bytes = "x = 1\n") -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


# --- the gitignore matcher -------------------------------------------------------------------

@pytest.mark.parametrize("pattern,path,is_dir,expected", [
    ("*.log", "a.log", False, True),
    ("*.log", "deep/dir/a.log", False, True),
    ("*.log", "a.log.txt", False, False),
    ("/top.py", "top.py", False, True),
    ("/top.py", "sub/top.py", False, False),
    ("doc/*.md", "doc/a.md", False, True),
    ("doc/*.md", "doc/x/a.md", False, False),
    ("doc/*.md", "other/doc/a.md", False, False),
    ("build/", "build", True, True),
    ("build/", "build", False, False),
    ("**/gen", "a/b/gen", True, True),
    ("**/gen", "gen", False, True),
    ("a/**/b.py", "a/b.py", False, True),
    ("a/**/b.py", "a/x/y/b.py", False, True),
    ("a/**", "a/x/y.py", False, True),
    ("a/**", "a", True, False),
    ("?.py", "x.py", False, True),
    ("?.py", "xy.py", False, False),
    ("[ab].py", "b.py", False, True),
    ("[!ab].py", "b.py", False, False),
    ("\\#hash.py", "#hash.py", False, True),
])
def test_gitignore_patterns(pattern: str, path: str, is_dir: bool, expected: bool) -> None:
    rule = parse_rule(pattern)
    assert rule is not None
    matched = bool(rule.regex.match(path)) and (is_dir or not rule.dir_only)
    assert matched is expected


def test_comments_blank_and_negation_last_match_wins(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "# comment\n\n*.py\n!keep.py\n")
    write(tmp_path, "sub/.gitignore", "keep.py\n!drop.py\n")
    m = IgnoreMatcher(tmp_path, (".gitignore",))
    assert m.is_ignored("a.py")
    assert not m.is_ignored("keep.py")
    assert m.is_ignored("sub/keep.py")        # the deeper file re-ignores it
    assert not m.is_ignored("sub/drop.py")    # and re-includes this one
    assert not m.is_ignored("# comment")


def test_file_in_ignored_directory_cannot_be_reincluded(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "out/\n!out/keep.py\n")
    m = IgnoreMatcher(tmp_path, (".gitignore",))
    assert m.is_ignored("out/keep.py")


# --- plain walk (no git) ---------------------------------------------------------------------

def test_plain_walk_honours_gitignore_neuralmindignore_and_exclude(tmp_path: Path) -> None:
    write(tmp_path, "src/app.py")
    write(tmp_path, "src/gen/schema.py")
    write(tmp_path, "src/secret.py")
    write(tmp_path, "notes.md", "# Notes\n")
    write(tmp_path, "scratch/tmp.py")
    write(tmp_path, "tests/test_app.py")
    write(tmp_path, "README.txt", "not source")
    write(tmp_path, ".gitignore", "gen/\n/scratch\n")
    write(tmp_path, ".neuralmindignore", "secret.py\n")
    cfg = WorkspaceConfig(exclude=["tests/**"])
    res = walk(tmp_path, cfg)
    assert res.git is False
    assert res.files == ["notes.md", "src/app.py"]
    assert res.skipped["ignored"] == ["scratch/", "src/gen/", "src/secret.py", "tests/test_app.py"]


def test_language_overrides_apply(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    write(tmp_path, "b.inc", "int x;\n")
    res = walk(tmp_path, WorkspaceConfig(languages={".inc": "c", ".py": ""}))
    assert res.files == ["b.inc"]


def test_vendored_binary_large_minified(tmp_path: Path) -> None:
    write(tmp_path, "ok.js", "export const a = 1;\n")
    write(tmp_path, "node_modules/lib/index.js")
    write(tmp_path, "pkg/vendor/dep.go", "package dep\n")
    write(tmp_path, "x.egg-info/setup.py")
    write(tmp_path, "blob.py", b"x = 1\n\x00\x01\x02")
    write(tmp_path, "big.py", "# " + "y" * 300 + "\n" * 1)
    write(tmp_path, "app.min.js", "var a=1;")
    write(tmp_path, "bundle.js", "var a=1;" * 2000)          # one 16 KB line
    cfg = WorkspaceConfig(max_file_bytes=200)
    res = walk(tmp_path, cfg)
    assert res.files == ["ok.js"]
    assert res.skipped["vendored"] == ["node_modules/", "pkg/vendor/", "x.egg-info/"]
    assert res.skipped["binary"] == ["blob.py"]
    assert res.skipped["too_large"] == ["big.py", "bundle.js"]
    res = walk(tmp_path, WorkspaceConfig())
    assert res.skipped["minified"] == ["app.min.js", "bundle.js"]
    assert "big.py" in res.files


def test_symlinks_outside_loop_inside_dangling(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    write(outside, "secret.py")
    write(root, "real.py")
    os.symlink(outside / "secret.py", root / "leak.py")
    os.symlink(outside, root / "leakdir")
    os.symlink(root / "loop_b.py", root / "loop_a.py")
    os.symlink(root / "loop_a.py", root / "loop_b.py")
    os.symlink(root / "real.py", root / "alias.py")
    os.symlink(root, root / "self")                       # directory cycle
    os.symlink(root / "gone.py", root / "dangling.py")
    res = walk(root, WorkspaceConfig())
    assert res.files == ["real.py"]
    assert res.skipped["symlink_outside"] == ["leak.py", "leakdir/"]
    assert res.skipped["symlink_loop"] == ["loop_a.py", "loop_b.py"]
    assert res.skipped["symlink_inside"] == ["alias.py", "self/"]
    # A dangling link cannot be read even by root: that is the 'unreadable' case here.
    assert res.skipped["unreadable"] == ["dangling.py"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root to drop to an unprivileged user")
def test_unreadable_file_for_unprivileged_user(tmp_path: Path) -> None:
    """chmod 000 does not stop root, so walk in a child process running as `nobody`."""
    base = Path("/tmp") / f"nm-walk-{os.getpid()}"
    shutil.rmtree(base, ignore_errors=True)
    try:
        write(base, "ok.py")
        write(base, "locked.py").chmod(0)
        for p in (base, base / "ok.py"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        code = ("import sys; from pathlib import Path; from neuralmind.config import "
                "WorkspaceConfig; from neuralmind.graph.walk import walk; "
                "r = walk(Path(sys.argv[1]), WorkspaceConfig()); print(r.files, r.skipped)")
        out = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             sys.executable, "-c", code, str(base)],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "HOME": "/tmp"},
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "['ok.py'] {'unreadable': ['locked.py']}"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_empty_folder(tmp_path: Path) -> None:
    res = walk(tmp_path, WorkspaceConfig())
    assert res.files == [] and res.skipped == {}


# --- git mode --------------------------------------------------------------------------------

def test_git_mode_uses_git_view(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path, ".gitignore", "ignored/\n*.gen.py\n")
    write(tmp_path, "tracked.py")
    write(tmp_path, "ignored/x.py")
    write(tmp_path, "a.gen.py")
    write(tmp_path, "forced.gen.py")
    write(tmp_path, "sub/.gitignore", "local.py\n")
    write(tmp_path, "sub/local.py")
    write(tmp_path, "sub/kept.py")
    write(tmp_path, ".git/info/exclude", "excluded_by_info.py\n")
    write(tmp_path, "excluded_by_info.py")
    write(tmp_path, "private.py")
    write(tmp_path, ".neuralmindignore", "private.py\n")
    git(tmp_path, "add", "tracked.py", ".gitignore")
    git(tmp_path, "add", "-f", "forced.gen.py")        # tracked although it matches an ignore
    git(tmp_path, "commit", "-q", "-m", "init")
    write(tmp_path, "untracked.py")
    res = walk(tmp_path, WorkspaceConfig())
    assert res.git is True
    assert res.files == ["forced.gen.py", "sub/kept.py", "tracked.py", "untracked.py"]
    # git-ignored entries are reported too (directories collapsed), plus .neuralmindignore
    assert res.skipped == {"ignored": ["a.gen.py", "excluded_by_info.py", "ignored/",
                                       "private.py", "sub/local.py"]}


def test_git_mode_deleted_tracked_file_is_absent(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path, "a.py")
    write(tmp_path, "b.py")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "init")
    (tmp_path / "b.py").unlink()
    assert walk(tmp_path, WorkspaceConfig()).files == ["a.py"]


def test_broken_git_dir_falls_back_to_own_walk(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("gitdir: /nonexistent/place\n")
    write(tmp_path, ".gitignore", "skip.py\n")
    write(tmp_path, "a.py")
    write(tmp_path, "skip.py")
    res = walk(tmp_path, WorkspaceConfig())
    assert res.git is False
    assert res.files == ["a.py"]
    assert res.skipped == {"ignored": ["skip.py"]}


@pytest.mark.parametrize("use_git", [False, True])
def test_check_paths_agrees_with_walk(tmp_path: Path, use_git: bool) -> None:
    if use_git:
        git(tmp_path, "init", "-q")
    write(tmp_path, ".gitignore", "ign.py\n")
    write(tmp_path, "a.py")
    write(tmp_path, "ign.py")
    write(tmp_path, "node_modules/m.js")
    write(tmp_path, "bin.py", b"\x00")
    paths = ["a.py", "ign.py", "node_modules/m.js", "bin.py", "missing.py"]
    res = check_paths(tmp_path, WorkspaceConfig(), paths)
    assert res.git is use_git
    assert res.files == ["a.py"]
    assert res.skipped == {"ignored": ["ign.py"], "vendored": ["node_modules/m.js"],
                           "binary": ["bin.py"]}
