"""The observatory tests' workspace: the shop repository plus the strings a page must keep
inert (a file named like an HTML tag, a decision titled with a script)."""

from __future__ import annotations

from pathlib import Path

from sample_workspace import git, make_repo

XSS_FILE = "app/<img src=x onerror=alert(1)>.py"
XSS_TITLE = "<script>window.__pwned = 1</script> Keep totals in cents"
ATOM_LABEL = "<script>window.__pwned = 2</script> Sum in cents"


def make_observed_repo(root: Path) -> Path:
    repo = make_repo(root)
    (repo / XSS_FILE).write_text('"""A file whose name is markup."""\n\n\ndef '
                                 'render_markup_name():\n    return "<b>"\n', encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a file named like a tag")
    return repo
