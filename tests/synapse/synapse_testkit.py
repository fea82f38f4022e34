"""Constants and a fixed clock shared by the synapse tests (a uniquely named module, so it
never clashes with another component's helpers on sys.path)."""

from __future__ import annotations

T0 = 1_800_000_000.0  # fixed "now" (epoch seconds)
DAY = 86400.0


class FixedClock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t
