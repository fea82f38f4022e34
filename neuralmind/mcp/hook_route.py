"""The hook route of the loopback endpoint: `POST /neuralmind/hook`, answered without MCP.

Agent hooks run on every prompt and tool call, so the hook client (`neuralmind hook`)
skips MCP altogether: it POSTs one `HookRequest` (see `hookwire.py`) with the endpoint's
bearer token, and the Guard hands it here, past the token check and before the lazy
MCP app (a hook never makes this process load the SDK). The answer is the engine's
text as JSON: `{"context": ..., "root": ..., "server_ms": ...}` (the time the server took,
which benchmarks/hook_bench.py reports beside the hook's own).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from neuralmind.engine.activity import publish_hook
from neuralmind.hookwire import HookRequest, WireError
from neuralmind.mcp.asgi import Receive, Send, plain, posted_body

if TYPE_CHECKING:
    from neuralmind.service.engine_service import EngineService

log = logging.getLogger("neuralmind.mcp")

MAX_BODY_BYTES = 1024 * 1024
JSON_TYPE = [(b"content-type", b"application/json")]

HookRoute = Callable[[str, Receive, Send], Awaitable[None]]


def hook_route(service: EngineService) -> HookRoute:
    """The ASGI handler of the hook route for `service`."""

    async def route(method: str, receive: Receive, send: Send) -> None:
        body = await posted_body(method, receive, send, MAX_BODY_BYTES)
        if body is None:
            return
        try:
            req = HookRequest.from_json(json.loads(body or b"null"))
        except (ValueError, WireError) as e:
            await plain(send, 400, f"not a hook request: {e}".encode())
            return
        started = time.perf_counter()
        try:
            out: dict[str, Any] = await service.agent_hook(req)
        except Exception:   # an engine failure is the hook's silence, never a broken turn
            log.exception("the %s hook failed", req.event)
            await plain(send, 500, b"the hook failed; see the server log")
            return
        out["root"] = str(service.root)
        out["server_ms"] = round((time.perf_counter() - started) * 1000, 1)
        await plain(send, 200, json.dumps(out).encode(), JSON_TYPE)
        # the observatory's Debug trace: what the hook pushed, how fast
        publish_hook(req.agent, req.event, req.session, out["server_ms"],
                     str(out.get("context") or ""), "server")

    return route
