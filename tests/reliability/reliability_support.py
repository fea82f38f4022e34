"""Shared by the reliability tests: generated repositories, CLI runs, git, SQLite checks."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
ENV = {**os.environ, **GIT_ENV, "ORT_DISABLE_TELEMETRY": "1"}
CLI = [sys.executable, "-m", "neuralmind.cli.main"]

TOPICS = ["invoice", "user", "cart", "payment", "shipping", "report", "session", "token",
          "catalog", "review", "coupon", "ledger", "audit", "export", "search", "cache"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True,
                          text=True).stdout


def cli(*args: str, cwd: Path | None = None, timeout: float = 120.0,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, env=env or ENV, capture_output=True,
                          text=True, timeout=timeout)


def python_module(rng: random.Random, i: int, n: int) -> str:
    """A module with a function and a class that reach into two other modules (3 nodes)."""
    topic = TOPICS[i % len(TOPICS)]
    a, b = rng.randrange(n), rng.randrange(n)
    return f'''"""The {topic} rules, part {i}."""

from pkg.mod{a:03d} import helper_{a}
from pkg.mod{b:03d} import {TOPICS[b % len(TOPICS)].title()}Service{b}


def helper_{i}(value):
    """Normalise a {topic} value before it is stored."""
    return helper_{a}(value) if value else None


class {topic.title()}Service{i}({TOPICS[b % len(TOPICS)].title()}Service{b}):
    """Apply the {topic} policy number {i}."""
'''


def make_repo(root: Path, n_files: int = 200, seed: int = 7, commit: bool = True) -> Path:
    """A git repository of `n_files` interlinked Python modules (plus a README)."""
    rng = random.Random(seed)
    pkg = root / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    for i in range(n_files):
        (pkg / f"mod{i:03d}.py").write_text(python_module(rng, i, n_files), encoding="utf-8")
    (root / "README.md").write_text("# Shop\n\nRules for invoices, users and carts.\n",
                                    encoding="utf-8")
    if commit:
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "initial")
    return root


def private_copy(src: Path, dest: Path) -> Path:
    """A copy of a built repository (sources, .git and .neuralmind, mtimes kept) that is a
    repository of its own: a copy is the same repository by identity (it would share the
    original's learned memory), so it gets a remote naming itself. Its first open copies
    the original's learned stores into a folder of its own (repo/learned.py)."""
    shutil.copytree(src, dest, symlinks=True)
    git(dest, "remote", "add", "origin", dest.resolve().as_uri())
    return dest


def store_path(root: Path, name: str) -> Path:
    """Where the store `name` of `root` is: a learned store (synapses, decisions, use) in
    the repository's learned folder, shared by its worktrees (repo/learned.py); the graph
    and the indexes in its `.neuralmind/`."""
    from neuralmind.repo.learned import LEARNED_FILES, learned_dir

    return (learned_dir(root) if name in LEARNED_FILES else root / ".neuralmind") / name


def integrity(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return str(con.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        con.close()
