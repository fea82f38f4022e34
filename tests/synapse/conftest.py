"""Fixtures for the synapse tests: a layer on a temp workspace with a fixed clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from synapse_testkit import FixedClock

from neuralmind.synapse.layer import SynapseLayer


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def layer(tmp_path: Path, clock: FixedClock) -> Iterator[SynapseLayer]:
    lay = SynapseLayer(tmp_path / ".neuralmind", tmp_path, clock=clock)
    yield lay
    lay.close()
