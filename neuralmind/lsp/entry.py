"""`neuralmind-lsp --stdio`: the process the editor starts.

Order matters: before anything else runs (imports included), the real stdout
is duplicated to a private descriptor for LSP frames and fd 1 is pointed at
stderr, and stdin is likewise taken private with /dev/null put in its place.
After that no print(), C library or child process can write into (or read
from) the protocol stream. Heavy modules load after `initialize` is answered.
"""

from __future__ import annotations

import argparse
import os
import sys


def claim_stdio() -> tuple[int, int]:
    """Private (in_fd, out_fd) for the protocol; fds 0/1 become /dev/null and stderr."""
    out_fd = os.dup(1)
    in_fd = os.dup(0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return in_fd, out_fd


SWITCH_INTERVAL_SECONDS = 0.001


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    wants_help = any(a in ("-h", "--help") for a in args_in)
    # --help is for a person at a terminal: it may use stdout; serving never does.
    in_fd, out_fd = (-1, -1) if wants_help else claim_stdio()
    parser = argparse.ArgumentParser(prog="neuralmind-lsp",
                                     description="NeuralMind language server (LSP over stdio).")
    add_arguments(parser)
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more logging (-vv: debug)")
    args = parser.parse_args(args_in)
    return serve(args.log_file, args.verbose, in_fd, out_fd)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true",
                        help="speak LSP on stdin/stdout (the default and only transport)")
    parser.add_argument("--log-file", default=None,
                        help="write logs to this file instead of stderr")


def serve(log_file: str | None, verbosity: int, in_fd: int, out_fd: int) -> int:
    import asyncio
    import logging
    import time

    from neuralmind.log import setup_logging

    setup_logging(verbosity, log_file)
    _quiet_pygls(verbosity)
    log = logging.getLogger("neuralmind.lsp")
    # The event loop gives up the GIL at every select() and must win it back from the
    # engine thread (pure-Python resolution, ranking), which keeps it for a whole switch
    # interval each time: 5 ms by default, several times per loop turn. 1 ms keeps
    # the editor's requests moving; the engine loses a little throughput.
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    from neuralmind.index.embedder import preload_runtime

    preload_runtime()   # ~0.15 s before serving instead of a 20-30 ms stall while serving

    from neuralmind.lsp.lifecycle import close_server
    from neuralmind.lsp.server import create_server, prepare_converter
    from neuralmind.lsp.transport import StdioLoop, run_until_stopped

    server = create_server(log_file)
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
    import logging

    pygls_log = logging.getLogger("pygls")
    pygls_log.setLevel(logging.DEBUG if verbosity >= 3 else logging.WARNING)
    for h in logging.getLogger("neuralmind").handlers:
        h.addFilter(_DropRequestErrors())  # type: ignore[arg-type]
        pygls_log.addHandler(h)
    pygls_log.propagate = False


if __name__ == "__main__":
    sys.exit(main())
