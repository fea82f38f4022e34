"""The text a status answer shows for savings: "fewer" only when the answers cost less."""

from __future__ import annotations

from neuralmind.mcp.render import savings_line

BASE = {"answers": 3, "tokens_served": 3000, "codebase_tokens": 300000, "ratio": 100.0,
        "precision_at_5": None}


def test_savings_line_says_how_many_times_fewer() -> None:
    assert "3,000 tokens instead of 300,000 (100.0x fewer)" in savings_line(BASE)


def test_savings_line_on_a_project_smaller_than_its_answers() -> None:
    line = savings_line({**BASE, "tokens_served": 706, "codebase_tokens": 361, "ratio": 0.5})
    assert "706 tokens instead of 361" in line and "fewer" not in line


def test_no_answers_no_line() -> None:
    assert savings_line({**BASE, "answers": 0}) == ""
