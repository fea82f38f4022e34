"""What the synapse store knows, written out: agent-readable markdown and portable bundles."""

from __future__ import annotations

import json
import time
from typing import Any

from neuralmind import config
from neuralmind.synapse.seeding import BUNDLE_FORMAT, BUNDLE_VERSION


def _section(title: str, rows: list[str], empty: str) -> list[str]:
    """A markdown section: its rows, or one line saying there is nothing yet."""
    return ["## " + title, "", *(rows or [empty]), ""]


def memory_markdown(stats: dict[str, Any], active: str, now: float) -> str:
    """SYNAPSE_MEMORY.md: strongest pairs (LTP-tagged), hubs, and what usually comes next.

    A valid document even for an empty or unavailable store.
    """
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now))
    lines = [
        "# Synapse memory",
        "",
        "Associations NeuralMind learned from editing sessions, questions, git history and the",
        f"code structure. Generated {stamp}; regenerate with `neuralmind memory export`.",
        "",
    ]
    if not stats:
        lines += ["The synapse store is unavailable; nothing to report.", ""]
        return "\n".join(lines)
    lines += [
        f"- active namespace: `{active}`",
        f"- synapses: {stats.get('synapses', 0):,} ({stats.get('ltp', 0):,} long-term potentiated)",
        f"- transitions: {stats.get('transitions', 0):,}",
        f"- questions remembered: {stats.get('questions', 0):,}",
        "",
    ]
    lines += _section("Strongest associations", [
        f"- `{p['a']}` <-> `{p['b']}`: {p['weight']:.2f}{' [LTP]' if p.get('ltp') else ''} "
        f"({p['namespace']})" for p in stats.get("top_pairs") or []],
        "No associations learned yet.")
    lines += _section("Hubs", [f"- `{h['node']}`: {h['degree']} connections"
                               for h in stats.get("hubs") or []], "No hubs yet.")
    lines += _section("What typically comes next", [
        f"- after `{t['src']}`: `{t['dst']}` ({t['probability']:.0%})"
        for t in stats.get("top_transitions") or []], "No transitions learned yet.")
    return "\n".join(lines)


def bundle_document(synapses: list[dict[str, Any]], transitions: list[dict[str, Any]],
                    now: float) -> dict[str, Any]:
    """A portable bundle: effective weights at export time, per namespace."""
    return {
        "format": BUNDLE_FORMAT,
        "version": BUNDLE_VERSION,
        "exported": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "ltp_threshold": config.LTP_THRESHOLD,
        "synapses": [{**s, "weight": round(s["weight"], 6)} for s in synapses],
        "transitions": [{**t, "weight": round(t["weight"], 6)} for t in transitions],
    }


def bundle_bytes(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
