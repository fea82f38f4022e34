"""The synapses learned from use, strongest first: what the observatory draws as edges.

One read of the store's table, failing open like every store method (a locked or
damaged database gives no edges, never an error). It lives beside `store.py`, which is
at the module size limit, and reads through the same connection and decay expression.
"""

from __future__ import annotations

from collections.abc import Sequence

from neuralmind import config
from neuralmind.synapse.db import SYN_EFF, SynapseDB, fail_open


@fail_open(list)
def strongest(store: SynapseDB, limit: int, exclude: Sequence[str] = (),
              now: float | None = None) -> list[tuple[str, str, float, str]]:
    """The `limit` strongest synapses (a, b, effective weight, namespace) outside the
    `exclude` namespaces, above the prune threshold."""
    skip = {f"ns{i}": ns for i, ns in enumerate(exclude)}
    where = f"WHERE namespace NOT IN ({', '.join(':' + k for k in skip)}) " if skip else ""
    rows = store._db().execute(
        f"SELECT a, b, {SYN_EFF} AS w, namespace FROM synapses {where}"
        "ORDER BY w DESC, a, b LIMIT :n", {"now": store._now(now), "n": limit, **skip})
    return [(a, b, round(w, 4), ns) for a, b, w, ns in rows if w >= config.PRUNE_THRESHOLD]
