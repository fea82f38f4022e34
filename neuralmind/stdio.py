"""The process's standard streams, claimed for a protocol (LSP or MCP over stdio).

Called before anything else runs (imports included): the real stdout is duplicated
to a private descriptor for protocol frames and fd 1 is pointed at stderr, and stdin
is likewise taken private with /dev/null put in its place. After that no print(),
C library or child process can write into (or read from) the protocol stream.
"""

from __future__ import annotations

import os


def claim_stdio() -> tuple[int, int]:
    """Private (in_fd, out_fd) for the protocol; fds 0/1 become /dev/null and stderr."""
    out_fd = os.dup(1)
    in_fd = os.dup(0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return in_fd, out_fd
