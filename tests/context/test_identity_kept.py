"""L0 is read once and kept (the identity per workspace, the language counts per graph):
every answer after a change to what it reads shows the change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sample_workspace import built_workspace

from neuralmind.engine import Workspace
from neuralmind.graph.graph import FileInfo, Graph

FILES = {
    "README.md": """
        # Ledger

        Ledger keeps double-entry accounts for small shops.
    """,
    "ledger/accounts.py": '''
        """Accounts and their balances."""


        def balance(entries):
            """Debits minus credits of one account."""
            return sum(e.debit - e.credit for e in entries)
    ''',
}


@pytest.fixture()
def workspace(tmp_path: Path) -> Workspace:
    return built_workspace(tmp_path / "ledger", FILES)


def _l0(ws: Workspace) -> str:
    return ws.query("account balance of debits and credits").context.split("\n\n")[0]


def test_an_edited_readme_is_read_again(workspace: Workspace) -> None:
    readme = workspace.root / "README.md"
    assert "double-entry accounts for small shops" in _l0(workspace)
    readme.write_text("# Ledger\n\nLedger prints the month's trial balance.\n", encoding="utf-8")
    assert "prints the month's trial balance" in _l0(workspace)
    # the same size and the same modification time as before, another inode (an editor's
    # save by rename): still read again
    st = readme.stat()
    tmp = readme.with_name("README.md.new")
    tmp.write_text("# Ledger\n\nLedger prints the month's trial bAlance.\n", encoding="utf-8")
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, readme)
    assert "trial bAlance" in _l0(workspace)


def test_a_new_or_removed_source_is_read_again(workspace: Workspace) -> None:
    root = workspace.root
    assert "double-entry" in _l0(workspace)
    (root / ".neuralmind.toml").write_text(
        '[project]\nname = "Books"\ndescription = "Books closes the year."\n', encoding="utf-8")
    l0 = _l0(workspace)
    assert l0.startswith("# Project: Books") and "closes the year" in l0
    (root / ".neuralmind.toml").unlink()
    (root / "README.md").unlink()
    l0 = _l0(workspace)
    assert l0.startswith("# Project: ledger") and "double-entry" not in l0


def _info(language: str) -> FileInfo:
    return FileInfo(sha1="0" * 40, language=language, size=1, mtime_ns=0)


def test_language_counts_follow_the_files() -> None:
    g = Graph()
    g.files = {"a.py": _info("python"), "b.py": _info("python"), "c.go": _info("go")}
    assert g.language_counts() == {"python": 2, "go": 1}
    g.files["d.rs"] = _info("rust")                      # a file added in place
    assert g.language_counts() == {"python": 2, "go": 1, "rust": 1}
    g.files = {"a.js": _info("javascript"), "b.js": _info("javascript"),
               "c.ts": _info("typescript"), "d.ts": _info("typescript")}   # same size, new dict
    assert list(g.language_counts().items()) == [("javascript", 2), ("typescript", 2)]
