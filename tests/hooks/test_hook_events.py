"""Each hook event through the real `neuralmind hook` process, with the agents' documented
stdin JSON, answered from the on-disk index and by a live editor server."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hook_support import ENV, context_of, hook
from sample_workspace import eventually, git, make_repo, start_editor_server

from neuralmind import hookwire
from neuralmind.discovery import HOOKS_DISCOVERY_NAME, read_discovery
from neuralmind.engine import Workspace
from neuralmind.engine.agent_journal import JOURNAL
from neuralmind.events.log import read_events
from neuralmind.hooks import claude, gemini

PROMPT = "how is the invoice total computed with tax"
CLI = [sys.executable, "-m", "neuralmind.cli.main"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_repo(tmp_path_factory.mktemp("hooks") / "shop")
    Workspace(root).build()
    return root


# --- Claude Code, no server: the on-disk index -------------------------------------------------
def test_session_start_pushes_the_wakeup_pack(built: Path) -> None:
    out, _ = hook(built, "SessionStart", {"source": "startup", "model": "claude-x"})
    text = context_of(out, "SessionStart")
    assert "Shop" in text and "## Architecture" in text
    cache = built / ".neuralmind" / "session_start.md"
    key = cache.read_text().splitlines()[0]
    assert hook(built, "SessionStart", {"source": "resume"})[0] == out     # from the cache
    (built / ".neuralmind.toml").write_text("budget = 1400\n", encoding="utf-8")
    try:
        assert context_of(hook(built, "SessionStart", {"source": "clear"})[0], "SessionStart")
        assert cache.read_text().splitlines()[0] != key        # a new input, a new pack
    finally:
        (built / ".neuralmind.toml").unlink()


def test_prompt_gets_the_ranked_files_and_the_top_hit_lines(built: Path) -> None:
    out, _ = hook(built, "UserPromptSubmit", {"prompt": PROMPT})
    text = context_of(out, "UserPromptSubmit")
    lines = text.splitlines()
    assert lines[0].startswith("NeuralMind: files for this prompt")
    assert lines[1].startswith("- app/billing.py: compute_invoice_total")
    assert "Top hit: `app/billing.py:4-7` compute_invoice_total (function)" in text
    assert "return round(subtotal * (1 + tax_rate), 2)" in text


def test_a_hook_answered_from_disk_reaches_the_event_log(built: Path) -> None:
    """The observatory's Debug trace shows hooks no server answered too (the JSONL bridge)."""
    out, _ = hook(built, "UserPromptSubmit", {"prompt": PROMPT, "session_id": "disk-trace"})
    pushed = context_of(out, "UserPromptSubmit")
    hooks = [e for e in read_events(built, kinds=frozenset({"hook"}))
             if e.data.get("session") == "disk-trace"]
    assert len(hooks) == 1 and hooks[0].origin.startswith("hook ")
    data = hooks[0].data
    assert (data["agent"], data["event"], data["served_by"]) == ("claude", hookwire.PROMPT, "disk")
    assert data["chars"] == len(pushed) and data["pushed"] == pushed.splitlines()[0]
    assert data["ms"] > 0
    asked = [e.data for e in read_events(built, kinds=frozenset({"query"}))
             if e.data.get("source") == "agent:claude:disk-trace"]
    assert len(asked) == 1 and asked[0]["files"][0] == "app/billing.py" and asked[0]["tokens"] > 0


def test_prompt_budget_is_kept(built: Path) -> None:
    (built / ".neuralmind.toml").write_text("hook_budget = 60\n", encoding="utf-8")
    try:
        out, _ = hook(built, "UserPromptSubmit", {"prompt": PROMPT})
    finally:
        (built / ".neuralmind.toml").unlink()
    from neuralmind.context.tokens import count_tokens

    assert 0 < count_tokens(context_of(out, "UserPromptSubmit")) <= 60


@pytest.mark.parametrize("prompt", ["thanks", "/compact", "yes go on"])
def test_prompts_with_nothing_to_retrieve_get_silence(built: Path, prompt: str) -> None:
    assert hook(built, "UserPromptSubmit", {"prompt": prompt})[0] == ""


def test_grep_gets_the_engines_files_and_is_never_blocked(built: Path) -> None:
    out, _ = hook(built, "PreToolUse", {"tool_name": "Grep", "tool_use_id": "t1",
                                        "tool_input": {"pattern": r"def\s+reset_password",
                                                       "path": str(built)}})
    text = context_of(out, "PreToolUse")     # no permissionDecision: the tool runs as asked
    assert text.splitlines()[0] == "NeuralMind's best files for `reset_password`:"
    assert text.splitlines()[1].startswith("- app/users.py: reset_password")


def test_a_glob_without_words_and_other_tools_get_silence(built: Path) -> None:
    glob = {"tool_name": "Glob", "tool_input": {"pattern": "**/*.py"}}
    bash = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    assert hook(built, "PreToolUse", glob)[0] == ""
    assert hook(built, "PreToolUse", bash)[0] == ""


def test_edits_then_stop_learn_the_prompt_and_what_it_led_to(built: Path) -> None:
    journal = built / ".neuralmind" / JOURNAL
    hook(built, "UserPromptSubmit", {"prompt": "send the password reset link by email"})
    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(built / "app/users.py"),
                                                "old_string": "a", "new_string": "b"},
            "tool_response": {"filePath": str(built / "app/users.py"), "success": True}}
    assert hook(built, "PostToolUse", edit)[0] == ""
    assert hook(built, "PostToolUse", {**edit, "tool_input": {
        "file_path": str(built / "app/storage.py")}})[0] == ""
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [(e["type"], e.get("file")) for e in events][-3:] == [
        ("question", None), ("save", "app/users.py"), ("save", "app/storage.py")]
    out, _ = hook(built, "Stop", {"stop_hook_active": False})
    assert out == ""                              # no review to give before #17 lands
    assert not journal.exists()
    learned = Workspace(built).synapses.question_files("send the password reset link by email")
    assert {f for f, _ in learned} >= {"app/users.py", "app/storage.py"}


def test_pre_compact_and_a_continuing_stop_add_nothing_yet(built: Path) -> None:
    assert hook(built, "PreCompact", {"trigger": "auto", "custom_instructions": ""})[0] == ""
    assert hook(built, "Stop", {"stop_hook_active": True})[0] == ""


def test_bad_input_is_silent_and_logged(built: Path) -> None:
    out, _ = hook(built, "UserPromptSubmit", '{"prompt": ', cwd=built)
    assert out == ""
    out, _ = hook(built, "UserPromptSubmit", {"prompt": PROMPT, "cwd": "/"}, cwd=Path("/"))
    assert out == ""                              # no workspace above "/": nothing to say
    outside = {"tool_name": "Write", "tool_input": {"file_path": "/etc/passwd"}}
    assert hook(built, "PostToolUse", outside)[0] == ""
    journal = built / ".neuralmind" / JOURNAL
    assert not journal.exists() or "passwd" not in journal.read_text()
    log = (built / ".neuralmind" / "hooks.log").read_text()
    assert "claude UserPromptSubmit: JSONDecodeError" in log
    assert "claude PostToolUse: EngineError" in log


def test_the_renderers_follow_each_contract() -> None:
    assert claude.render("PreCompact", "Keep money in Decimal.") == "Keep money in Decimal.\n"
    assert json.loads(claude.render("Stop", "Review: tests/")) == {
        "decision": "block", "reason": "Review: tests/"}
    assert json.loads(gemini.render("AfterAgent", "Review: tests/")) == {
        "decision": "deny", "reason": "Review: tests/"}
    assert claude.render("UserPromptSubmit", "") == gemini.render("BeforeAgent", "") == ""


# --- Gemini CLI --------------------------------------------------------------------------------
def test_gemini_events(built: Path) -> None:
    out, _ = hook(built, "BeforeAgent", {"prompt": PROMPT, "timestamp": "2026-01-01T00:00:00Z"},
                  agent="gemini")
    assert "- app/billing.py: compute_invoice_total" in context_of(out, "BeforeAgent")
    out, _ = hook(built, "AfterTool", {"tool_name": "search_file_content",
                                       "tool_input": {"pattern": "authenticate_user"},
                                       "tool_response": {"llmContent": "Found 1 match"}},
                  agent="gemini")
    assert "- app/users.py: authenticate_user" in context_of(out, "AfterTool")
    write = {"tool_name": "write_file", "tool_input": {"file_path": str(built / "README.md"),
                                                       "content": "# Shop\n"}}
    assert hook(built, "AfterTool", write, agent="gemini")[0] == ""
    assert hook(built, "AfterAgent", {"prompt": PROMPT, "prompt_response": "done",
                                      "stop_hook_active": False}, agent="gemini")[0] == ""


# --- with the editor's live server --------------------------------------------------------------
@pytest.mark.asyncio
async def test_a_live_server_answers_and_learns_the_agents_edits(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "live")
    lesson = Workspace(root).memory.remember("Invoice totals are rounded once, after tax.",
                                             "lesson", label="Round invoice totals once",
                                             about=["app/billing.py"])
    proc = start_editor_server(root)
    journal = root / ".neuralmind" / JOURNAL
    try:
        async def served() -> bool:
            if read_discovery(root) is None:
                return False
            out, _ = await asyncio.to_thread(hook, root, "UserPromptSubmit", {"prompt": PROMPT})
            return "compute_invoice_total" in out

        await eventually(served, 120, "the server's first answer")
        text = context_of(hook(root, "UserPromptSubmit", {"prompt": PROMPT})[0], "UserPromptSubmit")
        assert f"- lesson {lesson.id[:8]}: Round invoice totals once (app/billing.py)" in text
        text = context_of(hook(root, "SessionStart", {"source": "resume"})[0], "SessionStart")
        assert "## Architecture" in text
        billing = root / "app/billing.py"
        billing.write_text(billing.read_text() + '\n\ndef apply_loyalty_discount(total, points):\n'
                           '    """Take loyalty points off an invoice total."""\n'
                           '    return total - points / 100\n', encoding="utf-8")
        edit = {"tool_name": "Write", "tool_input": {"file_path": str(billing), "content": "..."}}
        assert hook(root, "PostToolUse", edit)[0] == ""

        async def fresh() -> bool:
            out, _ = await asyncio.to_thread(hook, root, "UserPromptSubmit",
                                             {"prompt": "apply loyalty discount points"})
            return "apply_loyalty_discount" in out

        await eventually(fresh, 30, "the edited file searchable through the server")
        assert not journal.exists()              # the server learned it; nothing journaled
        os.kill(proc.pid, signal.SIGKILL)        # a stale discovery file: the disk answers
        proc.wait(10)
        out, _ = hook(root, "UserPromptSubmit", {"prompt": PROMPT})
        assert "- app/billing.py: compute_invoice_total" in context_of(out, "UserPromptSubmit")
        assert journal.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.asyncio
async def test_the_agents_own_mcp_process_answers_its_hooks(tmp_path: Path) -> None:
    """Without an editor, the `neuralmind mcp` the agent spawned serves the hook route."""
    root = make_repo(tmp_path / "agent")
    proc = subprocess.Popen([*CLI, "mcp", str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV,
                            cwd=root)
    try:
        async def served() -> bool:
            if read_discovery(root, HOOKS_DISCOVERY_NAME) is None:
                return False
            out, _ = await asyncio.to_thread(hook, root, "UserPromptSubmit", {"prompt": PROMPT})
            return "compute_invoice_total" in out

        await eventually(served, 120, "the agent process's first answer")
        edit = {"tool_name": "Edit", "tool_input": {"file_path": str(root / "app/users.py")}}
        assert hook(root, "PostToolUse", edit)[0] == ""
        assert not (root / ".neuralmind" / JOURNAL).exists()      # learned live, not journaled
        assert read_discovery(root) is None                       # never offered for bridging
        assert proc.stdin is not None
        proc.stdin.close()
        await asyncio.to_thread(proc.wait, 10)
        assert read_discovery(root, HOOKS_DISCOVERY_NAME) is None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_stop_after_an_edit_reviews_what_the_turn_changed(tmp_path: Path) -> None:
    """Billing and its test always changed together; a turn that edits billing alone is
    told, and the agent (Claude: decision block) goes on to look; a continuing Stop is not."""
    root = make_repo(tmp_path / "review")
    test_file = root / "tests" / "test_billing.py"
    test_file.parent.mkdir()
    for i in range(5):
        with (root / "app/billing.py").open("a") as f:
            f.write(f"\n\nRATE_{i} = {i}\n")
        test_file.write_text(f"def test_rate():\n    assert {i} == {i}\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"rate {i}")
    Workspace(root).build()
    hook(root, "UserPromptSubmit", {"prompt": "change the tax rounding of invoice totals"})
    with (root / "app/billing.py").open("a") as f:
        f.write("\n\nROUNDING = 2\n")
    hook(root, "PostToolUse", {"tool_name": "Edit",
                               "tool_input": {"file_path": str(root / "app/billing.py")}})
    out, _ = hook(root, "Stop", {"stop_hook_active": False})
    answer = json.loads(out)
    assert answer["decision"] == "block"
    assert answer["reason"].startswith("NeuralMind's review of the files this turn changed:")
    assert "- tests/test_billing.py (" in answer["reason"]
    assert "usually changes with app/billing.py" in answer["reason"]
    assert hook(root, "Stop", {"stop_hook_active": True})[0] == ""
