"""Helpers for the decision tests: real git in temporary repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
}


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` (no global config, fixed identity); returns stdout, raises on failure."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env,
                          check=False)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


def write(repo: Path, rel: str, text: str) -> None:
    p = repo / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


POOL_PY = '''"""Connection pool."""


class Pool:
    """Hands out connections."""

    def acquire(self, timeout):
        # wait at most `timeout` seconds
        return self._take(timeout)

    def release(self, conn):
        self._free.append(conn)


def helper():
    return 1
'''
