"""Session fixtures of the real-workbench suite: README's VS Code steps, done once.

1. "pip install ." of this checkout into a fresh Python environment (the user's);
2. the .vsix scripts/ci.sh packaged, installed with `--install-extension`;
3. one code-server and one browser for every check;
4. the workspace opened in a window, the project's environment selected in its
   .vscode/settings.json.
After each check, every window it used is saved as a screenshot in out/screenshots.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from codeserver import CodeServer
from playwright.sync_api import Browser, BrowserContext, Playwright, sync_playwright
from project import Project, make_bare_folder, make_project
from workbench import Workbench

EXTENSION_DIR = Path(__file__).resolve().parent.parent
REPO = EXTENSION_DIR.parent.parent
CHROMIUM = os.environ.get("NEURALMIND_E2E_CHROMIUM", "/usr/bin/chromium")

# The project's workspace settings. The quiet window that closes an editing batch must
# outlast the test's own steps between two edits (quick open, a click: over a second
# under load); 0.5 s split the pair into two batches on a busy CI machine, so nothing
# tied them together. 4 s still closes the batch well within the check's wait.
WORKSPACE_SETTINGS = {"neuralmind.debounceSeconds": 4.0}


@dataclass
class Dirs:
    root: Path       # kept between runs (the user's Python environment)
    run: Path        # this run's state: code-server, home, workspaces
    shots: Path      # evidence: one screenshot per check and window
    logs: Path


@pytest.fixture(scope="session")
def dirs() -> Dirs:
    root = Path(os.environ.get("NEURALMIND_E2E_DIR", EXTENSION_DIR / ".e2e")).resolve()
    run, out = root / "run", root / "out"
    for d in (run, out):
        shutil.rmtree(d, ignore_errors=True)
    d = Dirs(root=root, run=run, shots=out / "screenshots", logs=out / "logs")
    for p in (d.run, d.shots, d.logs):
        p.mkdir(parents=True)
    return d


@pytest.fixture(scope="session")
def user_python(dirs: Dirs) -> Path:
    """README: `pip install .` from this checkout, into the project's environment."""
    venv = dirs.root / "user-venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(REPO)], check=True)
    return python


@pytest.fixture(scope="session")
def vsix() -> Path:
    path = Path(os.environ.get("NEURALMIND_VSIX", EXTENSION_DIR / "neuralmind.vsix"))
    if not path.is_file():
        pytest.fail(f"{path} does not exist: scripts/ci.sh packages it")
    return path


@pytest.fixture(scope="session")
def code_server(dirs: Dirs, vsix: Path) -> Iterator[CodeServer]:
    server = CodeServer(root=dirs.run / "code-server")
    server.prepare()
    server.install_extension(vsix)  # README: code --install-extension neuralmind.vsix
    server.start()
    try:
        yield server
    finally:
        server.stop()
        _collect_logs(server, dirs.logs)


def _collect_logs(server: CodeServer, logs: Path) -> None:
    """code-server's log and every extension-host output channel (the server's stderr)."""
    if server.log_file.exists():
        shutil.copy(server.log_file, logs / "code-server.log")
    for i, f in enumerate(sorted((server.user_data / "logs").rglob("*NeuralMind*.log"))):
        shutil.copy(f, logs / f"{i}-{f.name}")


@pytest.fixture(scope="session")
def project(dirs: Dirs, user_python: Path) -> Project:
    return make_project(dirs.run / "shop", user_python, WORKSPACE_SETTINGS)


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    b = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                   args=["--no-sandbox", "--disable-gpu"])
    yield b
    b.close()


@dataclass
class Console:
    """What the pages printed: the webviews' security-policy violations land here."""
    messages: list[str]


@pytest.fixture(scope="session")
def console() -> Console:
    return Console(messages=[])


@pytest.fixture(scope="session")
def context(browser: Browser, code_server: CodeServer) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=code_server.url)
    yield ctx
    ctx.close()


def _window(context: BrowserContext, console: Console, dirs: Dirs, url: str, name: str) -> Workbench:
    page = context.new_page()
    page.on("console", lambda m: console.messages.append(f"{m.type}: {m.text}"))
    wb = Workbench(page, dirs.shots)
    wb.open(url, name)
    return wb


@pytest.fixture(scope="session")
def wb(context: BrowserContext, console: Console, dirs: Dirs, code_server: CodeServer,
       project: Project) -> Workbench:
    """README: open a folder. The window on the project."""
    return _window(context, console, dirs, f"{code_server.url}/?folder={project.root}", project.name)


@pytest.fixture(scope="session")
def bare_folder(dirs: Dirs) -> Path:
    return make_bare_folder(dirs.run / "bare")


@pytest.fixture(scope="session")
def bare_wb(context: BrowserContext, console: Console, dirs: Dirs, code_server: CodeServer,
            bare_folder: Path) -> Workbench:
    """A second window (its own extension host) on a folder with no environment selected."""
    return _window(context, console, dirs, f"{code_server.url}/?folder={bare_folder}",
                   bare_folder.name)


_counter = iter(range(1, 1000))


def _windows(item: pytest.Item) -> list[Workbench]:
    return [v for v in getattr(item, "funcargs", {}).values() if isinstance(v, Workbench)]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """A failed check's report also lists the dialogs and notifications on screen: they
    often say why (e.g. "command 'neuralmind.x' not found")."""
    report = yield
    if report.when == "call" and report.failed:
        for w in _windows(item):
            shown = "\n".join(w.messages_on_screen()) or "(none)"
            report.sections.append(("workbench: on screen", shown))
    return report


@pytest.fixture(autouse=True)
def evidence(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each check, a screenshot of every window it drove, pass or fail."""
    yield
    windows = _windows(request.node)
    n = next(_counter)
    for i, w in enumerate(windows):
        suffix = f"-{i + 1}" if len(windows) > 1 else ""
        w.screenshot(f"{n:02d}-{request.node.name.removeprefix('test_')}{suffix}")


def package_version() -> str:
    return json.loads((EXTENSION_DIR / "package.json").read_text())["version"]
