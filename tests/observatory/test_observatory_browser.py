"""The observatory in a real browser (Debian's headless Chromium via Playwright), served by
the real language server process: login, every view, a didSave pulse, inert repository
strings. Screenshots of each view go to .test-output/observatory/ (NEURALMIND_TEST_OUTPUT)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import pytest_lsp
from browser_support import CHROMIUM_ARGS, SCREENSHOTS, WATCH_PAGE, chromium_or_fail
from lsp_support import CAPABILITIES, CONFIG, indexing_ended, uri, wait_for
from lsprotocol import types
from observatory_support import ATOM_LABEL, XSS_FILE, XSS_TITLE
from playwright.async_api import Browser, Page, async_playwright
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

# Whether the pulse layer above the graph has anything drawn on it.
DRAWN_PULSE = """() => {
  const c = document.querySelector('#brain-graph canvas.sigma-pulses');
  if (!c || !c.width) return false;
  const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  for (let i = 3; i < px.length; i += 4) if (px[i] > 0) return true;
  return false;
}"""


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, repo: Path):
    """The editor's real server over the observed repository, its loopback endpoint on."""
    lsp_client.init_result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES, root_uri=uri(repo),
        workspace_folders=[types.WorkspaceFolder(uri=uri(repo), name="shop")],
        initialization_options={"neuralmind": {"debounceSeconds": 0.3}}))
    await wait_for(lambda: indexing_ended(lsp_client), 120, "the first index")
    await lsp_client.protocol.send_request_async("neuralmind/decisions/record", {
        "title": XSS_TITLE, "rationale": "Rounding happens once, at the end.",
        "files": ["app/billing.py"]})
    await lsp_client.protocol.send_request_async("neuralmind/memory/remember", {
        "text": "Totals are summed in cents, then rounded once.", "type": "lesson",
        "label": ATOM_LABEL, "about": ["app/billing.py"]})
    (repo / ".neuralmind" / "DREAMS.md").write_text(
        "# Dreams\n\n## 2026-12-01 deep\nSummarised hub billing: 3 atoms.\n", encoding="utf-8")
    yield
    await lsp_client.shutdown_session()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(client: None) -> AsyncIterator[Browser]:
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=chromium_or_fail(), headless=True,
                                    args=CHROMIUM_ARGS)
        yield b
        await b.close()


async def login_url(client: LanguageClient, view: str | None = None) -> str:
    result: Any = await client.protocol.send_request_async(
        "neuralmind/observatory", {"view": view} if view else {})
    return str(result["url"])


class Watched:
    """A logged-in page and what it must not do (dialogs, page errors, CSP violations)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.problems: list[str] = []
        page.on("dialog", lambda d: self.problems.append(f"dialog: {d.message}"))
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))

    async def assert_clean(self) -> None:
        violations = await self.page.evaluate("window.__violations")
        pwned = await self.page.evaluate("window.__pwned")
        assert self.problems == [] and violations == [] and pwned is None


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def page(browser: Browser, client: LanguageClient) -> AsyncIterator[Watched]:
    context = await browser.new_context(viewport={"width": 1400, "height": 860})
    await context.add_init_script(WATCH_PAGE)
    watched = Watched(await context.new_page())
    await watched.page.goto(await login_url(client))
    await watched.page.wait_for_function("() => document.body.dataset.brain === 'painted'",
                                         timeout=30_000)
    yield watched
    await watched.assert_clean()
    await context.close()


async def shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


async def show(page: Page, view: str) -> None:
    await page.evaluate("v => { location.hash = v }", f"#{view}")
    await page.wait_for_function("v => document.body.dataset.view === v", arg=view)


async def test_the_login_ticket_works_once_and_nothing_is_served_without_it(
        browser: Browser, client: LanguageClient) -> None:
    url = await login_url(client, "debug")
    first = await browser.new_context()
    page = await first.new_page()
    response = await page.goto(url)
    assert response is not None and response.status == 200 and page.url.endswith("/observatory/#debug")
    cookies = await first.cookies()
    assert len(cookies) == 1 and cookies[0]["httpOnly"] and cookies[0]["sameSite"] == "Strict"
    other = await browser.new_context()
    page2 = await other.new_page()
    again = await page2.goto(url)
    assert again is not None and again.status == 401
    base = url.split("/observatory/")[0]
    for path in ("/observatory/", "/observatory/api/brain", "/observatory/static/app.js"):
        r = await page2.goto(base + path)
        assert r is not None and r.status == 401, path
    await first.close()
    await other.close()


async def test_brain_shows_the_graph_and_a_node_with_its_decision(page: Watched) -> None:
    p = page.page
    await show(p, "brain")
    summary = await p.text_content("#brain-summary")
    assert summary is not None and "files in" in summary
    await p.fill("#brain-search", "billing.py")
    await p.press("#brain-search", "Enter")
    await p.wait_for_function(
        "() => document.querySelector('#node-panel .node-name')?.textContent === 'app/billing.py'")
    panel = await p.text_content("#node-panel")
    assert panel is not None and XSS_TITLE in panel and "compute_invoice_total" in panel
    assert ATOM_LABEL in panel                                  # its memory atom, as text
    await shot(p, "brain")


async def test_a_didsave_through_the_lsp_pulses_the_file_within_a_second(
        page: Watched, client: LanguageClient, repo: Path) -> None:
    p = page.page
    await show(p, "brain")
    doc = repo / "app" / "users.py"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(doc), language_id="python", version=1, text=doc.read_text(encoding="utf-8"))))
    started = time.monotonic()
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(doc))))
    await p.wait_for_selector('#pulse-log li[data-kind="file_activity"][data-node="app/users.py"]'
                              '[data-in-graph="1"]', timeout=1000)
    await p.wait_for_function(DRAWN_PULSE, timeout=1000)     # the ring on the graph itself
    assert time.monotonic() - started < 1.0
    await shot(p, "brain-pulse")


async def test_ask_shows_layers_ranking_and_reasons(page: Watched) -> None:
    p = page.page
    await show(p, "ask")
    await p.fill("#ask-question", "how is the invoice total computed?")
    await p.click("#ask-button")
    await p.wait_for_selector("#ask-hits tbody tr")
    first = await p.get_attribute("#ask-hits tbody tr", "data-node")
    assert first is not None and first.startswith("app/billing.py")
    assert await p.locator("#ask-layers .layer-row").count() >= 3
    assert await p.text_content("#ask-files li:first-child a") == "app/billing.py"
    reasons = await p.text_content("#ask-hits tbody tr td:last-child")
    assert reasons
    await shot(p, "ask")


async def test_decisions_memory_dreams_savings_and_debug_views(page: Watched,
                                                               client: LanguageClient) -> None:
    p = page.page
    await client.protocol.send_request_async("neuralmind/context",     # an answer served
                                             {"query": "how is the invoice total computed?"})
    await client.protocol.send_request_async("neuralmind/savings", {})  # the codebase counted
    await show(p, "decisions")
    card = p.locator('[data-status="ACTIVE"] article.decision .title')
    await card.first.wait_for()
    assert await card.first.text_content() == XSS_TITLE
    await shot(p, "decisions")
    await show(p, "memory")
    atom = p.locator('#memory-board [data-state="active"] tr[data-id] td:first-child')
    await atom.first.wait_for()
    assert await atom.first.text_content() == ATOM_LABEL
    assert await p.text_content("#memory-inbox") == "Inbox (0)Nothing proposed."
    await shot(p, "memory")
    await show(p, "dreams")
    await p.wait_for_selector("#dream-diary article.dream")
    assert await p.text_content("#dream-diary h3") == "2026-12-01 deep"
    await shot(p, "dreams")
    await show(p, "savings")
    await p.wait_for_selector("#savings-totals")
    totals = await p.text_content("#savings-totals") or ""
    assert "served instead of" in totals and "the whole codebase each time" in totals
    await p.wait_for_selector("#chart-tokens canvas")
    await p.wait_for_selector('#savings-channels tr[data-kind="context"]')
    await shot(p, "savings")
    await show(p, "debug")
    await p.wait_for_selector('#trace-rows tr[data-kind="request"]')
    assert "neuralmind/" in (await p.text_content("#trace-rows") or "")
    await shot(p, "debug")


async def test_markup_from_the_repository_stays_text(page: Watched) -> None:
    p = page.page
    await show(p, "brain")
    await p.fill("#brain-search", XSS_FILE)
    await p.press("#brain-search", "Enter")
    await p.wait_for_function(
        "f => document.querySelector('#node-panel .node-name')?.textContent === f", arg=XSS_FILE)
    assert await p.evaluate("document.querySelectorAll('img').length") == 0
    assert await p.evaluate("document.querySelectorAll('script').length") == 1   # app.js only
    for view in ("decisions", "memory"):
        await show(p, view)
        assert await p.evaluate("document.querySelectorAll('script').length") == 1
    await shot(p, "xss")
    await page.assert_clean()
