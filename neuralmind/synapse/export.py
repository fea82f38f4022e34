"""What the synapse store knows, written out: agent-readable markdown and portable bundles."""

from __future__ import annotations

import json
import time
from typing import Any

from neuralmind import config
from neuralmind.synapse.seeding import BUNDLE_FORMAT, BUNDLE_VERSION


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
        "## Strongest associations",
        "",
    ]
    pairs = stats.get("top_pairs") or []
    if pairs:
        for p in pairs:
            tag = " [LTP]" if p.get("ltp") else ""
            lines.append(f"- `{p['a']}` <-> `{p['b']}`: {p['weight']:.2f}{tag} ({p['namespace']})")
    else:
        lines.append("No associations learned yet.")
    lines += ["", "## Hubs", ""]
    hubs = stats.get("hubs") or []
    if hubs:
        for h in hubs:
            lines.append(f"- `{h['node']}`: {h['degree']} connections")
    else:
        lines.append("No hubs yet.")
    lines += ["", "## What typically comes next", ""]
    trans = stats.get("top_transitions") or []
    if trans:
        for t in trans:
            lines.append(f"- after `{t['src']}`: `{t['dst']}` ({t['probability']:.0%})")
    else:
        lines.append("No transitions learned yet.")
    lines.append("")
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
