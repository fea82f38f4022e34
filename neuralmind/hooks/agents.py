"""The agents NeuralMind hooks into, and the settings entries common to their contracts.

An agent module (`claude.py`, `gemini.py`) declares NAME, EVENTS (its event name ->
[(tool matcher or None, wire event)]), TIMEOUT (in the agent's unit), NAMED (whether a
hook entry carries a `name`), the files it reads (SETTINGS_FILE, MCP_FILE,
INSTRUCTIONS_FILE), SETTINGS_EXTRA (other settings init merges in), `project_dir(stdin
json)`, `parse(event, stdin json)` and `render(event, text)`.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

from neuralmind.hooks import claude, gemini

AGENTS: dict[str, ModuleType] = {m.NAME: m for m in (claude, gemini)}


def agent(name: str) -> ModuleType:
    """The agent module called `name` (ValueError names the known ones)."""
    try:
        return AGENTS[name]
    except KeyError:
        raise ValueError(f"unknown agent {name!r} (expected one of {', '.join(AGENTS)})") from None


def hook_settings(adapter: ModuleType, command: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The `hooks` entries of `adapter`'s settings: per event, one group per matcher, each
    running `<command> hook EVENT --agent NAME`."""
    out: dict[str, list[dict[str, Any]]] = {}
    for event, groups in adapter.EVENTS.items():
        out[event] = []
        for matcher, _ in groups:
            entry: dict[str, Any] = {"type": "command"}
            if adapter.NAMED:
                entry["name"] = f"neuralmind-{event}"
            entry["command"] = shlex.join([*command, "hook", event, "--agent", adapter.NAME])
            entry["timeout"] = adapter.TIMEOUT
            group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
            group["hooks"] = [entry]
            out[event].append(group)
    return out
