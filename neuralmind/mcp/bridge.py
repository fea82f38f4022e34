"""stdio <-> streamable HTTP pump to a live NeuralMind endpoint, without the MCP SDK.

Why not `stdio_server()` + `streamable_http_client`: importing the SDK's server and
client transports costs ~2 s on this class of machine, and an agent waits for
every spawn; the bridge must answer in well under a second. The pump needs
little: newline-delimited JSON-RPC from stdin is POSTed to the endpoint with the
headers the transport defines (session id and negotiated version for the
initialize handshake; per-request routing headers for the 2026 era), and every
JSON or SSE message that comes back is written to stdout as one line. Replies are
written whole under a lock, so concurrent requests never interleave on stdout.
Stdlib only; one worker thread per in-flight request. A read-only bridge to a
read-write server hides and refuses the recording tools itself; which tools record
it learns from the server's own tool list (each tool's declared `readOnlyHint`).
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import socket
import threading
from base64 import b64encode
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from neuralmind.mcp.roles import read_only_refusal

log = logging.getLogger("neuralmind.mcp")

HANDSHAKE_VERSIONS_PREFIX = "2024-", "2025-"     # handshake-era protocol revisions
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
VERSION_META = "io.modelcontextprotocol/protocolVersion"
MAX_WORKERS = 8
INTERNAL_ERROR = -32603
ROLES_REQUEST_ID = "neuralmind-bridge-roles"
_HEADER_SAFE = re.compile(r"^[\x20-\x7E]*$")


def _header_value(value: str) -> str:
    """The transport's encoding for non-ASCII header values (base64 sentinel)."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not value.startswith("=?"):
        return value
    return f"=?base64?{b64encode(value.encode('utf-8')).decode('ascii')}?="


def _sse_messages(resp: http.client.HTTPResponse) -> Iterator[str]:
    """`data:` payloads of an event stream, one per event."""
    data: list[str] = []
    for raw in resp:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
    if data:
        yield "\n".join(data)


def _records(tool: dict[str, Any]) -> bool:
    """Whether a listed tool writes: anything not declared read-only is treated as writing."""
    annotations = tool.get("annotations") or {}
    return annotations.get("readOnlyHint") is not True


def _modern_version(msg: dict[str, Any]) -> str | None:
    """The 2026-era protocol version a message carries in `params._meta`, if any."""
    params = msg.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(VERSION_META) if isinstance(meta, dict) else None
    if isinstance(version, str) and not version.startswith(HANDSHAKE_VERSIONS_PREFIX):
        return version
    return None


class Bridge:
    """One agent's stdio session forwarded to one HTTP endpoint."""

    def __init__(self, url: str, token: str, out: BinaryIO, read_only: bool = False,
                 allowed: set[str] | None = None) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        self.token = token
        self.out = out
        self.read_only = read_only
        self.allowed = allowed               # a tool profile narrowing the server's list
        self.session_id: str | None = None
        self.version: str | None = None      # negotiated by the initialize handshake
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(MAX_WORKERS, thread_name_prefix="mcp-bridge")
        self._list_requests: set[Any] = set()   # tools/list ids whose answer the bridge filters
        self._recording: set[str] | None = None  # the server's recording tools, once listed
        self.failed = False

    # --- stdout -------------------------------------------------------------------------
    def emit(self, payload: str | dict[str, Any]) -> None:
        text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
        if isinstance(payload, str) and self._list_requests:
            text = self._filter_tools(text)
        data = text.replace("\n", " ").encode("utf-8") + b"\n"
        with self._write_lock:
            try:
                self.out.write(data)
                self.out.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.failed = True

    def _filter_tools(self, text: str) -> str:
        try:
            msg = json.loads(text)
        except ValueError:
            return text
        if msg.get("id") not in self._list_requests or "result" not in msg:
            return text
        self._list_requests.discard(msg["id"])
        tools = msg["result"].get("tools") or []
        self._learn_roles(tools)
        msg["result"]["tools"] = [t for t in tools if not (self.read_only and _records(t))
                                  and (self.allowed is None or t.get("name") in self.allowed)]
        return json.dumps(msg, separators=(",", ":"))

    def _learn_roles(self, tools: list[dict[str, Any]]) -> None:
        recording = {str(t.get("name")) for t in tools if _records(t)}
        self._recording = recording if self._recording is None else self._recording | recording

    def _recording_tools(self, msg: dict[str, Any]) -> set[str] | None:
        """The server's recording tools: from a tool list already relayed, else asked for now
        (with the routing headers of `msg`); None when the server does not answer."""
        if self._recording is None:
            meta = (msg.get("params") or {}).get("_meta")
            ask: dict[str, Any] = {"jsonrpc": "2.0", "id": ROLES_REQUEST_ID, "method": "tools/list",
                                   "params": {"_meta": meta} if meta else {}}
            answer = self._ask(ask)
            tools = ((answer or {}).get("result") or {}).get("tools")
            if isinstance(tools, list):
                self._learn_roles(tools)
        return self._recording

    def _error(self, msg_id: Any, message: str, code: int = INTERNAL_ERROR) -> None:
        if msg_id is not None:
            self.emit({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    # --- stdin --------------------------------------------------------------------------
    def pump(self, stdin: BinaryIO) -> None:
        """Forward every line until EOF; then end the HTTP session."""
        for raw in stdin:
            line = raw.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                self.emit({"jsonrpc": "2.0", "id": None,
                           "error": {"code": -32700, "message": "parse error"}})
                continue
            if not isinstance(msg, dict):
                self._error(None, "batches are not supported")
                continue
            if self._refused_locally(msg):
                continue
            if msg.get("method") == "initialize" or "id" not in msg or "method" not in msg:
                # In order: the handshake must set the session id before anything else, and
                # notifications (`initialized` first of all) must not overtake each other.
                self._post(msg)
                continue
            self._pool.submit(self._post, msg)
            if self.failed:
                break
        self._pool.shutdown(wait=True)
        self._end_session()

    def _refused_locally(self, msg: dict[str, Any]) -> bool:
        """A read-only bridge to a read-write server filters the recording tools itself; a
        bridge with a tool profile, the tools outside it."""
        if not self.read_only and self.allowed is None:
            return False
        method, params = msg.get("method"), msg.get("params") or {}
        if method == "tools/list" and "id" in msg:
            self._list_requests.add(msg["id"])
        if method == "tools/call" and self.allowed is not None \
                and params.get("name") not in self.allowed:
            self._refuse(msg, "invalid_argument", f"unknown tool {params.get('name')!r} (not "
                                                  "in this server's tool profile)")
            return True
        if method == "tools/call" and self.read_only:
            recording = self._recording_tools(msg)
            if recording is not None and params.get("name") not in recording:
                return False
            self._refuse(msg, "read_only", read_only_refusal(str(params.get("name"))))
            return True
        return False

    def _refuse(self, msg: dict[str, Any], code: str, text: str) -> None:
        """A tool error result, as the server's own refusals are shaped."""
        result: dict[str, Any] = {
            "content": [{"type": "text", "text": f"error [{code}]: {text}"}],
            "structuredContent": {"error": {"code": code, "message": text}},
            "isError": True}
        if _modern_version(msg):
            result["resultType"] = "complete"      # required by the 2026 result envelope
        self.emit({"jsonrpc": "2.0", "id": msg.get("id"), "result": result})

    # --- HTTP ---------------------------------------------------------------------------
    def _conn(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=None)
            conn.connect()
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no delayed-ACK waits
            self._local.conn = conn
        return conn

    def _headers(self, msg: dict[str, Any]) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        modern = _modern_version(msg)
        method = msg.get("method")
        if modern:
            headers["mcp-protocol-version"] = modern
            if isinstance(method, str):
                headers["mcp-method"] = method
                key = NAME_BEARING.get(method)
                if key and isinstance(params.get(key), str):
                    headers["mcp-name"] = _header_value(params[key])
            return headers
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        if self.version:
            headers["mcp-protocol-version"] = self.version
        return headers

    def _post(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg, separators=(",", ":")).encode("utf-8")
        for attempt in (1, 2):
            try:
                conn = self._conn()
                conn.request("POST", self.path, body, self._headers(msg))
                resp = conn.getresponse()
                self._answer(msg, resp)
                return
            except (http.client.HTTPException, OSError) as e:
                stale = getattr(self._local, "conn", None)
                if stale is not None:
                    stale.close()
                self._local.conn = None
                if attempt == 2:
                    log.warning("the NeuralMind endpoint stopped answering: %s", e)
                    self._error(msg.get("id"), "the NeuralMind server this bridge forwards to "
                                f"stopped answering ({e}); restart the MCP connection")

    def _ask(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        """POST a request of the bridge's own and return its answer (never written out)."""
        body = json.dumps(msg, separators=(",", ":")).encode("utf-8")
        try:
            conn = self._conn()
            conn.request("POST", self.path, body, self._headers(msg))
            resp = conn.getresponse()
            ctype = (resp.getheader("content-type") or "").split(";")[0].strip().lower()
            texts = list(_sse_messages(resp)) if ctype == "text/event-stream" \
                else [resp.read().decode("utf-8", "replace")]
        except (http.client.HTTPException, OSError) as e:
            log.info("the endpoint did not list its tools: %s", e)
            self._local.conn = None
            return None
        for text in texts:
            try:
                answer = json.loads(text)
            except ValueError:
                continue
            if isinstance(answer, dict) and answer.get("id") == msg["id"]:
                return answer
        return None

    def _answer(self, msg: dict[str, Any], resp: http.client.HTTPResponse) -> None:
        if msg.get("method") == "initialize" and resp.getheader("mcp-session-id"):
            self.session_id = resp.getheader("mcp-session-id")
        ctype = (resp.getheader("content-type") or "").split(";")[0].strip().lower()
        if ctype == "text/event-stream" and resp.status == 200:
            for data in _sse_messages(resp):
                if data.strip():
                    self._note(msg, data)
                    self.emit(data)
            return
        body = resp.read()
        if resp.status == 202 or not body.strip():
            if resp.status >= 400:
                self._error(msg.get("id"), f"HTTP {resp.status} from the NeuralMind endpoint")
            return
        text = body.decode("utf-8", "replace")
        if ctype == "application/json":
            self._note(msg, text)
            self.emit(text)
            return
        self._error(msg.get("id"), f"HTTP {resp.status} from the NeuralMind endpoint: "
                                   f"{text.strip()[:200]}")

    def _note(self, msg: dict[str, Any], text: str) -> None:
        """Remember the handshake's negotiated version (later requests must carry it)."""
        if msg.get("method") != "initialize" or self.version:
            return
        try:
            version = json.loads(text)["result"]["protocolVersion"]
        except (ValueError, KeyError, TypeError):
            return
        if isinstance(version, str):
            self.version = version

    def _end_session(self) -> None:
        if not self.session_id:
            return
        conn = http.client.HTTPConnection(self.host, self.port, timeout=1.0)
        try:
            conn.request("DELETE", self.path, headers={
                "Authorization": f"Bearer {self.token}", "mcp-session-id": self.session_id,
                **({"mcp-protocol-version": self.version} if self.version else {})})
            conn.getresponse().read()
        except (http.client.HTTPException, OSError):
            pass
        finally:
            conn.close()
