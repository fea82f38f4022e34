"""The discovery files: where a live loopback endpoint of a workspace is.

`.neuralmind/mcp.json` names the editor's server (MCP and the hook route);
`.neuralmind/hooks.json` names an agent's own `neuralmind mcp` process, which serves
the hook route (and MCP) on loopback too, so hooks are answered warm when no editor
runs, while other agents never bridge to a process that ends with its session. Each is
written (owner-only, atomically) by the process serving, removed when it stops. Readers never trust it blindly: an endpoint is live only if its pid runs
AND its health route accepts the token and names the same workspace. Light on
purpose (stdlib only): `neuralmind mcp` reads it before deciding whether it needs
the MCP SDK at all.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from neuralmind.hookwire import (  # noqa: F401 - re-exported
    CLI_PATH,
    DISCOVERY_NAME,
    HOOKS_DISCOVERY_NAME,
    pid_alive,
)
from neuralmind.statedir import atomic_write_json, state_dir

log = logging.getLogger("neuralmind.mcp")

HEALTH_PATH = "/neuralmind/health"
MCP_PATH = "/mcp"
OBSERVATORY_PATH = "/observatory"              # the page, on the same loopback endpoint
OBSERVATORY_LOGIN_PATH = "/neuralmind/observatory"   # POST with the token: a login URL
PROBE_TIMEOUT_SECONDS = 1.0


@dataclass(frozen=True)
class Discovery:
    url: str
    pid: int
    token: str
    protocol_version: str
    root: str
    read_only: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "pid": self.pid, "protocol_version": self.protocol_version,
                "token": self.token, "root": self.root, "read_only": self.read_only}


def discovery_path(root: Path, name: str = DISCOVERY_NAME) -> Path:
    return state_dir(Path(root), create=False) / name


def write_discovery(root: Path, entry: Discovery, name: str = DISCOVERY_NAME) -> Path:
    """Atomically, mode 0600 (mkstemp's), so other local users cannot read the token."""
    path = state_dir(Path(root)) / name
    atomic_write_json(path, entry.to_json())
    os.chmod(path, 0o600)
    return path


def read_discovery(root: Path, name: str = DISCOVERY_NAME) -> Discovery | None:
    """The recorded endpoint, or None when there is none or the file is unreadable."""
    path = discovery_path(root, name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Discovery(url=str(data["url"]), pid=int(data["pid"]), token=str(data["token"]),
                         protocol_version=str(data.get("protocol_version", "")),
                         root=str(data.get("root", "")), read_only=bool(data.get("read_only")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as e:
        log.info("ignoring unreadable %s: %s", path, e)
        return None


def remove_discovery(root: Path, token: str | None = None, name: str = DISCOVERY_NAME) -> bool:
    """Remove the file; with `token`, only if it is still ours (another server may own it now)."""
    path = discovery_path(root, name)
    if token is not None:
        current = read_discovery(root, name)
        if current is None or current.token != token:
            return False
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
        return True
    return False


def probe(entry: Discovery, root: Path, timeout: float = PROBE_TIMEOUT_SECONDS) -> str | None:
    """None when the endpoint is live for `root` with this token; else why it is not."""
    if not pid_alive(entry.pid):
        return f"pid {entry.pid} is not running"
    parts = urlsplit(entry.url)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost"):
        return f"{entry.url} is not a loopback http endpoint"
    # ~15 ms of imports (email, ssl) the hook client's fast path reads this module without
    import http.client

    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        conn.request("GET", HEALTH_PATH, headers={"Authorization": f"Bearer {entry.token}"})
        resp = conn.getresponse()
        body = resp.read()
    except OSError as e:
        return f"{entry.url} does not answer ({e})"
    finally:
        conn.close()
    if resp.status != 200:
        return f"{entry.url} refused the token (HTTP {resp.status})"
    try:
        served = json.loads(body)["root"]
    except (ValueError, KeyError, TypeError):
        return f"{entry.url} is not a NeuralMind endpoint"
    if Path(served).resolve() != Path(root).resolve():
        return f"{entry.url} serves another workspace ({served})"
    return None


def observatory_login(entry: Discovery, view: str | None = None,
                      timeout: float = PROBE_TIMEOUT_SECONDS) -> str:
    """A one-time login URL of the observatory the endpoint serves (OSError when refused)."""
    # deferred as in `probe`: the hook client's fast path reads this module without it
    import http.client

    parts = urlsplit(entry.url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80,
                                      timeout=timeout)
    path = OBSERVATORY_LOGIN_PATH + (f"?view={view}" if view else "")
    try:
        conn.request("POST", path, headers={"Authorization": f"Bearer {entry.token}"})
        resp = conn.getresponse()
        body = resp.read()
    finally:
        conn.close()
    if resp.status != 200:
        raise OSError(f"{entry.url} gave no login URL (HTTP {resp.status}: {body[:200]!r})")
    try:
        return str(json.loads(body)["url"])
    except (ValueError, KeyError, TypeError):
        raise OSError(f"{entry.url} answered something else than a login URL") from None


def live_endpoint(root: Path) -> tuple[Discovery | None, str | None]:
    """(the live endpoint, None), or (None, why the recorded one was ignored, or None).

    A stale record (dead pid, refused token, another workspace) is removed; one whose
    process runs but did not answer in time is left for its owner.
    """
    entry = read_discovery(root)
    if entry is None:
        return None, None
    problem = probe(entry, root)
    if problem is None:
        return entry, None
    if "does not answer" not in problem or not pid_alive(entry.pid):
        remove_discovery(root, entry.token)
    return None, problem
