"""Logging set-up shared by every entry point.

Logs always go to stderr (or a file): stdout belongs to protocol frames in the
stdio servers and to `--json` output in the CLI.
"""

from __future__ import annotations

import logging
import os
import sys

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR, "quiet": logging.ERROR}


def setup_logging(verbosity: int = 0, log_file: str | None = None) -> None:
    """Configure the `neuralmind` logger.

    `verbosity` counts -v (positive) and -q (negative) flags; `NEURALMIND_LOG`
    (debug/info/warning/error) wins when set, so editors can raise the level
    without changing the command line.
    """
    env = os.environ.get("NEURALMIND_LOG", "").strip().lower()
    if env in _LEVELS:
        level = _LEVELS[env]
    elif verbosity >= 2:
        level = logging.DEBUG
    elif verbosity == 1:
        level = logging.INFO
    elif verbosity < 0:
        level = logging.ERROR
    else:
        level = logging.WARNING
    logger = logging.getLogger("neuralmind")
    logger.setLevel(level)
    logger.propagate = False
    for h in list(logger.handlers):
        logger.removeHandler(h)
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("[neuralmind] %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
