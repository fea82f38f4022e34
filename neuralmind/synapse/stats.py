"""What `neuralmind synapse stats` shows: counts per namespace and the strongest rows.

Read-only queries over synapses.db, apart from the store's learning and recall paths
(the store's `stats` wraps them in its fail-open guard).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from typing import Any

from neuralmind import config
from neuralmind.synapse.db import SYN_EFF, TR_EFF
from neuralmind.synapse.schema import read_version


def summary(db: sqlite3.Connection, now: float, top: int) -> dict[str, Any]:
    """Counts per namespace and in total, and the `top` pairs, hubs and transitions."""
    per_ns: dict[str, dict[str, int]] = defaultdict(
        lambda: {"synapses": 0, "ltp": 0, "transitions": 0, "activations": 0})
    for ns, n, ltp in db.execute(
            f"SELECT namespace, count(*), sum(count >= {config.LTP_THRESHOLD}) "
            "FROM synapses GROUP BY namespace"):
        per_ns[ns]["synapses"], per_ns[ns]["ltp"] = n, int(ltp or 0)
    for table in ("transitions", "activations"):
        for ns, n in db.execute(f"SELECT namespace, count(*) FROM {table} GROUP BY namespace"):
            per_ns[ns][table] = n
    return {
        "schema_version": read_version(db),
        "namespaces": dict(sorted(per_ns.items())),
        "synapses": sum(v["synapses"] for v in per_ns.values()),
        "ltp": sum(v["ltp"] for v in per_ns.values()),
        "transitions": sum(v["transitions"] for v in per_ns.values()),
        "activations": sum(v["activations"] for v in per_ns.values()),
        "structural_edges": db.execute("SELECT count(*) FROM structural_edges").fetchone()[0],
        "questions": db.execute("SELECT count(*) FROM questions").fetchone()[0],
        "top_pairs": top_pairs(db, now, top),
        "hubs": hubs(db, top),
        "top_transitions": top_transitions(db, now, top),
    }


def top_pairs(db: sqlite3.Connection, now: float, n: int) -> list[dict[str, Any]]:
    rows = db.execute(
        f"SELECT a, b, namespace, {SYN_EFF} AS w, count FROM synapses "
        "ORDER BY w DESC, a, b LIMIT :n", {"now": now, "n": n})
    return [{"a": a, "b": b, "namespace": ns, "weight": round(w, 4), "count": c,
             "ltp": c >= config.LTP_THRESHOLD} for a, b, ns, w, c in rows]


def hubs(db: sqlite3.Connection, n: int) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT node, count(DISTINCT other) AS deg FROM ("
        " SELECT a AS node, b AS other FROM synapses UNION ALL"
        " SELECT b AS node, a AS other FROM synapses) GROUP BY node "
        "ORDER BY deg DESC, node LIMIT ?", (n,))
    return [{"node": node, "degree": deg} for node, deg in rows]


def top_transitions(db: sqlite3.Connection, now: float, n: int) -> list[dict[str, Any]]:
    rows = db.execute(
        f"WITH e AS (SELECT src, dst, sum({TR_EFF}) AS w FROM transitions GROUP BY src, dst), "
        "tot AS (SELECT src, sum(w) AS total FROM e GROUP BY src) "
        "SELECT e.src, e.dst, e.w, tot.total FROM e JOIN tot USING (src) "
        "ORDER BY e.w DESC, e.src, e.dst LIMIT :n", {"now": now, "n": n})
    return [{"src": s, "dst": d, "weight": round(w, 4),
             "probability": round(w / total, 4) if total else 0.0} for s, d, w, total in rows]
