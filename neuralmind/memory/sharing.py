"""The memory store's side of the team brain (#20): team-visible records out, teammates' in.

With a team store configured, `share(store)` registers `TeamOutbox` as a write hook of
the store's one write path (`MemoryDB.write`), so every write that changes a
team-visible atom appends a `record.put` event to the outbox in memory.db inside the
same transaction (`neuralmind.outbox`): the change and its event land together or not
at all. Team-visible: every decision, and lessons and preferences (directives are
pinned preferences) that are not proposals waiting for their work to survive
(`config.TEAM_MEMORY_TYPES`); notes, facts, open loops and the dreams' summaries stay
personal. What is shared of an atom is its content (for a decision its whole record:
status, anchor, fingerprints, evidence; for a memory its label, text, hubs, code,
pin, links); its rank, feedback counters and recall state are this machine's own use,
and stay here. `forget` of a shared atom is shared as a version saying it is gone.

`team_records` remembers, per shared atom, the version this machine shows and the hash
of its content: a write whose content did not change sends nothing (a rating, rank's
state change, applying a teammate's version), and a local edit names the version it
was made from (`base`), so the team component can tell concurrent edits apart.

`RecordView` is what the team component uses, inside one write transaction of the
store: read the outbox, drop what the mirror took, and apply the current view of
records teammates changed (the fold's winner by event order) into the atom rows.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from neuralmind import config, outbox
from neuralmind.events import bus
from neuralmind.memory import atoms
from neuralmind.memory.atoms import Atom
from neuralmind.memory.db import Change
from neuralmind.memory.decisions.record import Decision
from neuralmind.memory.dreams import SUMMARY_SOURCE

if TYPE_CHECKING:
    from neuralmind.memory.store import MemoryStore

log = logging.getLogger("neuralmind.memory")

DECISION, MEMORY = "decision", "memory"     # the record types of `record.put`
_VIEW_KEY = "team_records_view"             # memory.db meta: which team mirror the atoms show
_TABLE = ("CREATE TABLE IF NOT EXISTS team_records (id TEXT PRIMARY KEY, type TEXT NOT NULL, "
          "author TEXT NOT NULL, seq INTEGER NOT NULL, hash TEXT NOT NULL)")
_NOT_SHARED = ("id", "updated_at")          # a decision's fields that are not its content


def share(store: MemoryStore) -> TeamOutbox:
    """Send the team-visible writes of `store` from now on (once per store)."""
    for hook in store.write_hooks:
        if isinstance(hook, TeamOutbox):
            return hook
    hook = TeamOutbox(store)
    store.add_write_hook(hook)
    return hook


class TeamOutbox:
    """The write hook: a `record.put` event for every team-visible atom whose content
    changed, in the write's own transaction. `on_write` (the server's sync) is told."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.on_write: Callable[[], None] | None = None

    def __call__(self, conn: sqlite3.Connection, changes: list[Change]) -> None:
        sent = False
        for c in changes:
            if c.kind == "atom":
                sent = self._changed(conn, c.id) or sent
            elif c.kind == "deleted":
                sent = self._deleted(conn, c.id) or sent
        if sent and self.on_write is not None:
            try:
                self.on_write()
            except Exception as e:   # waking the sync never fails a memory write
                log.warning("could not wake the team sync: %s", e)

    def _changed(self, conn: sqlite3.Connection, atom_id: str) -> bool:
        found = record_of(self.store, conn, atom_id)
        return found is not None and _send(conn, found[0], atom_id, found[1],
                                           self.store.clock.now())

    def _deleted(self, conn: sqlite3.Connection, atom_id: str) -> bool:
        shown = _shown(conn, atom_id)
        if shown is None:       # never shared: its forgetting is nobody else's business
            return False
        return _send(conn, shown[0], atom_id, {"deleted": True}, self.store.clock.now())


def record_of(store: MemoryStore, conn: sqlite3.Connection, atom_id: str,
              ) -> tuple[str, dict[str, Any]] | None:
    """(record type, content) of a team-visible atom; None for a personal one or none."""
    found = atoms.load(conn, "WHERE id = ?", (atom_id,))
    if not found:
        return None
    a = found[0]
    if a.type == "decision":
        loaded = store.load(conn, "WHERE id = ?", (atom_id,))
        if not loaded:
            return None
        body = {k: v for k, v in loaded[0].to_json().items() if k not in _NOT_SHARED}
        return DECISION, body | {"links": _links(conn, atom_id)}
    if (a.type not in config.TEAM_MEMORY_TYPES or a.state == "proposed"
            or a.source == SUMMARY_SOURCE):
        return None
    return MEMORY, {"type": a.type, "label": a.label, "text": a.text, "hubs": a.hubs,
                    "about": a.about, "pinned": a.pinned, "closed_at": a.closed_at,
                    "author": a.author, "source": a.source, "created_at": a.created_at,
                    "links": _links(conn, atom_id)}


def _links(conn: sqlite3.Connection, atom_id: str) -> list[list[str]]:
    """A person's typed links to other team-visible atoms (a dream's are this machine's)."""
    marks = ",".join("?" * len(config.TEAM_MEMORY_TYPES))
    return [[k, d] for k, d in conn.execute(
        "SELECT e.kind, e.dst FROM edges e JOIN atoms t ON t.id = e.dst WHERE e.src = ? AND "
        f"e.dst_type = 'atom' AND e.origin = 'user' AND t.type IN ({marks}) "
        "ORDER BY e.ord, e.kind, e.dst", (atom_id, *config.TEAM_MEMORY_TYPES))]


def _digest(record: dict[str, Any]) -> str:
    return hashlib.sha256(outbox.encode(record).encode("utf-8")).hexdigest()


def _shown(conn: sqlite3.Connection, atom_id: str) -> tuple[str, str, int, str] | None:
    """(type, author, seq, hash) of the version this machine shows, if it was shared."""
    if not _installed(conn):
        return None
    row = conn.execute("SELECT type, author, seq, hash FROM team_records WHERE id = ?",
                       (atom_id,)).fetchone()
    return (str(row[0]), str(row[1]), int(row[2]), str(row[3])) if row else None


def _installed(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                        "name = 'team_records'").fetchone() is not None


def _send(conn: sqlite3.Connection, rtype: str, atom_id: str, record: dict[str, Any],
          now: float) -> bool:
    """Queue a new version unless this machine already shows exactly this content."""
    digest = _digest(record)
    shown = _shown(conn, atom_id)
    if shown is not None and shown[3] == digest:
        return False
    author = outbox.install(conn)
    conn.execute(_TABLE)
    base = [shown[1], shown[2]] if shown else None
    seq = outbox.append(conn, outbox.RECORD, {"ts": now, "type": rtype, "id": atom_id,
                                              "record": record, "base": base}, now)
    _remember(conn, atom_id, rtype, author, seq, digest)
    return True


def _remember(conn: sqlite3.Connection, atom_id: str, rtype: str, author: str, seq: int,
              digest: str) -> None:
    conn.execute("INSERT OR REPLACE INTO team_records VALUES (?, ?, ?, ?, ?)",
                 (atom_id, rtype, author, seq, digest))


def exchange_needed(store: MemoryStore, mirror: str) -> bool:
    """Whether the team sync has something to collect from `store`, or it shows another
    mirror (a read: most rounds have neither, and need no write transaction)."""
    try:
        with store.read() as conn:
            return RecordView(store, conn).exchange_needed(mirror)
    except sqlite3.Error:
        return True          # the exchange's own transaction says what is wrong


@contextlib.contextmanager
def record_view(store: MemoryStore) -> Iterator[RecordView]:
    """The team component's exchange with `store`, in one write transaction of it; once it
    commits, the event bus hears of every teammate's version applied (the observatory's
    Decisions and Memory views reload, as for a local write)."""
    with store.write() as conn:
        view = RecordView(store, conn)
        yield view
    view.announce()


class RecordView(outbox.OutboxView):
    """Outbox out, teammates' versions in, inside one write transaction of the store."""

    view_key = _VIEW_KEY

    def __init__(self, store: MemoryStore, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self.store = store
        self._applied: list[tuple[str, str, dict[str, Any]]] = []   # for `announce`

    def announce(self) -> None:
        """Publish what was applied (after the transaction committed: never a version the
        store does not hold); nothing is built when nobody listens."""
        applied, self._applied = self._applied, []
        if not bus.active:
            return
        for rtype, atom_id, record in applied:
            change = "deleted" if record.get("deleted") else "team"
            if rtype == DECISION:
                bus.publish("decision", change=change, id=atom_id,
                            title=str(record.get("title", "")),
                            status=str(record.get("status", "")),
                            files=list(record.get("files_affected") or []))
            else:
                files = list(dict.fromkeys(str(t).partition("::")[0]
                                           for t in record.get("about") or []))
                bus.publish("memory", change=change, id=atom_id,
                            label=str(record.get("label", "")),
                            type=str(record.get("type", "")), files=files)

    # --- a version in -------------------------------------------------------------------------
    def apply(self, rtype: str, atom_id: str, author: str, seq: int,
              record: dict[str, Any]) -> bool:
        """Make the atom show this version (the current view of the record); whether its
        rows changed. The version is remembered with the hash of what the atom now holds,
        so the write hook sees no change of content and sends nothing back."""
        shown = _shown(self.conn, atom_id)
        if shown is not None and (shown[1], shown[2]) == (author, seq):
            return False          # already shown (our own edit, or applied before)
        row = self.conn.execute("SELECT type FROM atoms WHERE id = ?", (atom_id,)).fetchone()
        kind = "decision" if rtype == DECISION else str(record.get("type", ""))
        if row is not None and row[0] != kind and not record.get("deleted"):
            log.warning("team record %s/%s is a %s here and a %s in the team's: not applied",
                        rtype, atom_id, row[0], kind)
            return False
        self.conn.execute("SAVEPOINT team_apply")   # a malformed version leaves no trace
        try:
            if record.get("deleted"):
                if row is not None:
                    atoms.delete_rows(self.conn, self.store.use_fts, atom_id)
                    self.store.note("deleted", atom_id)
                digest = _digest({"deleted": True})
            else:
                if rtype == DECISION:
                    self._decision(atom_id, record, exists=row is not None)
                else:
                    self._memory(atom_id, record, exists=row is not None)
                self._link(atom_id, record.get("links") or [])
                self.store.note("atom", atom_id)
                now_shown = record_of(self.store, self.conn, atom_id)
                digest = _digest(now_shown[1]) if now_shown else _digest(record)
        except (KeyError, TypeError, ValueError) as e:
            self.conn.execute("ROLLBACK TO team_apply")
            self.conn.execute("RELEASE team_apply")
            log.warning("team record %s/%s by %s is malformed and not applied: %s", rtype,
                        atom_id, author, e)
            return False
        self.conn.execute("RELEASE team_apply")
        self.conn.execute(_TABLE)
        _remember(self.conn, atom_id, rtype, author, seq, digest)
        self._applied.append((rtype, atom_id, record))
        return True

    def _decision(self, atom_id: str, record: dict[str, Any], exists: bool) -> None:
        d = Decision.from_json(record | {"id": atom_id})
        now = self.store.clock.iso()
        if exists:
            self.store.save(self.conn, d)
            return
        d.updated_at = now
        seq = atoms.insert_row(self.conn, Atom(
            id=atom_id, type="decision", label=d.title, text=d.rationale, state="active",
            author=d.author, source="team", created_at=d.created_at, updated_at=now))
        self.conn.execute("INSERT INTO decision_records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                          (d.id, d.decision_type, d.status, d.commit_sha,
                           *self.store._record_values(d)))
        self.store._links(self.conn, seq, d, now)

    def _memory(self, atom_id: str, record: dict[str, Any], exists: bool) -> None:
        now = self.store.clock.iso()
        hubs = [str(h) for h in record.get("hubs") or []]
        about = [str(t) for t in record.get("about") or []]
        label, text = str(record["label"]), str(record["text"])
        if exists:
            self.conn.execute("UPDATE atoms SET label = ?, text = ?, pinned = ?, closed_at = ?, "
                              "updated_at = ? WHERE id = ?",
                              (label, text, int(bool(record.get("pinned"))),
                               record.get("closed_at"), now, atom_id))
            seq = int(self.conn.execute("SELECT seq FROM atoms WHERE id = ?",
                                        (atom_id,)).fetchone()[0])
        else:
            seq = atoms.insert_row(self.conn, Atom(
                id=atom_id, type=atoms.check_type(str(record["type"])), label=label, text=text,
                pinned=bool(record.get("pinned")), author=str(record.get("author", "")),
                source=str(record.get("source", "team")), closed_at=record.get("closed_at"),
                created_at=str(record.get("created_at") or now), updated_at=now))
        atoms.set_hubs(self.conn, atom_id, hubs, now)
        atoms.set_about(self.conn, atom_id, about, now)
        atoms.index_text(self.conn, self.store.use_fts, seq, label, hubs, text)

    def _link(self, atom_id: str, links: list[Any]) -> None:
        """A person's links from this atom (added; a link is never taken away here)."""
        for i, (kind, dst) in enumerate(links):
            self.conn.execute("INSERT OR IGNORE INTO edges VALUES (?, ?, 'atom', ?, ?, 'user', ?)",
                              (atom_id, atoms.check_kind(kind), str(dst), i,
                               self.store.clock.iso()))
