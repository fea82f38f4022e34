"""Helpers for the memory tests: a store on a settable clock."""

from __future__ import annotations

from pathlib import Path

from neuralmind.memory.clock import Clock
from neuralmind.memory.store import MemoryStore

T0 = 1_780_000_000.0          # a fixed start for the settable clock
DAY = 86_400.0


def store_at(root: Path, start: float = T0) -> MemoryStore:
    return MemoryStore(root, clock=Clock(start))
