"""The observatory over real HTTP on the loopback endpoint: the login ticket, the session
cookie, same-origin checks, the CSP, every JSON view and the live event stream."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from observatory_support import ATOM_LABEL, XSS_FILE, XSS_TITLE
from sample_workspace import eventually

from neuralmind.discovery import OBSERVATORY_LOGIN_PATH
from neuralmind.hookwire import HOOK_PATH, PROMPT, HookRequest
from neuralmind.mcp.http import McpEndpoint
from neuralmind.observatory.auth import Tickets
from neuralmind.service.engine_service import EngineService

pytestmark = pytest.mark.asyncio(loop_scope="module")


def base(ep: McpEndpoint) -> str:
    return f"http://127.0.0.1:{ep.port}"


async def login(ep: McpEndpoint, http: httpx2.AsyncClient) -> str:
    """A session cookie header value, through a minted ticket (as the editor does)."""
    r = await http.post(base(ep) + OBSERVATORY_LOGIN_PATH,
                        headers={"Authorization": f"Bearer {ep.token}"})
    assert r.status_code == 200
    r = await http.get(r.json()["url"])
    assert r.status_code == 303
    return r.headers["set-cookie"].split(";")[0]


@pytest.mark.parametrize("method,path", [
    ("GET", "/observatory/"), ("GET", "/observatory"), ("GET", "/observatory/static/app.js"),
    ("GET", "/observatory/api/brain"), ("GET", "/observatory/api/decisions"),
    ("GET", "/observatory/events"), ("POST", "/observatory/api/ask"),
])
async def test_without_the_session_cookie_everything_is_401(endpoint: McpEndpoint, method: str,
                                                            path: str) -> None:
    async with httpx2.AsyncClient() as http:
        r = await http.request(method, base(endpoint) + path, json={"question": "x"},
                               headers={"Cookie": "neuralmind_observatory_1=forged"})
    assert r.status_code == 401
    assert "login link" in r.text


async def test_a_login_ticket_works_once_and_sets_a_strict_httponly_cookie(
        endpoint: McpEndpoint) -> None:
    async with httpx2.AsyncClient() as http:
        refused = await http.post(base(endpoint) + OBSERVATORY_LOGIN_PATH)
        assert refused.status_code == 401                   # minting needs the token
        wrong_verb = await http.get(base(endpoint) + OBSERVATORY_LOGIN_PATH,
                                    headers={"Authorization": f"Bearer {endpoint.token}"})
        assert wrong_verb.status_code == 405
        url = endpoint.login_url("decisions")
        assert url.startswith(f"http://127.0.0.1:{endpoint.port}/observatory/login?ticket=")
        first = await http.get(url)
        again = await http.get(url)
        forged = await http.get(url.replace("ticket=", "ticket=x"))
    assert first.status_code == 303 and first.headers["location"] == "/observatory/#decisions"
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"neuralmind_observatory_{endpoint.port}=")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/observatory" in cookie
    assert again.status_code == 401 and forged.status_code == 401


async def test_tickets_expire_and_are_spent_on_first_use() -> None:
    now = [100.0]
    tickets = Tickets(clock=lambda: now[0], ttl=60)
    late, used = tickets.mint(), tickets.mint()
    assert tickets.redeem(used) and not tickets.redeem(used)
    now[0] += 61
    assert not tickets.redeem(late) and not tickets.redeem("never-minted")


async def test_the_page_comes_with_a_csp_that_allows_no_inline_script(endpoint: McpEndpoint) -> None:
    async with httpx2.AsyncClient() as http:
        cookie = await login(endpoint, http)
        page = await http.get(base(endpoint) + "/observatory/", headers={"Cookie": cookie})
        script = await http.get(base(endpoint) + "/observatory/static/app.js",
                                headers={"Cookie": cookie})
        missing = await http.get(base(endpoint) + "/observatory/static/../app.py",
                                 headers={"Cookie": cookie})
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    csp = page.headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["script-src"] == "'self'" and directives["default-src"] == "'none'"
    assert "unsafe" not in csp and directives["frame-ancestors"] == "'none'"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "<script>" not in page.text and 'src="static/app.js"' in page.text
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert missing.status_code == 404


@pytest.mark.parametrize("extra", [
    {"Origin": "http://127.0.0.1:1"},          # another loopback port: same site, not same origin
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
])
async def test_requests_from_another_origin_are_refused(endpoint: McpEndpoint,
                                                        extra: dict[str, str]) -> None:
    async with httpx2.AsyncClient() as http:
        cookie = await login(endpoint, http)
        r = await http.get(base(endpoint) + "/observatory/api/status",
                           headers={"Cookie": cookie, **extra})
        ok = await http.get(base(endpoint) + "/observatory/api/status", headers={
            "Cookie": cookie, "Origin": base(endpoint), "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 403 and ok.status_code == 200


async def test_the_views_answer_for_the_workspace(endpoint: McpEndpoint, service: EngineService,
                                                  repo: Path) -> None:
    await service.decisions_record(XSS_TITLE, "Rounding happens once, at the end.",
                                   files=["app/billing.py"])
    (repo / ".neuralmind" / "DREAMS.md").write_text(
        "# Dreams\n\n## 2026-11-30 light\nMerged 2 near-duplicates.\n\n## 2026-12-01 deep\n"
        "Summarised hub <billing>.\n", encoding="utf-8")
    async with httpx2.AsyncClient(timeout=60) as http:
        cookie = await login(endpoint, http)

        async def get(route: str, **params: str) -> httpx2.Response:
            return await http.get(f"{base(endpoint)}/observatory/api/{route}", params=params,
                                  headers={"Cookie": cookie})

        brain = (await get("brain")).json()
        files = [f[0] for f in brain["files"]]
        assert "app/billing.py" in files and XSS_FILE in files
        assert brain["communities"] and brain["edges"]
        node = (await get("node", id="app/billing.py")).json()
        assert node["kind"] == "file"
        assert [d["title"] for d in node["decisions"]] == [XSS_TITLE]
        assert {"compute_invoice_total", "InvoiceFormatter"} <= {s["name"] for s in node["symbols"]}
        board = (await get("decisions")).json()
        assert [d["title"] for d in board["groups"]["ACTIVE"]] == [XSS_TITLE]
        ask = await http.post(f"{base(endpoint)}/observatory/api/ask", headers={"Cookie": cookie},
                              json={"question": "how is the invoice total computed?"})
        pack = ask.json()
        assert ask.status_code == 200 and pack["tokens"] > 0 and pack["layers"]
        top = pack["hits"][0]
        assert top["file"] == "app/billing.py" and top["id"].startswith("app/billing.py")
        assert isinstance(top["why"], dict) and top["why"]
        await service.savings()                           # the codebase counted, as the CLI does
        before = (await get("savings")).json()["overall"]["answers"]    # the page's Ask is not one
        await service.query("how is the invoice total computed?", session="lsp-1")
        savings = (await get("savings")).json()           # the CLI's and the status's report
        overall = savings["overall"]
        assert overall["answers"] == before + 1 and overall["tokens_served"] > 0
        assert savings["codebase_tokens_now"] > 0          # o200k tokens of every indexed file
        assert overall["codebase_tokens"] >= savings["codebase_tokens_now"]
        assert savings["kinds"]["context"]["answers"] >= 1
        assert savings["days"][-1]["answers"] >= 1
        recent = (await get("events", limit="50")).json()
        kinds = {e["kind"] for e in recent}
        assert {"query", "decision"} <= kinds
        dreams = (await get("dreams")).json()
        assert [e["title"] for e in dreams["entries"]] == ["2026-12-01 deep", "2026-11-30 light"]
        status = (await get("status")).json()
        assert Path(status["root"]) == repo


async def test_memory_shows_atoms_by_state_inbox_directives_and_on_the_node(
        endpoint: McpEndpoint, service: EngineService) -> None:
    lesson = await service.memory_remember("Totals are summed in cents, then rounded once.",
                                           "lesson", ATOM_LABEL, about=["app/billing.py"])
    rule = await service.memory_remember("Never round before the total.", "preference")
    await service.memory_pin(rule["id"])
    proposed = await service.memory_remember("Users are looked up by email.", "fact",
                                             about=["app/users.py"], source="mcp", proposed=True)
    rated = await service.memory_rate(lesson["id"], "useful", "test")
    async with httpx2.AsyncClient(timeout=60) as http:
        cookie = await login(endpoint, http)

        async def get(route: str, **params: str) -> Any:
            r = await http.get(f"{base(endpoint)}/observatory/api/{route}", params=params,
                               headers={"Cookie": cookie})
            return r.json()

        board, node = await get("memory"), await get("node", id="app/billing.py")
        recent = await get("events", limit="200")
    assert board["available"] is True
    shown = {a["id"]: a for a in board["atoms"]}
    assert shown[lesson["id"]]["label"] == ATOM_LABEL and shown[lesson["id"]]["state"] == "active"
    assert shown[lesson["id"]]["rank"] == pytest.approx(rated["rank"], abs=1e-3) and shown[lesson["id"]]["exposure"] == 3
    assert shown[proposed["id"]]["state"] == "proposed"
    assert all(a["type"] != "decision" for a in board["atoms"])    # their own board
    assert [a["id"] for a in board["inbox"]] == [proposed["id"]]
    assert [d["id"] for d in board["directives"]] == [rule["id"]]
    assert [m["label"] for m in node["memory"]] == [ATOM_LABEL]
    changes = {(e["data"]["change"], e["data"]["id"]) for e in recent if e["kind"] == "memory"}
    assert {("remember", lesson["id"]), ("state", rule["id"]), ("rate", lesson["id"])} <= changes
    told = next(e["data"] for e in recent if e["kind"] == "memory")
    assert told["files"] == ["app/billing.py"] and told["label"] == ATOM_LABEL


@pytest.mark.parametrize("method,route,body,params,status", [
    ("GET", "node", None, {}, 400),
    ("GET", "node", None, {"id": "app/nowhere.py"}, 404),
    ("GET", "nope", None, {}, 404),
    ("GET", "events", None, {"limit": "0"}, 400),
    ("POST", "ask", b"{not json", {}, 400),
    ("POST", "ask", json.dumps({"question": "x", "budget": 5}).encode(), {}, 400),
    ("POST", "ask", json.dumps({"question": "  "}).encode(), {}, 400),
    ("POST", "ask", b'{"question": "' + b"x" * 70_000 + b'"}', {}, 400),
    ("DELETE", "brain", None, {}, 405),
])
async def test_bad_requests_get_a_clear_error(endpoint: McpEndpoint, method: str, route: str,
                                              body: bytes | None, params: dict[str, str],
                                              status: int) -> None:
    async with httpx2.AsyncClient(timeout=60) as http:
        cookie = await login(endpoint, http)
        r = await http.request(method, f"{base(endpoint)}/observatory/api/{route}", params=params,
                               content=body, headers={"Cookie": cookie})
    assert r.status_code == status
    if status != 405:
        assert r.json()["message"]


async def test_the_event_stream_delivers_what_happens(endpoint: McpEndpoint,
                                                      service: EngineService) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        cookie = await login(endpoint, http)
        async with http.stream("GET", base(endpoint) + "/observatory/events",
                               headers={"Cookie": cookie}) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.aiter_lines()
            assert await anext(lines) == "retry: 2000"
            await service.did_open("app/users.py", session="lsp-test")
            await service.did_save("app/users.py", session="lsp-test")
            seen: list[dict] = []

            async def until_save() -> None:
                async for line in lines:
                    if line.startswith("data: "):
                        seen.append(json.loads(line[6:]))
                        if seen[-1]["kind"] == "file_activity" and seen[-1]["data"]["action"] == "save":
                            return

            await asyncio.wait_for(until_save(), 20)
    kinds = [(e["kind"], e["data"].get("file")) for e in seen]
    assert ("editor", "app/users.py") in kinds and ("file_activity", "app/users.py") in kinds

    async def unsubscribed() -> bool:        # the page left: the bus has no listener from it
        return not endpoint.observatory.hub.pages

    await eventually(unsubscribed, 10, "the stream to end")


async def test_a_hook_call_shows_in_the_trace_with_what_it_pushed(endpoint: McpEndpoint) -> None:
    hook = HookRequest(PROMPT, session="s1", agent="claude",
                       prompt="how is the invoice total computed?")
    async with httpx2.AsyncClient(timeout=60) as http:
        answered = await http.post(base(endpoint) + HOOK_PATH, json=hook.to_json(),
                                   headers={"Authorization": f"Bearer {endpoint.token}"})
        assert answered.status_code == 200
        cookie = await login(endpoint, http)
        recent = (await http.get(base(endpoint) + "/observatory/api/events",
                                 headers={"Cookie": cookie})).json()
    hooks = [e["data"] for e in recent if e["kind"] == "hook"]
    assert hooks and hooks[-1]["agent"] == "claude" and hooks[-1]["event"] == PROMPT
    assert hooks[-1]["ms"] == answered.json()["server_ms"]
    assert hooks[-1]["chars"] == len(answered.json()["context"]) > 0
    assert hooks[-1]["pushed"] in answered.json()["context"].replace("…", "") or \
        hooks[-1]["pushed"].endswith("…")
    # what the prompt hook pushed counts as a question the agent channel was answered (Savings)
    asked = [e["data"] for e in recent if e["kind"] == "query"
             and e["data"]["source"] == "agent:claude:s1"]
    assert asked and asked[-1]["mode"] == "hook" and "app/billing.py" in asked[-1]["files"]
    assert asked[-1]["tokens"] > 0 and asked[-1]["replaced"] > 0
