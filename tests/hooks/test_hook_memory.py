"""Memory in the agent hooks, through the real `neuralmind hook` process: the standing
directives at session start and before a compaction, recalled atoms with each prompt."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hook_support import context_of, hook
from sample_workspace import make_repo

from neuralmind.engine import Workspace
from neuralmind.memory.directives import HEADER
from neuralmind.repo.learned import learned_dir

PROMPT = "how is the invoice total computed with tax"


@pytest.fixture(scope="module")
def remembered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = make_repo(tmp_path_factory.mktemp("hook-memory") / "shop")
    ws = Workspace(root)
    ws.build()
    rule = ws.remember("Run pytest -x before every commit.", "preference")
    ws.memory.pin(rule.id)
    lesson = ws.remember("Invoice totals are rounded once, after tax: rounding each line "
                         "item first drifted by a cent on long invoices.", "lesson",
                         label="Round invoice totals once",
                         about=["app/billing.py::compute_invoice_total"])
    old = ws.decisions.record("Invoice totals round per line item", "Matches the paper form.",
                              files=["app/billing.py"])
    ws.decisions.invalidate(old.id, "auditors want one rounding")
    return root, {"rule": rule.id, "lesson": lesson.id, "invalidated": old.id}


def _served(root: Path) -> tuple[dict[str, int], int]:
    with sqlite3.connect(learned_dir(root) / "memory.db") as conn:
        served = dict(conn.execute("SELECT id, served FROM atoms").fetchall())
        pending = conn.execute("SELECT count(*) FROM pending").fetchone()[0]
    return served, pending


def test_session_start_carries_the_directives_once(remembered: tuple[Path, dict[str, str]]) -> None:
    root, _ = remembered
    text = context_of(hook(root, "SessionStart", {"source": "startup"})[0], "SessionStart")
    assert "## Architecture" in text
    assert text.count(HEADER) == 1 and text.count("Run pytest -x before every commit") == 1


def test_a_new_pin_reaches_the_cached_session_start(remembered: tuple[Path, dict[str, str]]) -> None:
    root, _ = remembered
    hook(root, "SessionStart", {"source": "startup"})                  # cached now
    ws = Workspace(root)
    extra = ws.remember("Never log customer emails.", "preference")
    ws.memory.pin(extra.id)
    try:
        text = context_of(hook(root, "SessionStart", {"source": "resume"})[0], "SessionStart")
        assert "Never log customer emails" in text
    finally:
        ws.memory.pin(extra.id, on=False)


def test_prompt_gets_the_recalled_memory_with_its_id(remembered: tuple[Path, dict[str, str]]) -> None:
    root, ids = remembered
    before = _served(root)
    text = context_of(hook(root, "UserPromptSubmit", {"prompt": PROMPT})[0], "UserPromptSubmit")
    assert text.splitlines()[1].startswith("- app/billing.py: compute_invoice_total")
    memory = text[text.index("Memory that bears on it:"):].splitlines()
    assert f"- lesson {ids['lesson'][:8]}: Round invoice totals once (app/billing.py)" in memory
    assert ids["invalidated"][:8] not in text                 # an invalidated decision never
    # what the push showed counts as served (exposure), nothing else; never as pending feedback
    after = _served(root)
    assert after[1] == before[1]
    grew = {i: n - before[0][i] for i, n in after[0].items() if n != before[0][i]}
    assert grew == {ids["lesson"]: 1}


def test_compaction_keeps_the_directives(remembered: tuple[Path, dict[str, str]]) -> None:
    root, _ = remembered
    out, _ = hook(root, "PreCompact", {"trigger": "auto", "custom_instructions": ""})
    assert out.startswith(HEADER) and "Run pytest -x before every commit" in out
