"""Claude Code: its hook contract and where its project settings live.

Contract (Claude Code hooks reference, https://code.claude.com/docs/en/hooks): each hook
gets one JSON object on stdin (`session_id`, `cwd`, `hook_event_name`, plus the event's
fields); on exit 0, stdout is JSON (or, for some events, plain text). What each event
may return, as used here:
- SessionStart (`source`: startup | resume | clear | compact) and UserPromptSubmit
  (`prompt`): `hookSpecificOutput.additionalContext` is added to the context.
- PreToolUse (`tool_name`, `tool_input`): `hookSpecificOutput.additionalContext` is added
  before the tool runs; no `permissionDecision` is given, so the tool is never blocked
  and the user's own permission rules apply.
- PostToolUse (`tool_name`, `tool_input`, `tool_response`): nothing is returned; the
  edited file is a learning event.
- PreCompact (`trigger`, `custom_instructions`): `hookSpecificOutput` is refused by the
  output schema for this event (anthropics/claude-code#46191); plain stdout on exit 0
  becomes the compaction's extra instructions (lossless-claude/lcm#228), so the
  directives are printed as text.
- Stop (`stop_hook_active`): `{"decision": "block", "reason": ...}` makes Claude
  continue with the reason as its next instruction; when `stop_hook_active` is true a
  Stop hook already continued this turn, and nothing is returned (no loop).
Settings: hooks go in `.claude/settings.local.json` (the per-machine project file: the
commands name this machine's interpreter), the MCP server in `.mcp.json`, pre-approved
by `enabledMcpjsonServers`; instructions in `CLAUDE.md`.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from neuralmind.hookwire import (
    COMPACT,
    EDIT,
    PROMPT,
    SEARCH,
    SESSION_START,
    STOP,
    HookRequest,
    parse_input,
)

if TYPE_CHECKING:
    from typing import Any

NAME = "claude"
SEARCH_TOOLS = ("Grep", "Glob")
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")

# event -> [(matcher, wire event)], in the order installed
EVENTS: dict[str, list[tuple[str | None, str]]] = {
    "SessionStart": [(None, SESSION_START)],
    "UserPromptSubmit": [(None, PROMPT)],
    "PreToolUse": [("|".join(SEARCH_TOOLS), SEARCH)],
    "PostToolUse": [("|".join(EDIT_TOOLS), EDIT)],
    "PreCompact": [(None, COMPACT)],
    "Stop": [(None, STOP)],
}
TIMEOUT = 10                    # seconds; Claude Code's own default is 600 s: cut a stuck hook sooner
NAMED = False                   # hook entries carry no `name` field

SETTINGS_FILE = ".claude/settings.local.json"
# (key, value merged in, what it is for): pre-approve the project's MCP server
SETTINGS_EXTRA = [("enabledMcpjsonServers", ["neuralmind"], "MCP server `neuralmind` approved")]
MCP_FILE = ".mcp.json"
INSTRUCTIONS_FILE = "CLAUDE.md"


def project_dir(data: dict[str, Any]) -> str | None:
    """Where the session runs: CLAUDE_PROJECT_DIR, else the `cwd` field."""
    return os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd") or None


def parse(event: str, data: dict[str, Any]) -> HookRequest | None:
    """The wire request for one hook call, or None when NeuralMind has nothing to do."""
    return parse_input(NAME, EVENTS, event, data)


def render(event: str, text: str) -> str:
    """What Claude Code expects on stdout for `text` ("" prints nothing)."""
    if not text or event not in EVENTS:
        return ""
    if event == "PreCompact":
        return text + "\n"
    if event == "Stop":
        return json.dumps({"decision": "block", "reason": text}) + "\n"
    return json.dumps({"hookSpecificOutput": {"hookEventName": event,
                                              "additionalContext": text}}) + "\n"

