"""Driving one VS Code window the way a person does: the command palette, quick
inputs, notifications, the status bar, panels and webviews. Every wait is on a
condition in the page, with a deadline; nothing sleeps a fixed time."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from playwright.sync_api import Frame, Locator, Page

T = TypeVar("T")

# Generous: the machine is shared and two cores; a condition met early returns at once.
TIMEOUT_S = 60.0


def wait_until(what: str, probe: Callable[[], T | None], timeout: float = TIMEOUT_S,
               every: float = 0.1) -> T:
    """Polls `probe` until it returns something truthy; fails naming `what` and the last value."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            last = probe()
        except Exception as e:  # the page changed under the probe: try again
            last = e
        else:
            if last:
                return last  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last: {last!r}")
        time.sleep(every)


class Workbench:
    """One browser page showing one VS Code window."""

    def __init__(self, page: Page, shots: Path) -> None:
        self.page = page
        self.shots = shots

    # --- the window ---------------------------------------------------------------
    def open(self, url: str, folder_name: str) -> None:
        self.page.goto(url)
        self.page.wait_for_selector(".monaco-workbench", timeout=TIMEOUT_S * 1000)
        self.page.locator(".explorer-folders-view .monaco-list-row").first.wait_for(
            timeout=TIMEOUT_S * 1000)
        wait_until(f"the window title to name {folder_name}",
                   lambda: folder_name in self.page.title())

    def screenshot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path))
        return path

    # --- commands and quick inputs -----------------------------------------------
    def quick_input(self) -> Locator:
        return self.page.locator(".quick-input-widget")

    def run_command(self, title: str) -> None:
        """F1, the command's title, Enter: as a user runs a command from the palette."""
        self.escape_quick_input()
        self.page.keyboard.press("F1")
        box = self.quick_input().locator("input")
        box.wait_for(state="visible")
        box.fill(">" + title)
        self._pick_exact(title)

    def escape_quick_input(self) -> None:
        """Closes the quick input; presses Escape again while it stays open (under load a
        press can land before the widget has focus, and a pick still loading reopens)."""
        def closed() -> bool:
            if not self.quick_input().is_visible():
                return True
            self.page.keyboard.press("Escape")
            return False
        wait_until("the quick input to close", closed, every=0.5)

    def answer_input(self, text: str, *, prompt: str | None = None) -> None:
        """Types into the input box a command opened (showInputBox), then Enter."""
        widget = self.quick_input()
        widget.wait_for(state="visible")
        if prompt:
            wait_until(f"the input box to ask {prompt!r}", lambda: prompt in widget.inner_text())
        widget.locator("input").fill(text)
        self.page.keyboard.press("Enter")

    def pick_rows(self) -> list[str]:
        """The labels of the rows a quick pick shows now ([] when none is open)."""
        widget = self.quick_input()
        if not widget.is_visible():
            return []
        rows = widget.locator(".quick-input-list .monaco-list-row")
        return [rows.nth(i).get_attribute("aria-label") or "" for i in range(rows.count())]

    def pick_containing(self, text: str) -> None:
        """Clicks the first row of the open quick pick whose label contains `text`."""
        rows = self.quick_input().locator(".quick-input-list .monaco-list-row")

        def row() -> Locator | None:
            for i in range(rows.count()):
                if text in (rows.nth(i).get_attribute("aria-label") or ""):
                    return rows.nth(i)
            return None
        wait_until(f"a row naming {text!r}", row).click()

    def choose(self, label: str) -> None:
        """Filters a quick pick by `label` and picks the row labelled exactly so."""
        self.quick_input().locator("input").fill(label)
        self._pick_exact(label)

    def _pick_exact(self, label: str) -> None:
        """Clicks the row whose label is `label` (its aria-label may add ", <details>")."""
        rows = self.quick_input().locator(".quick-input-list .monaco-list-row")

        def row() -> Locator | None:
            for i in range(rows.count()):
                aria = rows.nth(i).get_attribute("aria-label") or ""
                if aria == label or aria.startswith(label + ","):
                    return rows.nth(i)
            return None
        wait_until(f"a row labelled {label!r}", row).click()

    # --- editors ------------------------------------------------------------------
    def open_file(self, rel: str) -> None:
        """Ctrl+P, the path, Enter; waits for the tab."""
        self.escape_quick_input()
        self.page.keyboard.press("Control+P")
        widget = self.quick_input()
        widget.locator("input").wait_for(state="visible")
        widget.locator("input").fill(rel)
        first = widget.locator(".quick-input-list .monaco-list-row").first
        name = rel.rsplit("/", 1)[-1]
        wait_until(f"quick open to offer {rel}",
                   lambda: (first.get_attribute("aria-label") or "").startswith(name))
        self.page.keyboard.press("Enter")
        self.wait_active_tab(name)

    def active_tab(self) -> str:
        tab = self.page.locator(".editor-group-container.active .tab.active")
        return tab.get_attribute("aria-label") or "" if tab.count() else ""

    def wait_active_tab(self, name: str) -> None:
        wait_until(f"the active tab to be {name}", lambda: self.active_tab().startswith(name))

    def editor(self) -> Locator:
        return self.page.locator(".editor-group-container.active .monaco-editor").first

    def cursor_line(self) -> int:
        """The line of the cursor, from the status bar's "Ln N, Col M"."""
        text = self.page.locator("#status\\.editor\\.selection").inner_text()
        m = re.search(r"Ln (\d+)", text)
        return int(m.group(1)) if m else 0

    def type_at_end(self, text: str) -> None:
        """Types at the end of the active editor; waits for the last typed line to show, so a
        keystroke that landed elsewhere (a widget still closing) fails here, not later."""
        self.editor().locator(".view-lines").click()
        self.page.keyboard.press("Control+End")
        self.page.keyboard.type(text)
        last = [line for line in text.splitlines() if line.strip()][-1].strip()
        lines = self.editor().locator(".view-lines")
        try:
            wait_until(f"the editor to show {last!r}", lambda: last in lines.inner_text().replace("\xa0", " "), timeout=15)
        except AssertionError:
            self.screenshot("typing-lost")
            raise

    def go_to_line(self, line: int) -> None:
        self.editor().locator(".view-lines").click()
        self.page.keyboard.press("Control+G")
        self.answer_input(f":{line}")  # the box opens with ":"; fill replaces it
        wait_until(f"the cursor on line {line}", lambda: self.cursor_line() == line)

    # --- notifications ------------------------------------------------------------
    def toast(self, text: str | re.Pattern[str], timeout: float = TIMEOUT_S) -> Locator:
        """The notification toast whose message contains `text`, once visible."""
        toast = self.page.locator(".notifications-toasts .notification-toast").filter(
            has=self.page.locator(".notification-list-item-message", has_text=text)).first
        toast.wait_for(state="visible", timeout=timeout * 1000)
        return toast

    def toast_message(self, toast: Locator) -> str:
        return toast.locator(".notification-list-item-message").inner_text()

    def toast_buttons(self, toast: Locator) -> list[str]:
        return toast.locator(".monaco-button").all_inner_texts()

    def messages_on_screen(self) -> list[str]:
        """The text of every dialog and notification toast shown now."""
        boxes = self.page.locator(".monaco-dialog-box, .notifications-toasts .notification-toast")
        return [" ".join(t.split()) for t in boxes.all_inner_texts()]

    def clear_notifications(self) -> None:
        self.run_command("Notifications: Clear All Notifications")

    # --- status bar, panels, views --------------------------------------------------
    def status_item(self, item_id: str) -> Locator:
        return self.page.locator(f"#{item_id.replace('.', chr(92) + '.')}")

    def status_text(self, item_id: str) -> str:
        item = self.status_item(item_id)
        return item.inner_text().strip() if item.count() else ""

    def problems(self) -> list[str]:
        """The aria-labels of the Problems panel's marker rows (opens the panel)."""
        panel = self.page.locator(".markers-panel")
        if not panel.is_visible():
            self.escape_quick_input()
            self.page.keyboard.press("Control+Shift+M")
            panel.wait_for(state="visible")
        rows = panel.locator(".monaco-list-row")
        labels = [rows.nth(i).get_attribute("aria-label") or "" for i in range(rows.count())]
        return [x for x in labels if not re.match(r"\d+ problems? in file", x)]

    def pane_header(self, view_title: str) -> Locator:
        title = self.page.locator("h3.title", has_text=re.compile(rf"^{re.escape(view_title)}$"))
        return self.page.locator(".pane-header", has=title).first

    def set_pane(self, view_title: str, expanded: bool) -> None:
        """Expands or collapses a side-bar view (lists only render the rows in sight)."""
        header = self.pane_header(view_title)
        want = "true" if expanded else "false"
        if header.get_attribute("aria-expanded") != want:
            header.click()
            wait_until(f"{view_title} expanded={want}", lambda: header.get_attribute("aria-expanded") == want)

    def pane_expanded(self, view_title: str) -> bool:
        return self.pane_header(view_title).get_attribute("aria-expanded") == "true"

    def view_rows(self, view_title: str) -> list[str]:
        """The rows of a view in the side bar that are rendered (in sight)."""
        pane = self.page.locator(".pane", has=self.pane_header(view_title))
        rows = pane.locator(".pane-body .monaco-list-row")
        return [rows.nth(i).get_attribute("aria-label") or "" for i in range(rows.count())]

    def view_row(self, view_title: str, label: str) -> Locator:
        return self.page.locator(".pane", has=self.pane_header(view_title)).locator(
            f".pane-body .monaco-list-row[aria-label^='{label}']").first

    def code_actions(self) -> Locator:
        """Ctrl+. at the cursor: the quick-fix menu (pressed again while it stays closed: under
        load a press can land before the editor has the focus back)."""
        menu = self.page.locator(".action-widget").first

        def shown() -> bool:
            if menu.is_visible():
                return True
            self.page.keyboard.press("Control+.")
            return menu.is_visible()
        wait_until("the quick-fix menu", shown, every=3)
        return menu

    # --- webviews -----------------------------------------------------------------
    def webview(self, selector: str, timeout: float = TIMEOUT_S) -> Frame:
        """The innermost frame of the webview whose document has `selector`."""
        def find() -> Frame | None:
            for frame in self.page.frames:
                try:
                    if frame.query_selector(selector):
                        return frame
                except Exception:
                    continue
            return None
        return wait_until(f"a webview showing {selector}", find, timeout)

    def clipboard(self) -> str:
        return self.page.evaluate("navigator.clipboard.readText()")
