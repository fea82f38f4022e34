"""The observatory as an ASGI app under /observatory on the server's loopback endpoint.

The endpoint's Guard has already refused non-loopback Host and Origin headers. Here:
`/observatory/login?ticket=` trades a one-time ticket for the session cookie; every
other request needs the cookie (401 without), and, when the browser says where it
comes from, must come from this very origin (`Origin`, `Sec-Fetch-Site`): another
page on a different loopback port is the same *site*, so SameSite alone would let it
in. Responses carry a Content-Security-Policy without inline script or style, and
every string from the repository reaches the page as JSON that the page renders as
text. The page itself is the built bundle in `static/` (package data: no Node at
install); the JSON routes are one service call each (`api.py`).
"""

from __future__ import annotations

import functools
import json
import logging
import re
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from neuralmind.config import OBSERVATORY_MAX_BODY
from neuralmind.discovery import OBSERVATORY_PATH
from neuralmind.observatory.api import Api, ApiError
from neuralmind.observatory.auth import Sessions, Tickets
from neuralmind.observatory.stream import EventHub, serve_events

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, MutableMapping

    from neuralmind.service.engine_service import EngineService

    Scope = MutableMapping[str, Any]
    Message = MutableMapping[str, Any]
    Receive = Callable[[], Awaitable[Message]]
    Send = Callable[[Message], Awaitable[None]]

log = logging.getLogger("neuralmind.observatory")

VIEWS = ("brain", "ask", "memory", "decisions", "dreams", "savings", "debug")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
       "connect-src 'self'; font-src 'self'; worker-src 'self' blob:; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
CONTENT_TYPES = {".html": b"text/html; charset=utf-8", ".js": b"text/javascript; charset=utf-8",
                 ".css": b"text/css; charset=utf-8", ".svg": b"image/svg+xml",
                 ".txt": b"text/plain; charset=utf-8"}
STATIC_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
SAME_SITE_FETCH = (b"same-origin", b"none")
LOGIN_HELP = (b"Open the observatory from your editor (NeuralMind: Open observatory, "
              b":NeuralMindObservatory) or with `neuralmind serve`: each gives a one-time "
              b"login link.")


@functools.cache
def static_file(name: str) -> bytes | None:
    """A file of the built bundle, read once (None when the bundle has no such file)."""
    if not STATIC_NAME.match(name):
        return None
    try:
        return (resources.files("neuralmind.observatory") / "static" / name).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


class ObservatoryApp:
    """Serves the page, its JSON and its event stream for one EngineService."""

    def __init__(self, service: EngineService, port: int) -> None:
        self.service = service
        self.port = port
        self.origins = {f"http://{h}:{port}".encode() for h in ("127.0.0.1", "localhost")}
        self.tickets = Tickets()
        self.sessions = Sessions(port)
        self.hub = EventHub(service.root)
        self.api = Api(service)

    def login_url(self, view: str | None = None) -> str:
        """A one-time login URL (mint it only for whoever holds the endpoint's token)."""
        url = f"http://127.0.0.1:{self.port}{OBSERVATORY_PATH}/login?ticket={self.tickets.mint()}"
        return url + (f"&view={view}" if view in VIEWS else "")

    def close(self) -> None:
        self.hub.shutdown()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        method: str = scope.get("method", "GET")
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        sub = path[len(OBSERVATORY_PATH):]
        if sub == "/login":
            await self._login(scope, send)
            return
        if not self.sessions.valid(headers.get(b"cookie")):
            await respond(send, 401, b"Not logged in. " + LOGIN_HELP)
            return
        problem = self._cross_origin(headers)
        if problem:
            await respond(send, 403, problem.encode())
            return
        if sub == "":
            await respond(send, 308, b"", [(b"location", f"{OBSERVATORY_PATH}/".encode())])
        elif sub == "/":
            await self._static(send, "index.html", method)
        elif sub.startswith("/static/"):
            await self._static(send, sub[len("/static/"):], method)
        elif sub == "/events":
            await serve_events(self.hub, receive, send)
        elif sub.startswith("/api/"):
            await self._api(sub[len("/api/"):], method, scope, receive, send)
        else:
            await respond(send, 404, b"not found")

    def _cross_origin(self, headers: dict[bytes, bytes]) -> str | None:
        origin = headers.get(b"origin")
        if origin is not None and origin not in self.origins:
            return "refused: the request comes from another origin"
        site = headers.get(b"sec-fetch-site")
        if site is not None and site not in SAME_SITE_FETCH:
            return "refused: the request comes from another site"
        return None

    async def _login(self, scope: Scope, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        ticket = (query.get("ticket") or [""])[0]
        if not ticket or not self.tickets.redeem(ticket):
            await respond(send, 401, b"This login link was used already or has expired. "
                          + LOGIN_HELP)
            return
        view = (query.get("view") or [""])[0]
        target = f"{OBSERVATORY_PATH}/" + (f"#{view}" if view in VIEWS else "")
        await respond(send, 303, b"", [(b"location", target.encode()),
                                       (b"set-cookie", self.sessions.open().encode())])

    async def _static(self, send: Send, name: str, method: str) -> None:
        if method not in ("GET", "HEAD"):
            await respond(send, 405, b"method not allowed", [(b"allow", b"GET")])
            return
        body = static_file(name)
        if body is None:
            await respond(send, 404, b"not found")
            return
        kind = CONTENT_TYPES.get(name[name.rfind("."):], b"application/octet-stream")
        await respond(send, 200, b"" if method == "HEAD" else body,
                      [(b"content-type", kind), (b"cache-control", b"no-cache")])

    async def _api(self, name: str, method: str, scope: Scope, receive: Receive,
                   send: Send) -> None:
        query = {k: v[0] for k, v in parse_qs(scope.get("query_string", b"").decode()).items()}
        body: Any = None
        if method == "POST":
            try:
                body = json.loads(await _read_body(receive) or b"{}")
            except (ValueError, OverflowError) as e:
                await respond_json(send, 400, {"error": "invalid_argument", "message": str(e)})
                return
        elif method != "GET":
            await respond(send, 405, b"method not allowed", [(b"allow", b"GET, POST")])
            return
        try:
            status, encoded = 200, await self.api.handle(name, method, query, body)
        except ApiError as e:
            status, encoded = e.status, json.dumps(e.to_json()).encode()
        except Exception:
            log.exception("observatory request %s failed", name)
            status, encoded = 500, b'{"error":"internal_error","message":"see the server log"}'
        await respond(send, status, encoded, [(b"content-type", b"application/json"),
                                              (b"cache-control", b"no-store")])


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ValueError("the client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > OBSERVATORY_MAX_BODY:
            raise ValueError(f"the request body is larger than {OBSERVATORY_MAX_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def respond(send: Send, status: int, body: bytes,
                  headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """A complete response with the security headers (text/plain unless told otherwise)."""
    extra = headers or []
    names = {k for k, _ in extra}
    base = [(b"content-type", b"text/plain; charset=utf-8")] if b"content-type" not in names else []
    await send({"type": "http.response.start", "status": status,
                "headers": [*base, *extra, (b"content-length", str(len(body)).encode()),
                            *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})


async def respond_json(send: Send, status: int, obj: Any) -> None:
    await respond(send, status, json.dumps(obj).encode(), [(b"content-type", b"application/json")])
