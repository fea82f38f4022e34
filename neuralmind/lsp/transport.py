"""The stdio loop: we own it instead of pygls's `start_io`.

Why: pygls reads stdin on a pool thread that `shutdown()` then waits for, so a
client that sends `exit` but keeps the pipe open hangs the process, and a bare
EOF gives no hook to stop background work. Here a daemon thread reads frames
and hands them to the event loop; EOF, `exit` and fatal write errors all end
the loop the same way, after which the caller runs the clean-up. Messages that
fail to parse or to type-check answer InvalidParams instead of being dropped
(pygls would log them and leave the client waiting).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcParseError
from pygls.protocol import JsonRPCProtocol

log = logging.getLogger("neuralmind.lsp")

_CONTENT_LENGTH = re.compile(rb"^content-length:\s*(\d+)\s*$", re.IGNORECASE)
MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a frame larger than this is refused, not buffered


class FrameWriter:
    """pygls writer over our private duplicate of the original stdout."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.broken = False

    def write(self, data: bytes) -> None:
        if self.broken:
            return
        try:
            with self._lock:
                self._stream.write(data)
                self._stream.flush()
        except (BrokenPipeError, OSError, ValueError) as e:
            self.broken = True
            log.info("client stream closed while writing: %s", e)

    def close(self) -> None:
        try:
            with self._lock:
                self._stream.close()
        except OSError:
            pass


def _read_exactly(stream: BinaryIO, length: int) -> bytes | None:
    """`length` bytes, looping over short reads (pipes hand out what has arrived); None at EOF."""
    chunks: list[bytes] = []
    remaining = length
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _read_frames(stream: BinaryIO, deliver: Callable[[bytes | None], None]) -> None:
    """Reader thread: one call to `deliver` per body; `None` on EOF or a broken stream."""
    try:
        while True:
            length = -1
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    if length >= 0:
                        break
                    continue
                m = _CONTENT_LENGTH.match(line.strip())
                if m:
                    length = int(m.group(1))
            if length > MAX_MESSAGE_BYTES:
                log.error("refusing a %d-byte message; closing the connection", length)
                return
            body = _read_exactly(stream, length)
            if body is None:
                return
            deliver(body)
    except (OSError, ValueError) as e:
        log.info("client stream closed while reading: %s", e)
    finally:
        deliver(None)


class StdioLoop:
    """Feeds framed JSON-RPC messages to a pygls protocol until EOF or `exit`."""

    def __init__(self, protocol: JsonRPCProtocol, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self.protocol = protocol
        self.writer = FrameWriter(stdout)
        self._stdin = stdin
        self.exit_code: int | None = None   # set by `exit`; None means EOF
        self._done: asyncio.Future[None] | None = None

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        self.protocol.set_writer(self.writer)

        def deliver(body: bytes | None) -> None:
            try:
                loop.call_soon_threadsafe(self._on_body, body)
            except RuntimeError:
                pass  # loop already closed: nothing left to deliver to

        reader = threading.Thread(target=_read_frames, args=(self._stdin, deliver),
                                  name="neuralmind-lsp-reader", daemon=True)
        reader.start()
        await self._done

    def stop(self) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_result(None)

    def _on_body(self, body: bytes | None) -> None:
        if body is None:
            log.info("stdin closed")
            self.stop()
            return
        if self._done is None or self._done.done():
            return
        message = self._parse(body)
        if message is None:
            return
        try:
            self.protocol.handle_message(message)
        except SystemExit as e:  # pygls's `exit` handler ends with sys.exit(code)
            self.exit_code = int(e.code or 0) if isinstance(e.code, int) or e.code is None else 1
            self.stop()
        except Exception:
            log.exception("unhandled error while dispatching a message")
        if self.writer.broken:
            self.stop()

    def _parse(self, body: bytes) -> Any | None:
        try:
            raw = json.loads(body)
        except (ValueError, UnicodeDecodeError) as e:
            log.warning("unparsable message: %s", e)
            self._send_error(None, JsonRpcParseError(message=f"invalid JSON: {e}"))
            return None
        try:
            return json.loads(body, object_hook=self.protocol.structure_message)
        except Exception as e:
            if isinstance(raw, dict) and "id" in raw and "method" in raw:
                detail = getattr(e.__cause__, "args", None) or e.args
                msg = f"invalid params for {raw.get('method')}: {detail[0] if detail else e}"
                self._send_error(raw["id"], JsonRpcInvalidParams(message=msg))
            else:
                log.warning("dropping a malformed notification %r: %s",
                            raw.get("method") if isinstance(raw, dict) else raw, e)
            return None

    def _send_error(self, msg_id: Any, exc: JsonRpcInvalidParams | JsonRpcParseError) -> None:
        error = types.ResponseError(code=exc.code, message=exc.message)
        self.protocol._send_data(types.ResponseErrorMessage(id=msg_id, error=error))


async def run_until_stopped(loop_runner: StdioLoop, cleanup: Callable[[], Awaitable[None]]) -> int:
    """Serve until EOF or `exit`, then run `cleanup`; the exit code follows LSP rules."""
    try:
        await loop_runner.run()
    finally:
        await cleanup()
    if loop_runner.exit_code is not None:
        return loop_runner.exit_code
    return 0
