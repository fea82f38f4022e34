"""The atom: one memory (a decision, lesson, preference, fact, note or open loop), and the
rows it is stored in: `atoms`, its hubs (`atom_hubs`), its typed edges (`edges`) and its
full-text row (`atoms_fts`). Decisions are atoms too (memory/decisions/db.py writes their
atom rows through these functions, and their own fields beside them).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from neuralmind.errors import InvalidArgument, NotFound
from neuralmind.events import bus

TYPES = ("decision", "lesson", "preference", "fact", "note", "open_loop")
STATES = ("proposed", "active", "ignored", "archived", "rejected")
RECALLABLE = ("proposed", "active")          # forgotten atoms are never candidates
FORGOTTEN = ("ignored", "archived", "rejected")
EDGE_KINDS = ("supersedes", "derived_from", "caused_by", "consolidates", "about")
VERDICTS = ("used", "useful", "noise")


@dataclass(slots=True)
class Atom:
    """One memory. `about` lists the code it is about: repo-relative files and
    `path::Qualified.name` symbols; `links` its typed edges to other atoms."""

    id: str
    type: str
    label: str
    text: str
    state: str = "active"
    pinned: bool = False
    hubs: list[str] = field(default_factory=list)
    about: list[str] = field(default_factory=list)
    links: list[dict[str, str]] = field(default_factory=list)    # {"kind", "id"}
    author: str = ""
    source: str = ""
    created_at: str = ""
    updated_at: str = ""
    useful_at: str | None = None
    closed_at: str | None = None
    served: int = 0
    used: int = 0
    useful: int = 0
    noise: int = 0
    proposed_head: str | None = None
    seq: int = 0

    @property
    def exposure(self) -> int:
        """Times served plus three times each verdict (interacting weighs more than seeing)."""
        return self.served + 3 * (self.used + self.useful + self.noise)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("seq")
        out["exposure"] = self.exposure
        return out


def publish_change(change: str, a: Atom, **extra: Any) -> None:
    """Tell the event bus an atom changed (`remember`, `rate`, `state`; the observatory
    pulses the files it is about and reloads its Memory view). Nothing is built when
    nobody listens."""
    if not bus.active:
        return
    files = list(dict.fromkeys(t.partition("::")[0] for t in a.about))
    bus.publish("memory", change=change, id=a.id, label=a.label, type=a.type, state=a.state,
                files=files, **extra)


def check_type(value: str | None) -> str:
    t = (value or "").strip().lower().replace("-", "_")
    if t not in TYPES:
        raise InvalidArgument(f"unknown atom type {value!r} (expected one of {', '.join(TYPES)})")
    return t


def check_kind(value: str | None) -> str:
    k = (value or "").strip().lower().replace("-", "_")
    if k not in EDGE_KINDS:
        raise InvalidArgument(f"unknown edge kind {value!r} (expected one of "
                              f"{', '.join(EDGE_KINDS)})")
    return k


def check_verdict(value: str | None) -> str:
    v = (value or "").strip().lower()
    if v not in VERDICTS:
        raise InvalidArgument(f"unknown verdict {value!r} (expected one of {', '.join(VERDICTS)})")
    return v


def target_type(target: str) -> str:
    """`symbol` for `path::Qualified.name`, else `file`."""
    return "symbol" if "::" in target else "file"


# --- rows -------------------------------------------------------------------------------------
ATOM_COLUMNS = ("seq", "id", "type", "label", "text", "state", "pinned", "author", "source",
                "created_at", "updated_at", "useful_at", "closed_at", "served", "used",
                "useful", "noise", "proposed_head")


def insert_row(conn: sqlite3.Connection, a: Atom) -> int:
    """Insert the atom's own row; returns its seq."""
    cur = conn.execute(
        "INSERT INTO atoms (id, type, label, text, state, pinned, author, source, created_at, "
        "updated_at, useful_at, closed_at, served, used, useful, noise, proposed_head) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (a.id, a.type, a.label, a.text, a.state, int(a.pinned), a.author, a.source, a.created_at,
         a.updated_at, a.useful_at, a.closed_at, a.served, a.used, a.useful, a.noise,
         a.proposed_head))
    return int(cur.lastrowid or 0)


def set_hubs(conn: sqlite3.Connection, atom_id: str, hubs: list[str], now: str) -> None:
    """Replace the atom's hubs (in order); unknown hubs are created."""
    conn.execute("DELETE FROM atom_hubs WHERE atom_id = ?", (atom_id,))
    conn.executemany("INSERT OR IGNORE INTO hubs (name, created_at) VALUES (?, ?)",
                     [(h, now) for h in hubs])
    conn.executemany("INSERT INTO atom_hubs VALUES (?, ?, ?)",
                     [(atom_id, h, i) for i, h in enumerate(hubs)])


def set_about(conn: sqlite3.Connection, atom_id: str, targets: list[str], now: str,
              origin: str = "user") -> None:
    """Replace the atom's `about` edges to code (in order)."""
    conn.execute("DELETE FROM edges WHERE src = ? AND kind = 'about' AND dst_type != 'atom'",
                 (atom_id,))
    conn.executemany("INSERT OR IGNORE INTO edges VALUES (?, 'about', ?, ?, ?, ?, ?)",
                     [(atom_id, target_type(t), t, i, origin, now)
                      for i, t in enumerate(targets)])


def index_text(conn: sqlite3.Connection, use_fts: bool, seq: int, label: str, hubs: list[str],
               text: str) -> None:
    """The atom's full-text row (label, hubs, text), or mark the index for a rebuild."""
    if use_fts:
        conn.execute("DELETE FROM atoms_fts WHERE rowid = ?", (seq,))
        conn.execute("INSERT INTO atoms_fts(rowid, label, hubs, text) VALUES (?, ?, ?, ?)",
                     (seq, label, " ".join(hubs), text))
    else:  # an FTS-capable process re-indexes on its next open
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('fts_dirty', '1')")


def delete_rows(conn: sqlite3.Connection, use_fts: bool, atom_id: str) -> None:
    """Every row of one atom, and every edge pointing at it."""
    row = conn.execute("SELECT seq FROM atoms WHERE id = ?", (atom_id,)).fetchone()
    if row is not None and use_fts:
        conn.execute("DELETE FROM atoms_fts WHERE rowid = ?", (row[0],))
    elif row is not None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('fts_dirty', '1')")
    for sql in ("DELETE FROM atoms WHERE id = ?", "DELETE FROM atom_hubs WHERE atom_id = ?",
                "DELETE FROM edges WHERE src = ?",
                "DELETE FROM edges WHERE dst_type = 'atom' AND dst = ?",
                "DELETE FROM decision_records WHERE atom_id = ?",
                "DELETE FROM decision_fingerprints WHERE decision_id = ?",
                "DELETE FROM atom_vectors WHERE atom_id = ?", "DELETE FROM pending WHERE atom_id = ?"):
        conn.execute(sql, (atom_id,))


def _chunks(ids: list[str], n: int = 500) -> Iterable[list[str]]:
    for i in range(0, len(ids), n):
        yield ids[i:i + n]


def links_of(conn: sqlite3.Connection, ids: list[str]
             ) -> tuple[dict[str, list[str]], dict[str, list[tuple[str, str]]], dict[str, list[dict[str, str]]]]:
    """For `ids`: their hubs, their `about` targets as (type, target), their atom edges."""
    hubs: dict[str, list[str]] = {}
    about: dict[str, list[tuple[str, str]]] = {}
    links: dict[str, list[dict[str, str]]] = {}
    for chunk in _chunks(ids):
        marks = ",".join("?" * len(chunk))
        for atom_id, hub in conn.execute(
                f"SELECT atom_id, hub FROM atom_hubs WHERE atom_id IN ({marks}) ORDER BY atom_id, ord",
                chunk):
            hubs.setdefault(atom_id, []).append(hub)
        for src, kind, dst_type, dst in conn.execute(
                f"SELECT src, kind, dst_type, dst FROM edges WHERE src IN ({marks}) "
                "ORDER BY src, dst_type = 'atom', ord, kind, dst", chunk):
            if dst_type == "atom":
                links.setdefault(src, []).append({"kind": kind, "id": dst})
            elif kind == "about":
                about.setdefault(src, []).append((dst_type, dst))
    return hubs, about, links


def edge_counts(conn: sqlite3.Connection, ids: list[str]) -> dict[str, int]:
    """Typed edges people made (not dreams) touching each atom, in or out, code included:
    what rank's connectedness counts."""
    out: dict[str, int] = {}
    for chunk in _chunks(ids):
        marks = ",".join("?" * len(chunk))
        for sql in (f"SELECT src, count(*) FROM edges WHERE origin = 'user' AND src IN ({marks}) "
                    "GROUP BY src",
                    f"SELECT dst, count(*) FROM edges WHERE origin = 'user' AND dst_type = 'atom' "
                    f"AND dst IN ({marks}) GROUP BY dst"):
            for atom_id, n in conn.execute(sql, chunk):
                out[atom_id] = out.get(atom_id, 0) + int(n)
    return out


def load(conn: sqlite3.Connection, where: str = "", params: tuple[Any, ...] = (),
         edges: bool = True) -> list[Atom]:
    """Atoms matching a SQL tail (`WHERE ... ORDER BY ...`), with hubs, about and links
    (`edges` False: hubs only, for scoring many candidates; `attach_edges` adds the rest)."""
    rows = conn.execute(f"SELECT {', '.join(ATOM_COLUMNS)} FROM atoms {where}", params).fetchall()
    if not rows:
        return []
    out = []
    for r in rows:
        values = dict(zip(ATOM_COLUMNS, r, strict=True))
        values["pinned"] = bool(values["pinned"])
        out.append(Atom(**values))
    if edges:
        attach_edges(conn, out)
    else:
        hubs: dict[str, list[str]] = {}
        for chunk in _chunks([a.id for a in out]):
            for atom_id, hub in conn.execute(
                    f"SELECT atom_id, hub FROM atom_hubs WHERE atom_id IN ({','.join('?' * len(chunk))}) "
                    "ORDER BY atom_id, ord", chunk):
                hubs.setdefault(atom_id, []).append(hub)
        for a in out:
            a.hubs = hubs.get(a.id, [])
    return out


def attach_edges(conn: sqlite3.Connection, found: list[Atom]) -> None:
    """Fill in the hubs, `about` targets and atom links of `found`."""
    hubs, about, links = links_of(conn, [a.id for a in found])
    for a in found:
        a.hubs = hubs.get(a.id, [])
        a.about = [t for _, t in about.get(a.id, [])]
        a.links = links.get(a.id, [])


def synonyms(raw: str) -> list[str]:
    try:
        value = json.loads(raw)
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


class AtomNotFound(NotFound, KeyError):
    """No atom has that id (or the prefix is ambiguous)."""

    def __str__(self) -> str:
        return str(self.args[0])


def resolve(conn: sqlite3.Connection, id_or_prefix: str) -> str:
    """The full id for an atom id or a unique prefix of one (at least 4 characters)."""
    key = (id_or_prefix or "").strip()
    if conn.execute("SELECT 1 FROM atoms WHERE id = ?", (key,)).fetchone():
        return key
    if len(key) >= 4:
        pattern = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = conn.execute("SELECT id FROM atoms WHERE id LIKE ? ESCAPE '\\' LIMIT 2",
                            (pattern,)).fetchall()
        if len(rows) == 1:
            return str(rows[0][0])
        if len(rows) > 1:
            raise AtomNotFound(f"memory id prefix {key!r} is ambiguous")
    raise AtomNotFound(f"no memory with id {key!r}")
