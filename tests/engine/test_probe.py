"""The label-free probe on a small real repository: questions without names, figures that
are deterministic, blind spots named, and doctor's verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from neuralmind.engine import Workspace
from neuralmind.engine.probe import question_for, report, run_probe

CLI = [sys.executable, "-m", "neuralmind.cli.main"]

FILES = {
    "shop/billing.py": '''"""Money."""


def compute_invoice_total(items, tax_rate):
    """Sum the line items of an invoice and apply the sales tax rate."""
    return sum(items) * (1 + tax_rate)


def refund_payment(payment):
    """Return money to the customer's card after a cancelled order."""
    return -payment


class CurrencyConverter:
    """Convert amounts between currencies using daily exchange rates."""

    def convert(self, amount, rate):
        """Multiply an amount by the exchange rate between two currencies."""
        return amount * rate
''',
    "shop/users.py": '''"""People."""


def hash_password(password, salt):
    """Derive a salted hash from a password so it is never stored in clear text."""
    return (salt + password)[::-1]


def send_reset_link(email):
    """Email a one-time link that lets the user choose a new password."""
    return email
''',
    "tools/report.py": '''"""Reports."""


def render_sales_chart(rows):
    """Draw a bar chart of monthly sales figures as an image."""
    return rows


def export_csv(rows, path):
    """Write report rows to a comma separated values file on disk."""
    return path
''',
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("probe") / "shop"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    Workspace(root).build()
    return root


def test_the_question_is_the_docstring_without_the_name(shop: Path) -> None:
    ws = Workspace(shop)
    node = ws.graph.nodes["shop/billing.py::CurrencyConverter.convert"]
    assert question_for(node) == "Multiply an amount by the exchange rate between two currencies."
    doc = ws.graph.nodes["shop/billing.py::CurrencyConverter"]
    assert "CurrencyConverter" not in question_for(doc)


def test_probe_reports_figures_by_kind_language_and_blind_spots(shop: Path) -> None:
    run = subprocess.run([*CLI, "probe", str(shop), "--sample", "50", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["n"] == 8                      # every documented symbol with a question left
    assert 0.5 <= out["mrr"] <= 1.0 and out["recall_at_5"] >= 0.75 and out["healthy"]
    assert set(out["by_kind"]) == {"function", "class", "method"}
    assert set(out["by_language"]) == {"python"}
    assert {d["directory"] for d in out["blind_spots"]["directories"]} <= {"shop", "tools"}
    assert all(d["n"] >= 3 for d in out["blind_spots"]["directories"])
    again = report(run_probe(Workspace(shop), 50), 50)
    assert (again["mrr"], again["recall_at_5"]) == (out["mrr"], out["recall_at_5"])


def test_doctor_runs_a_small_probe(shop: Path) -> None:
    run = subprocess.run([*CLI, "doctor", str(shop), "--json"], capture_output=True, text=True,
                         timeout=300)
    checks = {c["name"]: c for c in json.loads(run.stdout)["checks"]}
    probe = checks["retrieval probe"]
    assert probe["status"] == "ok" and "documented symbols" in probe["message"]
