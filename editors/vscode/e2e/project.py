"""The workspace the suite opens: a small real project in a git repository, with
three recorded decisions (one made STALE by a later commit, one INVALIDATED, one
ACTIVE), built with the user's own `neuralmind` CLI as README describes."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

FILES = {
    "shop/invoice.py": '''"""Invoices: line items, taxes and the total a customer pays."""


def compute_invoice_total(items, tax_rate):
    """Sum the line items of an invoice and add the tax."""
    subtotal = sum(item.price * item.quantity for item in items)
    return round(subtotal * (1 + tax_rate), 2)


class InvoiceRenderer:
    """Render an invoice as plain text for e-mail."""

    def render(self, invoice):
        total = compute_invoice_total(invoice.items, invoice.tax_rate)
        return f"Invoice {invoice.number}: {total}"
''',
    "shop/session.py": '''"""Login sessions and their tokens."""

import secrets


def refresh_session_token(session):
    """Replace the session token with a fresh random one."""
    session.token = secrets.token_hex(16)
    return session
''',
    "shop/cache.py": '''"""An in-memory LRU cache for rendered pages."""


class PageCache:
    def __init__(self, size=128):
        self.size = size
        self.entries = {}
''',
    # Touched by the next-likely check only, so what it learns is not mixed with what
    # earlier checks' opens taught about the files above.
    "shop/stock.py": '''"""Stock levels per warehouse."""


def reserve(warehouse, sku, count):
    return warehouse.levels[sku] - count
''',
    "shop/shipping.py": '''"""Shipping labels and carriers."""


def label_for(parcel):
    return f"{parcel.carrier}:{parcel.tracking}"
''',
    # A pair that changes together (three commits of three: the review's 3 / (3 + 1) = 75%
    # reaches its 60% threshold): editing tax.py alone makes rates.py a probably-missed file.
    "shop/tax.py": '''"""Tax due on an amount."""


def tax_due(amount, rate):
    return amount * rate
''',
    "shop/rates.py": '''"""Tax rates per region."""

RATES = {"EU": 0.2, "US": 0.07}
''',
    "README.md": "# Shop\n\nA tiny shop backend: billing, sessions and a page cache.\n",
}

PAIR = ("shop/tax.py", "shop/rates.py")
STALE_TITLE = "Invoice totals round to cents"
ACTIVE_TITLE = "Session tokens are 128-bit random"
INVALIDATED_TITLE = "Rendered pages are cached in memory"


@dataclass
class Project:
    root: Path
    python: Path
    decisions: dict[str, str]  # title -> id

    @property
    def name(self) -> str:
        return self.root.name


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "E2E", "GIT_AUTHOR_EMAIL": "e2e@example.com",
           "GIT_COMMITTER_NAME": "E2E", "GIT_COMMITTER_EMAIL": "e2e@example.com",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def _cli(python: Path, root: Path, *args: str) -> str:
    cli = python.parent / "neuralmind"
    r = subprocess.run([str(cli), *args], cwd=root, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"neuralmind {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r.stdout


def _record(python: Path, root: Path, title: str, rationale: str, file: str) -> str:
    out = _cli(python, root, "decisions", "record", "--title", title, "--rationale", rationale,
               "--files", file, "--json")
    return json.loads(out)["id"]


def make_project(root: Path, python: Path, settings: dict[str, object]) -> Project:
    """`python` is the interpreter of the project's environment; the workspace settings
    select it (`python.defaultInterpreterPath`), as a user's .vscode/settings.json would."""
    root.mkdir(parents=True)
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".vscode").mkdir()
    (root / ".vscode" / "settings.json").write_text(json.dumps(
        {"python.defaultInterpreterPath": str(python), **settings}, indent=2))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "the shop")
    for i in (1, 2):
        for rel in PAIR:
            (root / rel).write_text((root / rel).read_text() + f"# revision {i}\n")
        _git(root, "commit", "-q", "-am", f"tax and its rates, revision {i}")
    ids = {
        STALE_TITLE: _record(python, root, STALE_TITLE,
                             "Accounting reconciles to two decimals.", "shop/invoice.py"),
        ACTIVE_TITLE: _record(python, root, ACTIVE_TITLE,
                              "secrets.token_hex(16) is enough entropy.", "shop/session.py"),
        INVALIDATED_TITLE: _record(python, root, INVALIDATED_TITLE,
                                   "Pages are small.", "shop/cache.py"),
    }
    _cli(python, root, "decisions", "invalidate", ids[INVALIDATED_TITLE], "--reason",
         "pages moved to a CDN")
    # The commit that makes the first decision stale.
    invoice = root / "shop/invoice.py"
    invoice.write_text(invoice.read_text().replace("(1 + tax_rate), 2)", "(1 + tax_rate), 3)"))
    _git(root, "commit", "-q", "-am", "invoices: three decimals")
    _cli(python, root, "decisions", "scan")
    return Project(root=root, python=python, decisions=ids)


def make_bare_folder(root: Path) -> Path:
    """A folder with no Python environment selected: nothing tells the extension where
    `neuralmind-lsp` is."""
    root.mkdir(parents=True)
    (root / "notes.py").write_text('"""Notes."""\n\n\ndef note():\n    return "n"\n')
    return root
