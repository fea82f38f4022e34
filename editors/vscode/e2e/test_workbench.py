"""The NeuralMind extension in a real VS Code (code-server), checked as a user sees it.

The checks run in this order on one window and share its state (the decision that the
Problems check restores is the one the Decisions view check counts as STALE). Adding a
check is one function: take `wb` (the project's window), drive it, assert on what the
page shows; the `evidence` fixture saves the screenshot.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from agent import call_tool
from codeserver import CodeServer, cmdline, descendants
from conftest import Console, package_version
from playwright.sync_api import BrowserContext
from project import ACTIVE_TITLE, INVALIDATED_TITLE, STALE_TITLE, Project
from workbench import TIMEOUT_S, Workbench, wait_until

STATUS = "neuralmind.neuralmind"
INDEXED = re.compile(r"NeuralMind: ([\d,]+) nodes indexed")
QUESTION = "how is the invoice total computed"


def _indexed_nodes(wb: Workbench, timeout: float = 120) -> int:
    m = wait_until("the status bar to show the index", lambda: INDEXED.search(
        wb.status_text(STATUS)), timeout)
    return int(m.group(1).replace(",", ""))


def _server_pids(code_server: CodeServer, folder: Path) -> list[int]:
    """The neuralmind-lsp processes code-server's extension hosts started for `folder`."""
    out = []
    for pid in descendants(code_server.proc.pid):
        args = cmdline(pid)
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if any(a.endswith("neuralmind-lsp") for a in args) and cwd == str(folder):
            out.append(pid)
    return out


def test_readme_install_open_and_index(code_server: CodeServer, wb: Workbench, project: Project):
    """README, top to bottom: the package and the .vsix installed, the folder opened; the
    status bar reaches "indexed" with the node count the CLI reports for the same index."""
    assert f"neuralmind.neuralmind@{package_version()}" in code_server.list_extensions()
    nodes = _indexed_nodes(wb)
    stats = subprocess.run([str(project.python.parent / "neuralmind"), "stats", "--json", str(project.root)],
                           capture_output=True, text=True, check=True)
    assert nodes == json.loads(stats.stdout)["nodes"] > 0
    assert [str(project.root)] == [os.readlink(f"/proc/{p}/cwd") for p in _server_pids(
        code_server, project.root)], "one server, started for the folder"


def test_ask_opens_the_answer_view(wb: Workbench):
    wb.open_file("shop/invoice.py")
    wb.run_command("NeuralMind: Ask")
    wb.answer_input(QUESTION, prompt="What do you need context for?")
    view = wb.webview("#context")
    assert view.locator("h2").inner_text() == QUESTION
    tokens = int(re.match(r"([\d,]+) tokens", view.locator("#tokens").inner_text()).group(1).replace(",", ""))
    context = view.locator("#context").inner_text()
    assert 0 < tokens < 1500
    assert "def compute_invoice_total(items, tax_rate):" in context
    hits = view.locator("details li a").all_text_contents()
    assert hits and hits[0].startswith("shop/invoice.py:"), hits
    wb.screenshot("answer-view")


def test_answer_view_copy_from_the_keyboard(wb: Workbench):
    view = wb.webview("#context")
    wait_until("the Copy button to have the focus",
               lambda: view.evaluate("document.activeElement && document.activeElement.id") == "copy")
    wb.page.keyboard.press("Enter")
    view.locator("#copied", has_text="Copied.").wait_for()
    assert wb.clipboard() == view.locator("#context").inner_text()


def test_answer_view_code_spans_open_file_at_line(wb: Workbench):
    view = wb.webview("#context")
    span = view.locator('#context a.loc[data-file="shop/invoice.py"][data-line="4"]')
    assert span.inner_text() == "shop/invoice.py:4-7"
    span.click()
    wb.wait_active_tab("invoice.py")
    wait_until("the cursor on line 4", lambda: wb.cursor_line() == 4)
    # The keyboard way: Tab from Copy past the hits' summary to the first location, Enter.
    view = wb.webview("#context")
    view.locator("#copy").focus()
    first = view.locator("#context a.loc").first
    target = (first.get_attribute("data-file"), int(first.get_attribute("data-line")))
    wb.page.keyboard.press("Tab")
    wb.page.keyboard.press("Tab")
    assert view.evaluate("document.activeElement.dataset.file") == target[0]
    wb.page.keyboard.press("Enter")
    wb.wait_active_tab(target[0].rsplit("/", 1)[-1])
    wait_until(f"the cursor on line {target[1]}", lambda: wb.cursor_line() == target[1])


def _theme_colours(wb: Workbench) -> dict[str, str]:
    view = wb.webview("#context")
    return view.evaluate("""() => {
      const probe = (prop, value) => { const d = document.createElement('div'); d.style[prop] = value;
        document.body.appendChild(d); const c = getComputedStyle(d)[prop]; d.remove(); return c; };
      return { text: getComputedStyle(document.body).color, themeText: probe('color', 'var(--vscode-foreground)'),
               button: getComputedStyle(document.getElementById('copy')).backgroundColor,
               themeButton: probe('backgroundColor', 'var(--vscode-button-background)'),
               kind: document.body.className };
    }""")


def test_answer_view_follows_the_theme(wb: Workbench):
    light = _theme_colours(wb)
    assert light["text"] == light["themeText"] and light["button"] == light["themeButton"], light
    wb.run_command("Preferences: Color Theme")
    wb.choose("Dark Modern")
    wait_until("the answer view to turn dark", lambda: "vscode-dark" in _theme_colours(wb)["kind"])
    dark = _theme_colours(wb)
    assert dark["text"] == dark["themeText"] and dark["button"] == dark["themeButton"], dark
    assert dark["text"] != light["text"]
    wb.screenshot("answer-view-dark")
    wb.run_command("Preferences: Color Theme")
    wb.choose("Light Modern")
    wait_until("the light theme back", lambda: "vscode-light" in _theme_colours(wb)["kind"])


DECISIONS = "NeuralMind Decisions"


def _groups(wb: Workbench) -> list[str]:
    """The group rows of the decisions view, e.g. "STALE (1)"."""
    rows = [r.strip() for r in wb.view_rows(DECISIONS)]
    return [r for r in rows if re.fullmatch(r"(ACTIVE|STALE|INVALIDATED) \(\d+\)", r)]


def test_decisions_view_groups_by_status(wb: Workbench, project: Project):
    wb.set_pane(project.name, False)  # the file tree yields its room to the view
    wb.run_command("NeuralMind: Show decisions")
    wait_until("the decisions view to open", lambda: wb.pane_expanded(DECISIONS))
    wait_until("the three status groups", lambda: len(_groups(wb)) == 3)
    rows = wb.view_rows(DECISIONS)
    assert _groups(wb) == ["ACTIVE (1)", "STALE (1)", "INVALIDATED (1)"], rows
    assert any(r.startswith(ACTIVE_TITLE) for r in rows), rows
    for group, title in (("STALE", STALE_TITLE), ("INVALIDATED", INVALIDATED_TITLE)):
        wb.view_row(DECISIONS, group).click()
        wait_until(f"{title} under {group}", lambda t=title, g=group: any(
            r.startswith(f"{t}, {g}") for r in wb.view_rows(DECISIONS)))
    wb.screenshot("decisions-view")


def test_stale_decision_in_problems_and_restore(wb: Workbench, project: Project):
    wb.open_file("shop/invoice.py")
    stale = wait_until("the stale decision in Problems", lambda: [
        p for p in wb.problems() if STALE_TITLE in p and p.endswith("generated by neuralmind")])
    assert stale[0].startswith("Warning: Decision stale")
    wb.go_to_line(1)
    menu = wb.code_actions()
    restore = menu.locator(".monaco-list-row", has_text=f"Restore decision: {STALE_TITLE}")
    restore.wait_for()
    wb.screenshot("quick-fix")
    restore.click()
    wait_until("Problems without the decision", lambda: not any(STALE_TITLE in p for p in wb.problems()))
    wait_until("the view to count it ACTIVE", lambda: "ACTIVE (2)" in _groups(wb))
    assert _groups(wb) == ["ACTIVE (2)", "STALE (0)", "INVALIDATED (1)"]
    assert _recorded(project)[STALE_TITLE]["status"] == "ACTIVE"


def _recorded(project: Project) -> dict[str, dict]:
    """The decisions as the user's CLI reads them from disk: title -> record."""
    out = subprocess.run([str(project.python.parent / "neuralmind"), "decisions", "audit",
                          "--format", "json", str(project.root)], capture_output=True, text=True,
                         check=True)
    return {d["title"]: d for d in json.loads(out.stdout)}


def _next_likely(wb: Workbench) -> dict[str, int]:
    """Runs the command from the active file; {file name: percent}, in the order shown
    ({} when it says nothing is learned yet)."""
    wb.run_command("NeuralMind: Next likely files")
    nothing = wb.page.locator(".notifications-toasts .notification-list-item-message",
                              has_text="no next-likely files yet")
    rows = wait_until("the next-likely pick or its 'nothing yet'", lambda: wb.pick_rows() or (
        ["(nothing yet)"] if nothing.count() and nothing.first.is_visible() else None))
    if rows == ["(nothing yet)"]:
        wb.clear_notifications()
        return {}
    out = {}
    for r in rows:
        m = re.match(r"(\S+),.*?(\d+)% likely next", r)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def test_next_likely_after_editing_two_files(wb: Workbench):
    # stock.py and shipping.py are touched by no other check: before this one, their only
    # link is the first commit, which added every file together.
    wb.open_file("shop/stock.py")
    before = _next_likely(wb).get("shipping.py", 0)
    wb.escape_quick_input()
    wb.type_at_end("\n# edited by the test\n")
    wb.open_file("shop/shipping.py")
    wb.type_at_end("\n# edited by the test too\n")
    wb.open_file("shop/stock.py")
    seen: list[dict[str, int]] = []

    def learned() -> dict[str, int] | None:
        rows = _next_likely(wb)
        seen.append(rows)
        if rows and next(iter(rows)) == "shipping.py" and rows["shipping.py"] > before:
            return rows
        wb.escape_quick_input()
        return None
    try:
        rows = wait_until("shipping.py to lead the next-likely files", learned, timeout=30, every=0.5)
    except AssertionError as e:
        raise AssertionError(f"{e}; before {before}%, last rows {seen[-3:]}") from None
    wb.screenshot("next-likely")
    wb.choose("shipping.py")
    wb.wait_active_tab("shipping.py")
    assert rows["shipping.py"] > before


def test_missed_file_warning_opens_its_partner(wb: Workbench):
    """tax.py and rates.py changed together in every commit: editing tax.py alone warns that
    rates.py is probably missed, and the quick fix opens it."""
    wb.open_file("shop/tax.py")
    wb.type_at_end("\n# a new region\n")
    missed = wait_until("the missed partner in Problems", lambda: [
        p for p in wb.problems() if "usually changes with" in p and p.endswith("generated by neuralmind")])
    assert missed[0].startswith("Info: ") and "`shop/rates.py` (3 of 3 commits)" in missed[0], missed
    wb.go_to_line(1)
    fix = wb.code_actions().locator(".monaco-list-row", has_text="Open shop/rates.py")
    fix.wait_for()
    wb.screenshot("missed-file")
    fix.click()
    wb.wait_active_tab("rates.py")


def _at_risk(state: dict) -> list[dict]:
    return [d for d in state.get("diagnostics") or [] if d.get("code") == "decision-at-risk"]


def _editor_state(project: Project, what: str, want: Callable[[dict], bool]) -> dict:
    """Polls what an agent reads of the editor (MCP `neuralmind_editor_state` through the
    user's `neuralmind mcp`, bridged to this window's server) until `want` holds."""
    seen: list[object] = []

    def probe() -> dict | None:
        state = call_tool(project.python, project.root, "neuralmind_editor_state")
        seen.append(state)
        return state if want(state) else None
    try:
        return wait_until(what, probe, every=0.5)
    except AssertionError as e:
        raise AssertionError(f"{e}; last state {seen[-1:]}") from None


SIGNATURE = "def refresh_session_token(session):"


def test_editor_state_reaches_the_server_with_the_decision_at_risk(wb: Workbench, project: Project):
    """The editor's state (active file, selection, open files, the active file's diagnostics)
    reaches the server, where an agent reads it; an edit of the file an ACTIVE decision governs
    shows among them as the review's decision-at-risk hint. (The browser workbench auto-saves
    after a delay by default: the server's own review reads unsaved files from disk, so in a
    desktop VS Code with auto-save off the hint waits for the save; "Review changes" sends
    the buffers and needs no save.)"""
    wb.open_file("shop/session.py")
    wb.type_at_end("\nTOKEN_BYTES = 16\n")  # code, not a comment: comments put nothing at risk
    wb.go_to_line(6)
    wb.page.keyboard.press("Shift+End")
    state = _editor_state(project, "the session.py selection and its decision at risk", lambda s: (
        s["active_file"] == "shop/session.py" and (s["selection"] or {}).get("text") == SIGNATURE
        and bool(_at_risk(s))))
    assert state["selection"]["start_line"] == state["selection"]["end_line"] == 6
    assert {"shop/session.py", "shop/tax.py", "shop/rates.py"} <= set(state["open_files"])
    risk = _at_risk(state)[0]
    assert ACTIVE_TITLE in risk["message"] and risk["source"] == "neuralmind", risk
    # On the first changed line (10: the blank line typed before TOKEN_BYTES), a line the
    # server's copy of the text as opened does not have.
    assert risk["start_line"] == 10, risk


def test_at_risk_decision_reaffirmed_from_its_quick_fix(wb: Workbench, project: Project):
    risk = _at_risk(_editor_state(project, "session.py's decision at risk", lambda s: bool(
        s["active_file"] == "shop/session.py" and _at_risk(s))))[0]
    wb.go_to_line(risk["start_line"])
    fix = wb.code_actions().locator(".monaco-list-row", has_text=f"Re-affirm decision: {ACTIVE_TITLE}")
    fix.wait_for()
    wb.screenshot("at-risk-quick-fix")
    fix.click()
    _editor_state(project, "the decision no longer at risk", lambda s: (
        s["active_file"] == "shop/session.py" and not _at_risk(s)))
    record = _recorded(project)[ACTIVE_TITLE]
    assert record["status"] == "ACTIVE"
    assert any(e.startswith("Re-affirmed") for e in record["evidence"]), record["evidence"]


SUPERSEDING = "Session tokens are 256-bit random"


def test_review_changes_supersedes_a_decision_at_risk(wb: Workbench, project: Project):
    """"Review changes" lists the probably-missed partner and the decision at risk; picking
    the decision offers re-affirm / supersede / invalidate, and supersede records a new one."""
    wb.open_file("shop/session.py")
    wb.type_at_end("\nTOKEN_TTL_SECONDS = 3600\n")  # a new edit: at risk again
    wb.run_command("NeuralMind: Review changes")
    # Both rows, read together: the list renders into rows the palette used a moment ago.
    wait_until("the review's two picks", lambda: (r := wb.pick_rows()) and any(
        ACTIVE_TITLE in x and "decision at risk" in x for x in r) and any(
        "shop/rates.py" in x and "probably missed" in x for x in r))
    assert "1 probably missed, 1 decision at risk" in wb.quick_input().inner_text()
    wb.screenshot("review-changes")
    wb.pick_containing(ACTIVE_TITLE)
    wb.wait_active_tab("session.py")
    wb.choose("Supersede")
    wb.answer_input(SUPERSEDING, prompt="Title of the new decision")
    wb.answer_input("Tokens outlive the sessions now.", prompt="Rationale")
    wait_until("the view to count the old one INVALIDATED", lambda: "INVALIDATED (2)" in _groups(wb))
    assert _groups(wb) == ["ACTIVE (2)", "STALE (0)", "INVALIDATED (2)"]
    recorded = _recorded(project)
    assert recorded[ACTIVE_TITLE]["status"] == "INVALIDATED"
    assert recorded[SUPERSEDING]["status"] == "ACTIVE"
    assert recorded[SUPERSEDING]["files_affected"] == ["shop/session.py"]


OBSERVATORY_LINK = re.compile(r"http://127\.0\.0\.1:\d+/observatory/login\?ticket=[\w-]+")


def test_open_observatory_gives_a_one_time_link(wb: Workbench, context: BrowserContext):
    """In a browser-hosted window the server's one-time login link is shown to copy (code-server
    would proxy a loopback link to a Host the endpoint refuses); opened on this machine it logs
    in once and shows the observatory."""
    wb.clear_notifications()
    wb.run_command("NeuralMind: Open observatory")
    toast = wb.toast("the observatory is served on the server machine's loopback")
    link = OBSERVATORY_LINK.search(wb.toast_message(toast))
    assert link, wb.toast_message(toast)
    wb.screenshot("observatory-link")
    toast.locator(".monaco-button", has_text="Copy link").click()
    wait_until("the link on the clipboard", lambda: wb.clipboard() == link.group(0))
    page = context.new_page()
    try:
        first = page.goto(link.group(0))
        assert first is not None and first.status == 200 and "/observatory/" in page.url
        page.wait_for_function("() => document.body.dataset.brain === 'painted'",
                               timeout=TIMEOUT_S * 1000)
        page.screenshot(path=str(wb.shots / "observatory.png"))
        again = page.goto(link.group(0))
        assert again is not None and again.status == 401, "the link works once"
    finally:
        page.close()


PROPOSED = "Invoices go out as plain text"


def test_memory_inbox_accepts_an_agents_proposal_and_recall_shows_it(wb: Workbench,
                                                                     project: Project):
    """An agent proposes a memory (MCP `neuralmind_remember` through the user's `neuralmind
    mcp`); "Memory inbox" lists it, Accept keeps it, "Recall memories" finds and opens it."""
    atom = call_tool(project.python, project.root, "neuralmind_remember", {
        "text": "InvoiceRenderer e-mails invoices as plain text, never HTML.", "type": "fact",
        "label": PROPOSED, "about": ["shop/invoice.py"]})
    assert atom["state"] == "proposed", atom
    wb.run_command("NeuralMind: Memory inbox")
    wb.pick_containing(PROPOSED)
    wb.choose("Accept")
    wb.clear_notifications()
    wb.run_command("NeuralMind: Memory inbox")
    wb.toast("the memory inbox is empty")
    wb.run_command("NeuralMind: Recall memories")
    wb.answer_input("how are invoices sent to customers", prompt="What should be remembered about?")
    rows = wait_until("the recalled memory", lambda: [r for r in wb.pick_rows() if PROPOSED in r])
    assert "fact" in rows[0] and "proposed" not in rows[0], rows
    wb.screenshot("recall")
    wb.pick_containing(PROPOSED)
    page = wait_until("the memory's page", lambda: (
        t := wb.editor().locator(".view-lines").inner_text().replace("\xa0", " ")) and
        atom["id"] in t and t)
    assert f"# {PROPOSED}" in page


def test_freshness_indicator_follows_a_commit_made_outside(wb: Workbench, project: Project):
    """The status bar says the index is fresh; a commit made in a terminal moves HEAD, the
    server indexes what changed, and the item's details name the new HEAD."""
    wait_until("the status bar to say fresh", lambda: wb.status_text(STATUS).endswith("· fresh"))
    (project.root / "shop/coupons.py").write_text(
        '"""Coupons and their discounts."""\n\n\ndef discount(total, percent):\n'
        '    return total * (100 - percent) / 100\n')
    git = ["git", "-c", "user.name=E2E", "-c", "user.email=e2e@example.com"]
    subprocess.run([*git, "add", "shop/coupons.py"], cwd=project.root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "coupons"], cwd=project.root, check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], cwd=project.root, check=True,
                          capture_output=True, text=True).stdout.strip()
    dialog = wb.page.locator(".monaco-dialog-box")

    def details() -> str | None:
        if not wb.status_text(STATUS).endswith("· fresh"):
            return None
        wb.status_item(STATUS).click()
        dialog.wait_for(state="visible")
        text = dialog.inner_text()
        if f"Fresh against: {head[:10]}" in text:
            wb.screenshot("freshness-details")
        wb.page.keyboard.press("Escape")
        dialog.wait_for(state="hidden")
        return text if f"Fresh against: {head[:10]}" in text else None
    text = wait_until("the details to name the new HEAD", details, timeout=60, every=1)
    assert "Not indexed yet: 0" in text


def test_copy_mcp_configuration(wb: Workbench, project: Project):
    wb.run_command("NeuralMind: Copy MCP configuration")
    wb.choose("claude")
    wb.toast("MCP configuration for claude copied")
    config = json.loads(wb.clipboard())
    server = config["mcpServers"]["neuralmind"]
    assert server["command"] == str(project.python.parent / "neuralmind")
    assert server["args"] == ["mcp", str(project.root)]


def test_killed_server_restarts_with_backoff(wb: Workbench, code_server: CodeServer, project: Project):
    wb.clear_notifications()
    first = _server_pids(code_server, project.root)
    assert len(first) == 1, first
    os.kill(first[0], signal.SIGKILL)
    toast = wb.toast("stopped unexpectedly")
    assert f'the server for "{project.name}" stopped unexpectedly; restarting in 1 s.' in wb.toast_message(toast)
    _indexed_nodes(wb)
    second = wait_until("a new server", lambda: [p for p in _server_pids(code_server, project.root)
                                                 if p not in first])
    os.kill(second[0], signal.SIGKILL)
    wait_until("the second restart to wait longer", lambda: "restarting in 2 s" in wb.status_text(STATUS),
               every=0.05)
    _indexed_nodes(wb)
    assert len(_server_pids(code_server, project.root)) == 1


INSTALL = 'python3 -m pip install "<path to your NeuralMind checkout>"'


def test_not_found_names_the_install_command(bare_wb: Workbench):
    toast = bare_wb.toast("was not found")
    message = bare_wb.toast_message(toast)
    assert f"Install it with: {INSTALL}" in message
    assert "~/.local/bin" in message
    assert "In a remote window" in message and "user settings are ignored there" in message
    assert bare_wb.toast_buttons(toast)[:2] == ["Select executable…", "Copy install command"]
    bare_wb.screenshot("not-found")
    assert "not installed" in bare_wb.status_text(STATUS)


def test_server_found_in_local_bin(bare_wb: Workbench, code_server: CodeServer, user_python: Path,
                                   bare_folder: Path):
    """pipx's ~/.local/bin is looked at even though the login shell's PATH lacks it."""
    local_bin = code_server.home / ".local" / "bin"
    local_bin.mkdir(parents=True, exist_ok=True)
    link = local_bin / "neuralmind-lsp"
    link.symlink_to(user_python.parent / "neuralmind-lsp")
    try:
        bare_wb.clear_notifications()
        bare_wb.run_command("NeuralMind: Restart server")
        _indexed_nodes(bare_wb)
        assert len(_server_pids(code_server, bare_folder)) == 1
    finally:
        link.unlink()


def test_select_executable_sets_the_remote_setting(bare_wb: Workbench, code_server: CodeServer,
                                                   user_python: Path, bare_folder: Path):
    bare_wb.run_command("NeuralMind: Restart server")
    toast = bare_wb.toast("was not found")
    toast.locator(".monaco-button", has_text="Select executable…").click()
    exe = str(user_python.parent / "neuralmind-lsp")
    dialog = bare_wb.quick_input()
    dialog.wait_for(state="visible")
    wait_until("the file dialog", lambda: "Select the neuralmind-lsp executable" in dialog.inner_text())
    box = dialog.locator("input")
    # The dialog fills in its start folder once it has listed it: type only after that.
    wait_until("the dialog to start in the folder", lambda: box.input_value().rstrip("/") == str(bare_folder))
    box.fill(exe)
    wait_until("the path typed in", lambda: box.input_value() == exe)
    dialog.locator(".monaco-button", has_text="Use this neuralmind-lsp").click()
    _indexed_nodes(bare_wb)
    # Machine-overridable: in this remote window VS Code wrote it to the remote's settings.
    machine = code_server.user_data / "Machine" / "settings.json"
    assert json.loads(machine.read_text()).get("neuralmind.serverPath") == exe
    user = json.loads((code_server.user_data / "User" / "settings.json").read_text())
    assert "neuralmind.serverPath" not in user
    assert len(_server_pids(code_server, bare_folder)) == 1


def test_webviews_ran_within_their_security_policy(console: Console):
    violations = [m for m in console.messages if "Content Security Policy" in m or "Refused to" in m]
    assert not violations, violations
