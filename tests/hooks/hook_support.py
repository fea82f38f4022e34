"""Shared by the hook tests: the real `neuralmind hook` process and agents' documented JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sample_workspace import GIT_ENV

# Without the agents' own variables: a test run inside an agent must not inherit its project.
ENV = {k: v for k, v in os.environ.items()
       if k not in ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")}
ENV.update(GIT_ENV, ORT_DISABLE_TELEMETRY="1")
HOOK = [sys.executable, "-m", "neuralmind.cli.entry", "hook"]


def hook(root: Path, event: str, payload: dict[str, Any] | str, agent: str = "claude",
         cwd: Path | None = None) -> tuple[str, subprocess.CompletedProcess[str]]:
    """Run one hook as the agent would (JSON on stdin); returns (stdout, the process)."""
    data = payload if isinstance(payload, str) else json.dumps(
        {"session_id": "sess-1", "transcript_path": str(root / "t.jsonl"), "cwd": str(root),
         "hook_event_name": event, **payload})
    proc = subprocess.run([*HOOK, event, "--agent", agent], input=data, capture_output=True,
                          text=True, env=ENV, cwd=cwd or root, timeout=120)
    assert proc.returncode == 0, proc
    assert proc.stderr == "", proc.stderr       # Gemini reads stderr when stdout is empty
    return proc.stdout, proc


def context_of(stdout: str, event: str) -> str:
    """The additionalContext of a hookSpecificOutput answer, checking its exact shape."""
    out = json.loads(stdout)
    assert set(out) == {"hookSpecificOutput"}, out
    assert set(out["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}, out
    assert out["hookSpecificOutput"]["hookEventName"] == event
    return out["hookSpecificOutput"]["additionalContext"]
