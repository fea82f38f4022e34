"""The four-layer context end to end: real graph, real model, real token counts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sample_workspace import built_workspace

from neuralmind.context.pack import layer_budgets
from neuralmind.context.tokens import count_tokens, truncate_to_tokens
from neuralmind.engine import Workspace
from neuralmind.errors import EngineError

FILES = {
    "README.md": """
        # Invoicer

        [![build](https://ci.example/badge.svg)](https://ci.example)

        Invoicer turns billable hours into invoices and emails them to customers.

        ## Install
        pip install invoicer
    """,
    "billing/invoice.py": '''
        """Invoices: totals, taxes and rendering."""

        from billing.tax import vat_for


        class Invoice:
            """An invoice for one customer, made of line items."""

            def __init__(self, customer, items):
                self.customer = customer
                self.items = items

            def total(self):
                """Sum of the line items plus value-added tax."""
                subtotal = sum(item.amount for item in self.items)
                return subtotal + vat_for(self.customer.country, subtotal)
    ''',
    "billing/tax.py": '''
        """Tax rules per country."""

        RATES = {"DE": 0.19, "FR": 0.20}


        def vat_for(country, amount):
            """Value-added tax owed on `amount` for a customer in `country`."""
            return amount * RATES.get(country, 0.0)
    ''',
    "mail/sender.py": '''
        """Outgoing email over SMTP."""


        def send_email(address, subject, body):
            """Deliver one message through the configured SMTP relay."""
            return {"to": address, "subject": subject, "body": body}
    ''',
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return built_workspace(tmp_path_factory.mktemp("invoicer"), FILES)


def test_query_finds_the_defining_file_first(workspace: Workspace) -> None:
    result = workspace.query("how is value-added tax computed for a country?")
    files = list(dict.fromkeys(h.node.file for h in result.hits))
    assert files[0] == "billing/tax.py"
    assert result.mode == "hybrid"
    assert "billing/tax.py:" in result.context          # L3 names the location
    assert "RATES.get(country" in result.context         # ... and shows the relevant line


def test_layers_respect_their_budgets_and_the_total(workspace: Workspace) -> None:
    for budget in (200, 600, 1500, 4000):
        result = workspace.query("email delivery over smtp", budget=budget)
        budgets = layer_budgets(budget, ["L0", "L1", "L2", "L3"])
        assert result.tokens == count_tokens(result.context)
        assert result.tokens <= budget
        used = result.layers
        assert used["L0"] <= budgets["L0"] and used["L1"] <= budgets["L1"], (budget, used)
        # the code takes all but L2's share of what the summary left; L2 what it left
        assert used["L3"] <= budget - used["L0"] - used["L1"] - budgets["L2"], (budget, used)
        if budget >= 600:
            assert used["L3"] > 0, (budget, used)


def test_identity_skips_badges_and_takes_the_first_paragraph(workspace: Workspace) -> None:
    context = workspace.wakeup().context
    assert context.startswith("# Project: Invoicer")
    assert "turns billable hours into invoices" in context
    assert "badge.svg" not in context
    assert "## Architecture" in context


def test_layers_never_repeat_a_symbol(workspace: Workspace) -> None:
    result = workspace.query("invoice total with tax", explain=True)
    l2 = [line for line in result.explain if line.startswith("  L2 ") and "::" in line]
    l3 = [line for line in result.explain if line.startswith("  L3 ")]
    l2_ids = {line.split()[1].rstrip(":") for line in l2}
    l3_ids = {line.split()[1].rstrip(":") for line in l3}
    assert l3_ids and not (l2_ids & l3_ids)


def test_same_question_same_context(workspace: Workspace) -> None:
    a = workspace.query("send an email to a customer")
    b = workspace.query("send an email to a customer")
    assert a.context == b.context and [h.node.id for h in a.hits] == [h.node.id for h in b.hits]


def test_exact_identifier_wins(workspace: Workspace) -> None:
    hits, _, _ = workspace.search("vat_for", k=5)
    assert hits[0].node.id == "billing/tax.py::vat_for"


@pytest.mark.parametrize("question", ["", "   ", "x" * 10_001])
def test_bad_questions_are_refused(workspace: Workspace, question: str) -> None:
    with pytest.raises(EngineError) as e:
        workspace.query(question)
    assert e.value.code == "invalid_argument"


def test_truncate_to_tokens_never_exceeds() -> None:
    text = "\n".join(f"line {i} with some words" for i in range(200))
    for limit in (1, 5, 50, 500):
        assert count_tokens(truncate_to_tokens(text, limit)) <= limit


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "neuralmind.cli.main", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def test_cli_query_json_shape(workspace: Workspace) -> None:
    out = _cli("query", "where are emails sent?", str(workspace.root), "--json", "--budget", "800")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) >= {"context", "tokens", "layers", "mode", "hits"}
    assert data["tokens"] <= 800 and set(data["layers"]) == {"L0", "L1", "L2", "L3"}
    assert data["hits"][0]["file"] == "mail/sender.py"
    assert set(data["hits"][0]) == {"file", "line", "end_line", "symbol", "kind", "score"}


def test_cli_rejects_bad_input(workspace: Workspace, tmp_path: Path) -> None:
    assert _cli("query", "", str(workspace.root)).returncode == 2
    missing = _cli("query", "anything", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such directory" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_keyword_only_without_the_model(workspace: Workspace, tmp_path: Path) -> None:
    import os

    env = dict(os.environ, NEURALMIND_MODEL_DIR=str(tmp_path))  # no model there
    out = subprocess.run([sys.executable, "-m", "neuralmind.cli.main", "query",
                          "value-added tax", str(workspace.root), "--json"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["mode"] == "keyword"
    assert data["hits"][0]["file"] == "billing/tax.py"
    assert "Traceback" not in out.stderr
