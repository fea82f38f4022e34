"""`neuralmind init` and `--remove` through the real command, on projects that already have
settings, instructions and a git hook: merged in, idempotent, and restored byte for byte."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hook_support import ENV
from sample_workspace import make_repo

CLI = [sys.executable, "-m", "neuralmind.cli.entry"]
OTHER_HOOK = {"type": "command", "command": "prettier --write"}


def neuralmind(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=300,
                          env={**ENV, "HOME": str(home)})


def snapshot(*roots: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mode under `roots`, NeuralMind's state folder left out."""
    out = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and ".neuralmind" not in p.parts and "objects" not in p.parts:
                out[str(p)] = (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
    return out


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with its own Claude settings, MCP servers, CLAUDE.md and post-commit
    hook, and a home whose Claude Code auto-memory folder exists for it."""
    root = make_repo(tmp_path / "shop")
    (root / ".claude").mkdir()
    (root / ".claude/settings.local.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [OTHER_HOOK]}]}}) + "\n")
    (root / ".mcp.json").write_text('{"mcpServers": {"other": {"command": "other-mcp"}}}')
    (root / "CLAUDE.md").write_text("# Shop\n\nUse tabs.\n")
    hook = root / ".git/hooks/post-commit"
    hook.write_text("#!/bin/sh\necho committed\n")
    hook.chmod(0o750)
    home = tmp_path / "home"
    memory = home / ".claude/projects" / str(root).replace("/", "-") / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [prefs](prefs.md): the user's preferences\n")
    return root, home


def test_init_merges_is_idempotent_and_remove_restores_every_byte(
        project: tuple[Path, Path]) -> None:
    root, home = project
    before = snapshot(root, home)
    done = neuralmind("init", str(root), "--agent", "claude", home=home, cwd=root)
    assert done.returncode == 0, done.stderr
    settings = json.loads((root / ".claude/settings.local.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(ls:*)"]}
    post = settings["hooks"]["PostToolUse"]
    assert post[0] == {"matcher": "Write", "hooks": [OTHER_HOOK]}
    assert post[1]["matcher"] == "Edit|Write|MultiEdit|NotebookEdit"
    assert set(settings["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreToolUse",
                                      "PostToolUse", "PreCompact", "Stop"}
    assert settings["enabledMcpjsonServers"] == ["neuralmind"]
    servers = json.loads((root / ".mcp.json").read_text())["mcpServers"]
    assert servers["other"] == {"command": "other-mcp"}
    assert servers["neuralmind"]["args"][-2:] == ["mcp", str(root)]
    claude_md = (root / "CLAUDE.md").read_text()
    assert claude_md.startswith("# Shop\n\nUse tabs.\n\n<!-- neuralmind:begin")
    assert "neuralmind_query" in claude_md
    hook = (root / ".git/hooks/post-commit").read_text()
    assert hook.startswith("#!/bin/sh\necho committed\n") and "decisions scan" in hook
    assert stat.S_IMODE((root / ".git/hooks/post-commit").stat().st_mode) == 0o750
    exported = next(home.glob(".claude/projects/*/memory/neuralmind.md")).read_text()
    assert exported.startswith("---\nname: neuralmind\n") and "## Synapse memory" in exported

    # the installed hook command answers a prompt, as Claude Code would run it
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    asked = subprocess.run(command, shell=True, capture_output=True, text=True, env=ENV,
                           input=json.dumps({"session_id": "s", "cwd": str(root),
                                             "prompt": "how is the invoice total computed"}))
    assert "app/billing.py: compute_invoice_total" in asked.stdout

    installed = snapshot(root, home)
    again = neuralmind("init", str(root), "--no-build", home=home, cwd=root)
    assert again.returncode == 0 and snapshot(root, home) == installed
    assert again.stdout.count("unchanged") == 5

    dry = neuralmind("init", str(root), "--remove", "--dry-run", home=home, cwd=root)
    assert dry.returncode == 0 and "would update   CLAUDE.md" in dry.stdout
    assert snapshot(root, home) == installed
    removed = neuralmind("init", str(root), "--remove", home=home, cwd=root)
    assert removed.returncode == 0, removed.stderr
    assert snapshot(root, home) == before
    assert not (root / ".neuralmind/init.json").exists()


def test_remove_takes_out_only_ours_from_a_file_edited_since(tmp_path: Path) -> None:
    root, home = make_repo(tmp_path / "p"), tmp_path / "home"
    before = snapshot(root)
    assert neuralmind("init", str(root), "--no-build", home=home, cwd=root).returncode == 0
    assert (root / ".claude").is_dir() and (root / "CLAUDE.md").is_file()
    with (root / "CLAUDE.md").open("a") as f:
        f.write("\nRun the tests before committing.\n")
    assert neuralmind("init", str(root), "--remove", home=home, cwd=root).returncode == 0
    assert (root / "CLAUDE.md").read_text() == "\nRun the tests before committing.\n"
    assert not (root / ".claude").exists()               # created by init, empty again
    after = snapshot(root)
    after.pop(str(root / "CLAUDE.md"))
    assert after == before


def test_gemini_settings_hold_mcp_hooks_and_the_switch(tmp_path: Path) -> None:
    root, home = make_repo(tmp_path / "g"), tmp_path / "home"
    (root / ".gemini").mkdir()
    (root / ".gemini/settings.json").write_text('{"theme": "dark", "tools": {"sandbox": true}}')
    before = snapshot(root)
    done = neuralmind("init", str(root), "--agent", "gemini", "--no-build", home=home, cwd=root)
    assert done.returncode == 0, done.stderr
    settings = json.loads((root / ".gemini/settings.json").read_text())
    assert settings["theme"] == "dark"
    assert settings["tools"] == {"sandbox": True, "enableHooks": True}
    assert "neuralmind" in settings["mcpServers"]
    assert [g["matcher"] for g in settings["hooks"]["AfterTool"]] == [
        "search_file_content|grep_search|glob", "write_file|replace"]
    assert settings["hooks"]["BeforeAgent"][0]["hooks"][0]["timeout"] == 10_000
    assert "## NeuralMind" in (root / "GEMINI.md").read_text()
    assert neuralmind("init", str(root), "--agent", "gemini", "--remove", home=home,
                      cwd=root).returncode == 0
    assert snapshot(root) == before


def test_settings_that_are_not_json_stop_init_before_anything_is_written(
        tmp_path: Path) -> None:
    root, home = make_repo(tmp_path / "bad"), tmp_path / "home"
    (root / ".claude").mkdir()
    (root / ".claude/settings.local.json").write_text("{not json")
    before = snapshot(root)
    done = neuralmind("init", str(root), "--no-build", home=home, cwd=root)
    assert done.returncode == 2
    assert "settings.local.json is not valid JSON" in done.stderr
    assert snapshot(root) == before and not os.path.exists(root / ".neuralmind/init.json")
