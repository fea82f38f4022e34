"""Ask the warm server: the CLI's consulting commands through a running NeuralMind server.

When the editor's server (or any `neuralmind-lsp`) serves the workspace, its
discovery file (`.neuralmind/mcp.json`) names a loopback endpoint and a token (else an
agent's own `neuralmind mcp`, `.neuralmind/hooks.json`, is asked); a command POSTs there (`mcp/cli_route.py`) and prints the answer the server computed
with its index, model and learned state already in memory, instead of loading them
(see BENCHMARKS.md "Cold CLI"). Stdlib only (a plain socket, `hookwire.post`), so this
path imports nothing heavy.

Any doubt falls back to answering from disk: no discovery file, a dead pid, a
refused connection, a token the server does not accept, another workspace. An
answer the server gives, error included, is final (it is the same engine).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from neuralmind.cli.common import root_argument
from neuralmind.errors import EngineError
from neuralmind.hookwire import (
    CLI_PATH,
    DISCOVERY_NAME,
    HOOKS_DISCOVERY_NAME,
    endpoint,
    pid_alive,
    post,
)

log = logging.getLogger("neuralmind.cli")

CONNECT_TIMEOUT_SECONDS = 1.0   # loopback: a live server accepts at once
ANSWER_TIMEOUT_SECONDS = 120.0  # a server mid-build answers when its engine thread is free


def local_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--local", action="store_true",
                   help="answer from disk even when a server runs for the workspace")


def from_server(args: argparse.Namespace, method: str, params: dict[str, Any]) -> Any | None:
    """The running server's answer (None: none runs, or --local: answer from disk)."""
    if args.local:
        return None
    return ask_server(root_argument(args.path), method, params)


def ask_server(root: Path, method: str, params: dict[str, Any]) -> Any | None:
    """The running server's result for `method` (the editor's, else an agent's own
    `neuralmind mcp`), or None when none answered (the caller then answers from disk).
    Raises the server's EngineError as is."""
    body = json.dumps({"method": method, "params": params}).encode()
    for name in (DISCOVERY_NAME, HOOKS_DISCOVERY_NAME):
        answered, result = _ask(root, name, body)
        if answered:
            return result
    return None


def _ask(root: Path, name: str, body: bytes) -> tuple[bool, Any]:
    """(True, result) when the server of discovery file `name` answered for `root`."""
    entry = endpoint(root / ".neuralmind", name)
    if entry is None or not pid_alive(entry[2]):
        return False, None
    url, token, pid = entry
    try:
        status, raw = post(url, CLI_PATH, token, body, ANSWER_TIMEOUT_SECONDS,
                           connect_timeout=CONNECT_TIMEOUT_SECONDS)
    except OSError as e:
        log.info("the server at %s did not answer (%s); answering from disk", url, e)
        return False, None
    try:
        answer = json.loads(raw)
        served = Path(answer["root"]).resolve()
    except (ValueError, KeyError, TypeError):
        log.info("the server at %s answered HTTP %s without JSON; answering from disk",
                 url, status)
        return False, None
    if served != root.resolve():
        log.info("the server at %s serves %s, not %s; answering from disk", url, served, root)
        return False, None
    if "error" in answer:
        error = answer["error"]
        raise EngineError(str(error.get("code", "internal_error")), str(error.get("message")))
    log.info("answered by the running server (pid %d)", pid)
    return True, answer.get("result")

