"""The wake-up pack's memory: directives, open loops, stale decisions on recently edited
files, active hubs, all within the wake-up budget; standing directives within their limits."""

from __future__ import annotations

from pathlib import Path

from decision_helpers import POOL_PY, commit_all, write
from memory_helpers import store_at

from neuralmind.context.tokens import count_tokens
from neuralmind.engine import Workspace
from neuralmind.memory.directives import HEADER, render


def test_wakeup_carries_memory_within_its_budget(repo: Path) -> None:
    ws = Workspace(repo)
    ws.build(embed=False)
    plain = ws.wakeup()
    assert "## Memory" not in plain.context and "memory" not in plain.layers
    pref = ws.remember("Use ruff, never black, for formatting.", "preference")
    ws.memory.pin(pref.id)
    loop = ws.remember("Finish moving the pool to asyncio", "open_loop", hubs=["pool"])
    done = ws.remember("Rename the helper", "open_loop")
    ws.memory.close(done.id)
    d = ws.decisions.record("Pool size 20", "Measured at peak.", files=["pool.py"])
    write(repo, "pool.py", POOL_PY.replace("return 1", "return 3"))
    commit_all(repo, "helper")
    ws.decisions.scan()                                      # d goes STALE on a recent file
    result = ws.wakeup()
    text = result.context
    assert HEADER in text and "Use ruff, never black" in text
    assert loop.label in text and done.label not in text
    assert "Pool size 20" in text and d.id in text
    assert "Active memory hubs: pool (1)" in text
    assert result.tokens == count_tokens(text) <= 600 and result.layers["memory"] > 0
    small = ws.wakeup(budget=120)
    assert small.tokens <= 120


def test_directives_stay_within_lines_and_characters(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    prefs = [store.remember(f"Rule {i}: " + "always keep the changelog current " * 3, "preference")
             for i in range(12)]
    for p in prefs:
        store.pin(p.id)
    block = store.directives(8, 1000)
    lines = block.text.splitlines()
    assert len(lines) <= 8 and len(block.text) <= 1000
    assert lines[0] == HEADER and lines[-1] == f"(+{len(block.omitted)} more: neuralmind memory directives)"
    assert block.ids == [p.id for p in prefs[:len(block.ids)]] and len(block.ids) + len(block.omitted) == 12
    tight = render([store.atom(prefs[0].id)], 2, 200)
    assert len(tight.text) <= 200 and tight.ids == [prefs[0].id]
    assert store.directives(1, 1000).text == ""                 # no room: nothing, not a cut rule
    unpinned = store.remember("A rule nobody pinned", "preference")
    assert unpinned.id not in store.directives(8, 1000).ids
