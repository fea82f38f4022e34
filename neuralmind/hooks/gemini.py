"""Gemini CLI: its hook contract and where its project settings live.

Contract (Gemini CLI hooks reference, google-gemini/gemini-cli docs/hooks/reference.md):
stdin is one JSON object (`session_id`, `cwd`, `hook_event_name`, `timestamp`, plus the
event's fields); on exit 0 stdout must be JSON only, and when stdout is empty Gemini
reads stderr instead (so nothing may ever be written there). Used here:
- SessionStart (`source`) and BeforeAgent (`prompt`): `hookSpecificOutput.additionalContext`
  is added for the session / appended to the prompt of this turn.
- BeforeTool cannot add context (only allow/deny or rewrite the arguments), so a search
  gets NeuralMind's files from AfterTool on the search tools, whose
  `hookSpecificOutput.additionalContext` is appended to the tool's result.
- AfterTool on the edit tools (`write_file`, `replace`; `tool_input.file_path`): the
  edited file is a learning event; nothing is returned.
- PreCompress is advisory only (it cannot add to the summary): not installed; the
  directives survive compression in GEMINI.md's managed block (`neuralmind init`), which
  Gemini CLI loads with every request.
- AfterAgent (`stop_hook_active`): `{"decision": "deny", "reason": ...}` makes Gemini
  retry the turn with the reason as the next prompt; nothing when `stop_hook_active`.
Settings: hooks and the MCP server both go in `.gemini/settings.json`, where
`tools.enableHooks` must be true for any hook to run (docs/hooks/index.md); instructions
in `GEMINI.md`. Hook timeouts are in milliseconds.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from neuralmind.hookwire import EDIT, PROMPT, SEARCH, SESSION_START, STOP, HookRequest, parse_input

if TYPE_CHECKING:
    from typing import Any

NAME = "gemini"
SEARCH_TOOLS = ("search_file_content", "grep_search", "glob")
EDIT_TOOLS = ("write_file", "replace")

# event -> [(matcher, wire event)]; AfterTool carries both searches and edits
EVENTS: dict[str, list[tuple[str | None, str]]] = {
    "SessionStart": [(None, SESSION_START)],
    "BeforeAgent": [(None, PROMPT)],
    "AfterTool": [("|".join(SEARCH_TOOLS), SEARCH), ("|".join(EDIT_TOOLS), EDIT)],
    "AfterAgent": [(None, STOP)],
}
TIMEOUT = 10_000                # milliseconds (Gemini's unit; its default is 60 s)
NAMED = True                    # Gemini shows a hook's `name` in its logs and /hooks

SETTINGS_FILE = ".gemini/settings.json"
# (key, value merged in, what it is for): hooks run only with the hooks system on
SETTINGS_EXTRA = [("tools", {"enableHooks": True}, "hooks system on (tools.enableHooks)")]
MCP_FILE = ".gemini/settings.json"
INSTRUCTIONS_FILE = "GEMINI.md"


def project_dir(data: dict[str, Any]) -> str | None:
    """Where the session runs: GEMINI_PROJECT_DIR, else the `cwd` field."""
    return os.environ.get("GEMINI_PROJECT_DIR") or data.get("cwd") or None


def parse(event: str, data: dict[str, Any]) -> HookRequest | None:
    """The wire request for one hook call, or None when NeuralMind has nothing to do."""
    return parse_input(NAME, EVENTS, event, data)


def render(event: str, text: str) -> str:
    """What Gemini CLI expects on stdout for `text` ("" prints nothing)."""
    if not text or event not in EVENTS:
        return ""
    if event == "AfterAgent":
        return json.dumps({"decision": "deny", "reason": text}) + "\n"
    return json.dumps({"hookSpecificOutput": {"hookEventName": event,
                                              "additionalContext": text}}) + "\n"

