"""The learned synapses the observatory draws: strongest first, the structural priors left out."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from neuralmind.synapse.learned import strongest
from neuralmind.synapse.store import SynapseStore

T0 = 1_700_000_000.0


def test_strongest_learned_pairs_leave_out_the_excluded_namespaces(tmp_path: Path) -> None:
    store = SynapseStore(tmp_path / "s.db")
    store.seed_pairs({("a.py", "z.py"): 0.9}, "shared", now=T0)          # a structural prior
    for _ in range(3):
        store.activate(["a.py", "b.py"], "personal", now=T0)
    store.activate(["c.py", "d.py"], "agent", now=T0)
    edges = strongest(store, 10, ("shared",), now=T0)
    assert [(a, b, ns) for a, b, _, ns in edges] == [("a.py", "b.py", "personal"),
                                                      ("c.py", "d.py", "agent")]
    assert edges[0][2] > edges[1][2] > 0
    assert strongest(store, 1, (), now=T0)[0][:2] == ("a.py", "z.py")   # nothing excluded
    assert len(strongest(store, 10, ("shared",), now=T0 + 3650 * 86400)) == 0   # decayed away


def test_a_damaged_store_gives_no_edges_and_no_error(tmp_path: Path) -> None:
    store = SynapseStore(tmp_path / "s.db")
    store.activate(["a.py", "b.py"], "personal", now=T0)
    store.close()
    with sqlite3.connect(tmp_path / "s.db") as db:
        db.execute("DROP TABLE synapses")
    reopened = SynapseStore(tmp_path / "s.db")
    assert strongest(reopened, 10, ("shared",), now=T0) == []
    assert "no such table" in (reopened.last_skipped() or "")
