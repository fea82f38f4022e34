"""The memory's clock: wall time, or a time the tests set and advance (never a sleep).

Decay, the feedback windows (grace and timeout), promotion and the dream schedule all
read time through one `Clock`, so a test can move it 121 s or 90 days forward and watch
what happens, deterministically.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime


def iso(ts: float) -> str:
    """ISO-8601 UTC with microseconds, the format every stored timestamp uses."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="microseconds")


def now_iso() -> str:
    return iso(time.time())


def parse(stamp: str | None) -> float | None:
    """Epoch seconds of a stored timestamp (None when absent or unreadable)."""
    if not stamp:
        return None
    try:
        t = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return t.timestamp()


class Clock:
    """Wall time by default; `Clock(start)` is a settable clock for tests and simulations."""

    def __init__(self, start: float | None = None) -> None:
        self._fixed = start

    @property
    def settable(self) -> bool:
        return self._fixed is not None

    def now(self) -> float:
        return time.time() if self._fixed is None else self._fixed

    def iso(self) -> str:
        return iso(self.now())

    def set(self, ts: float) -> None:
        self._fixed = float(ts)

    def advance(self, seconds: float) -> None:
        """Move a settable clock forward (a wall clock cannot be moved)."""
        if self._fixed is None:
            raise RuntimeError("the wall clock cannot be advanced")
        self._fixed += seconds
