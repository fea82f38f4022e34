"""Dreams: consolidation passes over the store, on demand or when the server is idle.

- light: near-duplicate atoms (same type, cosine >= DREAM_DUPLICATE_COSINE; without the
  model, the same words) merge: the newest keeps the others' hubs and code links and
  `supersedes` each of them, so recall shows it alone. Decisions are never merged (each
  carries its own git anchoring).
- rem: associations. Atoms recalled together (their co-activation in the synapse layer's
  `memory` namespace) or about files that are edited together (the learned namespaces)
  get an `about` edge, newer to older, at most DREAM_ASSOCIATIONS_PER_ATOM each.
- deep: each hub with at least DREAM_HUB_MIN_ATOMS atoms is summarised into one
  `consolidates` atom: its best DREAM_SUMMARY_SENTENCES sentences (words shared by many of
  the hub's atoms score high; extractive and deterministic, no language model), linked to
  the atoms they came from; a later dream updates the same summary atom.

Each run appends a dated entry to `.neuralmind/DREAMS.md` saying what it merged, linked and
summarised; the same store at the same time gives the same entry. Dreams never decide
retention: they change no state, rank counts only edges people made, nothing is deleted.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from neuralmind import config
from neuralmind.errors import InvalidArgument
from neuralmind.memory import atoms
from neuralmind.memory.atoms import Atom
from neuralmind.memory.terms import STOP_WORDS, words
from neuralmind.memory.vectors import RECALL_SCOPE

if TYPE_CHECKING:
    from neuralmind.memory.db import MemoryDB
    from neuralmind.synapse.layer import SynapseLayer

log = logging.getLogger("neuralmind.memory")

PHASES = ("light", "rem", "deep")
DREAMS_FILE = "DREAMS.md"
ATOM_NAMESPACE = "memory"          # the synapse namespace of atoms recalled together
ATOM_NODE = "atom:"                # an atom's node id in the synapse layer
SUMMARY_SOURCE = "dream"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")
BLOCK = 1024                       # rows of the similarity matrix computed at a time


@dataclass
class DreamReport:
    phases: list[str]
    at: str
    merged: list[dict[str, str]] = field(default_factory=list)
    linked: list[dict[str, Any]] = field(default_factory=list)
    summarised: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    entry: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"phases": self.phases, "at": self.at, "merged": self.merged,
                "linked": self.linked, "summarised": self.summarised, "notes": self.notes,
                "entry": self.entry}


def phases_of(phase: str | None) -> list[str]:
    p = (phase or "all").strip().lower()
    if p == "all":
        return list(PHASES)
    if p not in PHASES:
        raise InvalidArgument(f"unknown dream phase {phase!r} (expected light, rem, deep or all)")
    return [p]


def dream(store: MemoryDB, phase: str | None = None,
          synapses: SynapseLayer | None = None) -> DreamReport:
    """Run the phases, append the DREAMS.md entry, remember when this store last dreamt."""
    chosen = phases_of(phase)
    now = store.clock.now()
    report = DreamReport(chosen, datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d %H:%M UTC"))
    runs: dict[str, Callable[[], None]] = {
        "light": lambda: _light(store, report),
        "rem": lambda: _rem(store, report, synapses),
        "deep": lambda: _deep(store, report),
    }
    for p in chosen:
        runs[p]()
    report.entry = _entry(store, report)
    with store.write() as conn:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('last_dream', ?)", (repr(now),))
    path = store.path.parent / DREAMS_FILE
    header = "" if path.exists() else "# Dreams\n\nWhat each consolidation pass of the memory did.\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(header + "\n" + report.entry)
    return report


def last_dream(store: MemoryDB) -> float | None:
    row = store.connection().execute("SELECT value FROM meta WHERE key='last_dream'").fetchone()
    return float(row[0]) if row else None


def _recallable(store: MemoryDB, extra: str = "") -> list[Atom]:
    with store.read() as conn:
        return atoms.load(conn, f"a WHERE {RECALL_SCOPE} {extra} ORDER BY a.seq")


# --- light --------------------------------------------------------------------------------------
def _light(store: MemoryDB, report: DreamReport) -> None:
    found = [a for a in _recallable(store) if a.type != "decision"]
    cache = store.vectors
    cache.refresh(store.connection(), store.write, store.generation())
    by_type: dict[str, list[Atom]] = {}
    for a in found:
        by_type.setdefault(a.type, []).append(a)
    groups: list[list[Atom]] = []
    for kind in sorted(by_type):
        members = by_type[kind]
        pairs = (_exact_pairs(members) if cache.unavailable else
                 _close_pairs(cache.rows([a.seq for a in members])))
        groups += _clusters(members, pairs)
    if cache.unavailable:
        report.notes.append("light: no embedding model, only identical texts were merged")
    if not groups:
        return
    now = store.clock.iso()
    with store.write() as conn:
        for group in groups:
            keep = max(group, key=lambda a: a.seq)
            hubs = list(keep.hubs)
            about = list(keep.about)
            for old in sorted((a for a in group if a is not keep), key=lambda a: a.seq):
                hubs += [h for h in old.hubs if h not in hubs]
                about += [t for t in old.about if t not in about]
                conn.execute("INSERT OR IGNORE INTO edges VALUES (?, 'supersedes', 'atom', ?, 0, "
                             "?, ?)", (keep.id, old.id, "dream", now))
                report.merged.append({"kept": keep.id, "kept_label": keep.label,
                                      "superseded": old.id, "superseded_label": old.label})
                store.note("atom", old.id)
            if hubs != keep.hubs or about != keep.about:
                atoms.set_hubs(conn, keep.id, hubs, now)
                atoms.set_about(conn, keep.id, about, now)
                atoms.index_text(conn, store.use_fts, keep.seq, keep.label, hubs, keep.text)
            store.note("atom", keep.id)


def _close_pairs(matrix: np.ndarray) -> list[tuple[int, int]]:
    """Index pairs i < j whose cosine reaches the duplicate threshold (blockwise)."""
    out: list[tuple[int, int]] = []
    n = len(matrix)
    for lo in range(0, n, BLOCK):
        sims = matrix[lo:lo + BLOCK] @ matrix[lo:].T
        rows, cols = np.nonzero(sims >= config.DREAM_DUPLICATE_COSINE)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i, j = lo + r, lo + c
            if i < j:
                out.append((i, j))
    return out


def _exact_pairs(members: list[Atom]) -> list[tuple[int, int]]:
    first: dict[str, int] = {}
    out = []
    for i, a in enumerate(members):
        key = " ".join(words(a.text))
        if key in first:
            out.append((first[key], i))
        else:
            first[key] = i
    return out


def _clusters(members: list[Atom], pairs: list[tuple[int, int]]) -> list[list[Atom]]:
    parent = list(range(len(members)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in pairs:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[Atom]] = {}
    for i, a in enumerate(members):
        groups.setdefault(root(i), []).append(a)
    return [g for _, g in sorted(groups.items()) if len(g) > 1]


# --- rem ----------------------------------------------------------------------------------------
def _rem(store: MemoryDB, report: DreamReport, synapses: SynapseLayer | None) -> None:
    if synapses is None:
        report.notes.append("rem: learning is off, no co-activation to read")
        return
    found = _recallable(store)
    by_id = {a.id: a for a in found}
    weights: dict[tuple[str, str], tuple[float, str]] = {}

    def offer(x: str, y: str, w: float, why: str) -> None:
        if x == y or w < config.DREAM_ASSOCIATION_WEIGHT:
            return
        key = (x, y) if by_id[x].seq > by_id[y].seq else (y, x)      # newer -> older
        if w > weights.get(key, (0.0, ""))[0]:
            weights[key] = (w, why)

    together = synapses.associations([ATOM_NODE + a.id for a in found], [ATOM_NAMESPACE])
    for node, nbrs in together.items():
        for other, w in nbrs.items():
            x, y = node.removeprefix(ATOM_NODE), other.removeprefix(ATOM_NODE)
            if other.startswith(ATOM_NODE) and x in by_id and y in by_id:
                offer(x, y, w, "recalled together")
    about: dict[str, list[str]] = {}
    for a in found:
        for f in dict.fromkeys(t.split("::", 1)[0] for t in a.about):
            about.setdefault(f, []).append(a.id)
    learned = list(dict.fromkeys([synapses.namespace, "personal", "ephemeral"]))
    for f, nbrs in synapses.associations(sorted(about), learned).items():
        for g, w in nbrs.items():
            for x in about.get(f, []):
                for y in about.get(g, []):
                    offer(x, y, w, "about files edited together")
    existing = _atom_edges(store)
    per_atom: Counter[str] = Counter()
    chosen = []
    for (x, y), (w, why) in sorted(weights.items(), key=lambda kv: (-kv[1][0], kv[0])):
        if (x, y) in existing or (y, x) in existing:
            continue
        if per_atom[x] >= config.DREAM_ASSOCIATIONS_PER_ATOM or \
                per_atom[y] >= config.DREAM_ASSOCIATIONS_PER_ATOM:
            continue
        per_atom[x] += 1
        per_atom[y] += 1
        chosen.append((x, y, w, why))
    if not chosen:
        return
    now = store.clock.iso()
    with store.write() as conn:
        for x, y, w, why in chosen:
            conn.execute("INSERT OR IGNORE INTO edges VALUES (?, 'about', 'atom', ?, 0, ?, ?)",
                         (x, y, "dream", now))
            store.note("atom", x)
            report.linked.append({"from": x, "from_label": by_id[x].label, "to": y,
                                  "to_label": by_id[y].label, "weight": round(w, 3), "why": why})


def _atom_edges(store: MemoryDB) -> set[tuple[str, str]]:
    return {(s, d) for s, d in store.connection().execute(
        "SELECT src, dst FROM edges WHERE dst_type = 'atom'")}


# --- deep ---------------------------------------------------------------------------------------
def summary_id(hub: str) -> str:
    return "hub-" + hashlib.sha1(hub.encode("utf-8")).hexdigest()[:12]


def _deep(store: MemoryDB, report: DreamReport) -> None:
    members: dict[str, list[Atom]] = {}
    for a in _recallable(store, f"AND a.source != '{SUMMARY_SOURCE}'"):
        for h in a.hubs:
            members.setdefault(h, []).append(a)
    busy = sorted(h for h, m in members.items() if len(m) >= config.DREAM_HUB_MIN_ATOMS)
    if not busy:
        return
    now = store.clock.iso()
    with store.write() as conn:
        for hub in busy:
            picked = summarise(members[hub])
            sources = list(dict.fromkeys(a.id for a, _ in picked))
            text = " ".join(s for _, s in picked)
            sid = summary_id(hub)
            label = f"Summary of {hub}"
            row = conn.execute("SELECT seq, text FROM atoms WHERE id = ?", (sid,)).fetchone()
            if row is None:
                seq = atoms.insert_row(conn, Atom(
                    id=sid, type="note", label=label, text=text, state="active",
                    author="neuralmind", source=SUMMARY_SOURCE, created_at=now, updated_at=now))
            else:
                seq = int(row[0])
                if row[1] != text:
                    conn.execute("UPDATE atoms SET text = ?, updated_at = ? WHERE id = ?",
                                 (text, now, sid))
            atoms.set_hubs(conn, sid, [hub], now)
            atoms.index_text(conn, store.use_fts, seq, label, [hub], text)
            conn.execute("DELETE FROM edges WHERE src = ? AND kind = 'consolidates'", (sid,))
            conn.executemany("INSERT INTO edges VALUES (?, 'consolidates', 'atom', ?, ?, ?, ?)",
                             [(sid, s, i, "dream", now) for i, s in enumerate(sources)])
            store.note("atom", sid)
            report.summarised.append({"hub": hub, "atoms": len(members[hub]), "summary": sid,
                                      "sources": sources})


def summarise(hub_atoms: list[Atom]) -> list[tuple[Atom, str]]:
    """The hub's best sentences (atom, sentence), best first: a sentence scores the mean
    share of the hub's atoms that contain each of its words (stop words left out), times a
    length factor that prefers informative sentences over fragments."""
    docs = [(a, [s.strip() for s in _SENTENCE.split(" ".join(a.text.split())) if s.strip()])
            for a in hub_atoms]
    df: Counter[str] = Counter()
    for a, _ in docs:
        df.update({w for w in words(a.label + " " + a.text) if w not in STOP_WORDS})
    n = len(hub_atoms)
    scored: list[tuple[float, int, int, Atom, str]] = []
    seen: set[str] = set()
    for a, sentences in docs:
        for pos, s in enumerate(sentences):
            key = " ".join(words(s))
            content = [w for w in words(s) if w not in STOP_WORDS]
            if not content or key in seen:
                continue
            seen.add(key)
            share = sum(df[w] for w in content) / (len(content) * n)
            scored.append((share * math.log1p(len(content)), a.seq, pos, a, s))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    return [(a, s) for _, _, _, a, s in scored[:config.DREAM_SUMMARY_SENTENCES]]


# --- the diary ----------------------------------------------------------------------------------
def _entry(store: MemoryDB, report: DreamReport) -> str:
    lines = [f"## {report.at} — {', '.join(report.phases)}", ""]
    for m in report.merged:
        lines.append(f"- merged: \"{m['kept_label']}\" ({m['kept']}) supersedes "
                     f"\"{m['superseded_label']}\" ({m['superseded']})")
    for link in report.linked:
        lines.append(f"- linked: \"{link['from_label']}\" ({link['from']}) about "
                     f"\"{link['to_label']}\" ({link['to']}): {link['why']}, weight "
                     f"{link['weight']:.2f}")
    for s in report.summarised:
        lines.append(f"- summarised: hub `{s['hub']}` ({s['atoms']} atoms) into {s['summary']}, "
                     f"from {', '.join(s['sources'])}")
    for note in report.notes:
        lines.append(f"- note: {note}")
    if len(lines) == 2:
        lines.append("- nothing to merge, link or summarise")
    return "\n".join(lines) + "\n"
