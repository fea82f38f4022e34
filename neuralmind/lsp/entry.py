"""Serving LSP on the process's stdio: the language server the editor starts.

The process entry (`neuralmind-lsp` and `neuralmind lsp`, in `cli/server_cmds.py`)
claims stdio (`neuralmind.stdio`) before this module is imported, then calls
`serve` with the private descriptors and the agent endpoint to run beside the LSP.
Heavy modules (the engine and its components) load after `initialize` is answered,
on the engine thread.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from typing import TYPE_CHECKING

from neuralmind.events import bus
from neuralmind.log import setup_logging
from neuralmind.lsp import setup
from neuralmind.lsp.lifecycle import close_server
from neuralmind.lsp.server import prepare_converter
from neuralmind.lsp.transport import StdioLoop, run_until_stopped
from neuralmind.service.preload import preload_runtime

if TYPE_CHECKING:
    from neuralmind.service.endpoint import EndpointLoader

SWITCH_INTERVAL_SECONDS = 0.001


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true",
                        help="speak LSP on stdin/stdout (the default and only transport)")
    parser.add_argument("--log-file", default=None,
                        help="write logs to this file instead of stderr")


def serve(log_file: str | None, verbosity: int, in_fd: int, out_fd: int,
          agent_endpoint: EndpointLoader | None = None) -> int:
    """Serve until EOF, `exit` or a fatal write error; then leave the process."""
    setup_logging(verbosity, log_file)
    _quiet_pygls(verbosity)
    bus.set_label("lsp")
    log = logging.getLogger("neuralmind.lsp")
    # The event loop gives up the GIL at every select() and must win it back from the
    # engine thread (pure-Python resolution, ranking), which keeps it for a whole switch
    # interval each time: 5 ms by default, several times per loop turn. 1 ms keeps
    # the editor's requests moving; the engine loses a little throughput.
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    preload_runtime()   # ~0.15 s before serving instead of a 20-30 ms stall while serving
    server = setup.create_server(log_file, agent_endpoint)
    prepare_converter(server)
    stdin = os.fdopen(in_fd, "rb")
    stdout = os.fdopen(out_fd, "wb")
    runner = StdioLoop(server.protocol, stdin, stdout)
    stopped_at: list[float] = []

    async def cleanup() -> None:
        stopped_at.append(time.monotonic())
        try:
            await asyncio.wait_for(close_server(server), timeout=1.5)
        except Exception as e:  # TimeoutError included
            log.warning("clean-up did not finish: %s", e or "timeout")

    try:
        code = asyncio.run(run_until_stopped(runner, cleanup))
    except KeyboardInterrupt:
        code = 130
    runner.writer.close()
    log.info("stopped")
    logging.shutdown()
    sys.stderr.flush()
    # Worker threads still inside a long engine call would hold interpreter exit;
    # everything durable is already written atomically, so leave now.
    os._exit(code)


class _DropRequestErrors:
    """pygls logs every refused request with a traceback; InvalidParams is routine here."""

    def filter(self, record: object) -> bool:
        exc = getattr(record, "exc_info", None)
        return not (exc and getattr(exc[1], "code", None) in (-32602, -32800))


def _quiet_pygls(verbosity: int) -> None:
    pygls_log = logging.getLogger("pygls")
    pygls_log.setLevel(logging.DEBUG if verbosity >= 3 else logging.WARNING)
    for h in logging.getLogger("neuralmind").handlers:
        h.addFilter(_DropRequestErrors())  # type: ignore[arg-type]
        pygls_log.addHandler(h)
    pygls_log.propagate = False

