"""A repository with a co-change history for the review tests: real git, real files.

`app/sessions.py` changed in 7 commits: 5 of them with `tests/test_sessions.py` (confidence
5 / 8 = 0.625), 2 with `app/models.py` (0.25); `app/pool.py` in 2 (`Pool.size` is what the
decision tests govern).
"""

from __future__ import annotations

from pathlib import Path

from sample_workspace import git

FILES = {
    "app/sessions.py": '"""Sessions."""\n\n\ndef open_session(user):\n    return {"user": user}\n',
    "tests/test_sessions.py": "from app.sessions import open_session\n\n\n"
                              "def test_open():\n    assert open_session('a')\n",
    "app/models.py": '"""Models."""\n\n\nclass User:\n    name = ""\n',
    "app/pool.py": '"""Pool."""\n\n\nclass Pool:\n    """Four connections."""\n\n'
                   "    def size(self):\n        # four: the database allows five\n"
                   "        return 4\n\n    def name(self):\n        return 'pool'\n",
}


def append(root: Path, rel: str, line: str) -> None:
    p = root / rel
    p.write_text(p.read_text() + line + "\n")


def make_history(root: Path) -> Path:
    """FILES committed, then the co-change history of the module docstring."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")   # all four files together: not counted below
    for i in range(4):
        append(root, "app/sessions.py", f"# change {i}")
        append(root, "tests/test_sessions.py", f"# change {i}")
        git(root, "commit", "-q", "-am", f"sessions and their test {i}")
    append(root, "app/sessions.py", "# alone")
    git(root, "commit", "-q", "-am", "sessions alone")
    append(root, "app/sessions.py", "# with models")
    append(root, "app/models.py", "# with sessions")
    git(root, "commit", "-q", "-am", "sessions and models")
    append(root, "app/pool.py", "# pool alone")
    git(root, "commit", "-q", "-am", "pool alone")
    return root.resolve()
