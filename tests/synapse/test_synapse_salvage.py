"""A damaged synapses.db is not recreated empty: the rows SQLite can still read are carried
into the new store, the damaged file is moved aside untouched, and the log says how many
synapses came back and where the damaged file went."""

from __future__ import annotations

import logging
import random
import sqlite3
from pathlib import Path

import pytest

from neuralmind.synapse.store import SynapseStore

T0 = 1_700_000_000.0
FILES = [f"src/pkg{i // 40}/module_{i:04d}.py" for i in range(240)]


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of a few thousand synapses over ~200 pages (closed: no -wal beside it)."""
    path = tmp_path_factory.mktemp("learned") / "synapses.db"
    store = SynapseStore(path)
    rng = random.Random(3)
    for k in range(400):
        store.activate(rng.sample(FILES, 6), "personal", now=T0 + k)
    store.record_transitions(zip(FILES, FILES[1:], strict=False), "personal", now=T0)
    store.close()
    return path


def _rows(path: Path) -> dict[tuple, tuple]:
    con = sqlite3.connect(path)
    try:
        return {r[:3]: r for r in con.execute("SELECT * FROM synapses")}
    finally:
        con.close()


def _damage(original: Path, into: Path, how: str) -> bytes:
    data = bytearray(original.read_bytes())
    if how == "truncated":
        data = data[: len(data) // 2]
    else:                         # six pages of random bytes in the middle of the file
        middle = len(data) // 4096 // 2
        data[(middle - 3) * 4096:(middle + 3) * 4096] = random.Random(5).randbytes(6 * 4096)
    into.parent.mkdir(parents=True, exist_ok=True)
    into.write_bytes(bytes(data))
    return bytes(data)


@pytest.mark.parametrize(("how", "at_least"), [("truncated", 0.15), ("garbage-middle", 0.9)])
def test_readable_rows_of_a_damaged_store_are_recovered(
        learned: Path, tmp_path: Path, how: str, at_least: float,
        caplog: pytest.LogCaptureFixture) -> None:
    original = _rows(learned)
    assert len(original) > 3_000
    path = tmp_path / ".neuralmind" / "synapses.db"
    bad = _damage(learned, path, how)

    store = SynapseStore(path)
    with caplog.at_level(logging.WARNING, logger="neuralmind"):
        store.stats()                        # the first read meets the damage
        store.stats()                        # and the next one reads the recovered store
    store.close()

    sides = sorted(p for p in path.parent.iterdir() if p.name.startswith("synapses.db.corrupt-"))
    assert len(sides) == 1 and sides[0].read_bytes() == bad     # moved aside, byte for byte
    recovered = _rows(path)
    assert recovered and all(original[k] == row for k, row in recovered.items())  # none made up
    assert len(recovered) >= at_least * len(original), (len(recovered), len(original))
    said = [r.getMessage() for r in caplog.records if "recovered into a new store" in r.getMessage()]
    assert len(said) == 1 and sides[0].name in said[0], said
    assert f"{len(recovered)} synapses" in said[0]
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()

    store = SynapseStore(path)               # and it learns again
    assert store.activate(["a.py", "b.py"], "personal", now=T0) == 1
    assert store.stats()["synapses"] == len(recovered) + 1
    store.close()


def test_a_file_with_nothing_readable_is_recreated_empty(tmp_path: Path,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "synapses.db"
    path.write_bytes(b"not a database at all " * 500)
    store = SynapseStore(path)
    with caplog.at_level(logging.WARNING, logger="neuralmind"):
        assert store.activate(["a.py", "b.py"], "personal", now=T0) == 1
    assert store.stats()["synapses"] == 1
    store.close()
    assert any("0 synapses" in r.getMessage() for r in caplog.records)


def test_unsent_team_events_survive_the_recovery(tmp_path: Path) -> None:
    """The outbox of shared learning is carried over with its author and numbering, so
    nothing waiting to be pushed is lost and no new event reuses a sent (author, seq)."""
    path = tmp_path / ".neuralmind" / "synapses.db"
    store = SynapseStore(path)
    for k in range(3):      # the outbox is created first: its pages come early in the file
        store.learn_batch([(FILES[k], FILES[k + 1])], [], [], "personal", now=T0 + k, share=True)
    rng = random.Random(4)
    for k in range(400):
        store.activate(rng.sample(FILES, 6), "personal", now=T0 + k)
    store.close()
    con = sqlite3.connect(path)
    con.execute("DELETE FROM team_outbox WHERE seq = 1")   # acknowledged: pushed already
    con.commit()
    author = con.execute("SELECT value FROM team_outbox_meta").fetchone()[0]
    con.close()
    _damage(path, path, "garbage-middle")

    store = SynapseStore(path)
    store.stats()
    store.learn_batch([(FILES[7], FILES[8])], [], [], "personal", now=T0 + 9, share=True)
    store.close()
    assert any(p.name.startswith("synapses.db.corrupt-") for p in path.parent.iterdir())
    con = sqlite3.connect(path)
    try:
        assert con.execute("SELECT value FROM team_outbox_meta").fetchone()[0] == author
        assert [r[0] for r in con.execute("SELECT seq FROM team_outbox ORDER BY seq")] == [2, 3, 4]
    finally:
        con.close()
