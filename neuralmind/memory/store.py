"""MemoryStore: the engine API of memory over `memory.db` in the learned folder
(repo/learned.py: shared by the repository's worktrees; `<root>/.neuralmind/` outside git).

One store: decisions are atoms of type `decision` (the `DecisionStore` methods it
inherits keep doing everything they did), and every other memory (lessons, preferences,
facts, notes, open loops) lives beside them with the same hubs, edges, recall, rank,
feedback, promotion and dreams. Each operation the CLI, the LSP server and the MCP
server offer on memory is a method here (thin: the behaviour lives in the modules it
calls); results are `Atom` records or small reports with a `to_json()`.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import uuid
from typing import TYPE_CHECKING, Any

from neuralmind.errors import EngineError, InvalidArgument
from neuralmind.events import publish
from neuralmind.memory import atoms, dreams, pending, promotion, rank
from neuralmind.memory import directives as directive_block
from neuralmind.memory import hubs as topics
from neuralmind.memory import recall as recall_module
from neuralmind.memory import wakeup as wakeup_module
from neuralmind.memory.atoms import Atom, check_kind, check_type, check_verdict
from neuralmind.memory.decisions.record import clean_list, normalise_path, normalise_symbol
from neuralmind.memory.decisions.store import AUTHOR_ENV, DecisionStore, user_name
from neuralmind.memory.git import GitError

if TYPE_CHECKING:
    from neuralmind.memory.recall import CodeHit, RecallResult
    from neuralmind.synapse.layer import SynapseLayer

log = logging.getLogger("neuralmind.memory")

MAX_LABEL_CHARS = 300
MAX_TEXT_CHARS = 20_000
LABEL_FROM_TEXT = 80          # a label derived from the text: its first sentence, clipped


class MemoryStore(DecisionStore):
    """Every memory of one project: remember, recall, rate, pin, link, forget, dream."""

    # --- writing ------------------------------------------------------------------------
    def remember(self, text: str, atom_type: str = "note", label: str | None = None,
                 hubs: list[str] | None = None, about: list[str] | None = None,
                 source: str = "cli", author: str | None = None, proposed: bool = False) -> Atom:
        """Store a new atom. `proposed` (an agent's memory) waits for its work to survive
        (promotion.py) with the HEAD of now; `about` names files or `path::Qualified.name`
        symbols. A `decision` is recorded as one (title = label, rationale = text)."""
        kind = check_type(atom_type)
        body = (text or "").strip()
        if not body:
            raise InvalidArgument("a memory needs a text")
        if len(body) > MAX_TEXT_CHARS:
            raise InvalidArgument(f"a memory's text is at most {MAX_TEXT_CHARS:,} characters")
        title = " ".join((label or "").split()) or _label_from(body)
        if len(title) > MAX_LABEL_CHARS:
            raise InvalidArgument(f"a label is at most {MAX_LABEL_CHARS} characters")
        names = list(dict.fromkeys(topics.check_name(h) for h in clean_list(hubs)))
        targets = self._targets(about)
        if kind == "decision":
            d = self.record(title, body, files=[t for t in targets if "::" not in t],
                            symbols=[t for t in targets if "::" in t], tags=names,
                            author=author, source=source)
            return self.atom(d.id)
        now = self.clock.iso()
        a = Atom(id=uuid.uuid4().hex[:16], type=kind, label=title, text=body,
                 state="proposed" if proposed else "active", hubs=names, about=targets,
                 author=author or os.environ.get(AUTHOR_ENV) or user_name(), source=source,
                 created_at=now, updated_at=now, proposed_head=self._head() if proposed else None)
        with self.write() as conn:
            a.seq = atoms.insert_row(conn, a)
            atoms.set_hubs(conn, a.id, names, now)
            atoms.set_about(conn, a.id, targets, now)
            atoms.index_text(conn, self.use_fts, a.seq, a.label, names, a.text)
            self.note("atom", a.id)
        log.info("remembered %s %s: %s", kind, a.id, a.label)
        atoms.publish_change("remember", a)
        return a

    def link(self, src: str, kind: str, dst: str) -> dict[str, str]:
        """A typed edge from atom `src` to atom `dst` (`about` may also point at a file or a
        `path::Qualified.name` symbol)."""
        k = check_kind(kind)
        conn = self.connection()
        source = atoms.resolve(conn, src)
        try:
            target, dst_type = atoms.resolve(conn, dst), "atom"
        except atoms.AtomNotFound:
            if k != "about":
                raise
            target = self._targets([dst])[0]
            dst_type = atoms.target_type(target)
        if dst_type == "atom" and target == source:
            raise InvalidArgument("an atom cannot be linked to itself")
        with self.write() as wconn:
            order = wconn.execute("SELECT count(*) FROM edges WHERE src = ?", (source,)).fetchone()[0]
            wconn.execute("INSERT OR IGNORE INTO edges VALUES (?, ?, ?, ?, ?, 'user', ?)",
                          (source, k, dst_type, target, order, self.clock.iso()))
            self.note("atom", source)
            if dst_type == "atom":
                self.note("atom", target)
        return {"src": source, "kind": k, "dst": target, "dst_type": dst_type}

    def pin(self, atom_id: str, on: bool = True) -> Atom:
        """Make a preference a standing directive (or stop)."""
        a = self.atom(atom_id)
        if a.type != "preference":
            raise InvalidArgument(f"only preferences can be pinned as directives; {a.id} is a "
                                  f"{a.type}")
        return self._update(a.id, "UPDATE atoms SET pinned = ?, updated_at = ? WHERE id = ?",
                            (int(on), self.clock.iso(), a.id))

    def forget(self, atom_id: str) -> Atom:
        """Delete an atom and every edge to or from it: the only way anything is deleted."""
        a = self.atom(atom_id)
        with self.write() as conn:
            atoms.delete_rows(conn, self.use_fts, a.id)
            self.note("deleted", a.id)
        atoms.publish_change("state", a, deleted=True)
        log.info("forgot %s %s: %s", a.type, a.id, a.label)
        return a

    def restore_atom(self, atom_id: str) -> Atom:
        """Bring an ignored, archived or rejected atom back: active, noise verdicts cleared
        (they are kept in the ratings log), and counted as useful from now for decay."""
        a = self.atom(atom_id)
        if a.state in ("active", "proposed"):
            return a
        now = self.clock.iso()
        return self._update(a.id, "UPDATE atoms SET state = 'active', noise = 0, useful_at = ?, "
                                  "updated_at = ? WHERE id = ?", (now, now, a.id))

    def accept(self, atom_id: str) -> Atom:
        """A person accepts a proposed (or rejected) atom: it is active."""
        a = self.atom(atom_id)
        if a.state not in ("proposed", "rejected"):
            raise InvalidArgument(f"{a.id} is {a.state}, not proposed")
        return self._judge(a, "active", "accepted")

    def reject(self, atom_id: str) -> Atom:
        """A person rejects a proposed atom: never recalled, kept (restore brings it back)."""
        a = self.atom(atom_id)
        if a.state != "proposed":
            raise InvalidArgument(f"{a.id} is {a.state}, not proposed")
        return self._judge(a, "rejected", "rejected")

    def close(self, atom_id: str) -> Atom:
        """Close an open loop (it leaves the wake-up pack)."""
        a = self.atom(atom_id)
        if a.type != "open_loop":
            raise InvalidArgument(f"only open loops can be closed; {a.id} is a {a.type}")
        now = self.clock.iso()
        return self._update(a.id, "UPDATE atoms SET closed_at = ?, updated_at = ? WHERE id = ?",
                            (now, now, a.id))

    def hub(self, name: str, synonyms: list[str] | None = None) -> dict[str, Any]:
        """A hub with its synonyms and size; `synonyms` replaces them."""
        hub_name = topics.check_name(name)
        if synonyms is not None:
            with self.write() as conn:
                topics.set_synonyms(conn, hub_name, synonyms, self.clock.iso())
                self.note("hub", hub_name)
        conn = self.connection()
        row = conn.execute("SELECT synonyms FROM hubs WHERE name = ?", (hub_name,)).fetchone()
        if row is None:
            raise atoms.AtomNotFound(f"no hub named {hub_name!r}")
        count = conn.execute("SELECT count(*) FROM atom_hubs WHERE hub = ?", (hub_name,)).fetchone()[0]
        return {"hub": hub_name, "synonyms": atoms.synonyms(row[0]), "atoms": int(count)}

    # --- feedback -----------------------------------------------------------------------
    def rate(self, atom_id: str, verdict: str, session: str = "") -> dict[str, Any]:
        """A verdict on an atom: its feedback, its rank, maybe its state; clears it from
        every session's pending list."""
        v = check_verdict(verdict)
        conn = self.connection()
        full = atoms.resolve(conn, atom_id)
        now = self.clock.iso()
        with self.write() as wconn:
            wconn.execute(f"UPDATE atoms SET {v} = {v} + 1 WHERE id = ?", (full,))
            if v == "useful":
                wconn.execute("UPDATE atoms SET useful_at = ? WHERE id = ?", (now, full))
            wconn.execute("INSERT INTO ratings VALUES (?, ?, ?, ?)", (full, v, session or "", now))
            wconn.execute("DELETE FROM pending WHERE atom_id = ?", (full,))
            a = atoms.load(wconn, "WHERE id = ?", (full,))[0]
            r = rank.rank(a, atoms.edge_counts(wconn, [full]).get(full, 0), self.clock.now())
            state = rank.state_for(a, r)
            if state != a.state:
                wconn.execute("UPDATE atoms SET state = ?, updated_at = ? WHERE id = ?",
                              (state, now, full))
                a.state = state
                self.note("atom", full)
            self.note("feedback", full)
        atoms.publish_change("rate", a, verdict=v)
        return {"atom": a.to_json(), "verdict": v, "rank": round(r, 4), "state": a.state}

    def pending(self, session: str) -> list[dict[str, Any]]:
        return pending.of_session(self, session)

    def pushed(self, ids: list[str]) -> None:
        """`ids` were pushed into an agent's context by a hook: exposure (served), not
        pending (the agent did not ask, so a push never withholds its next recall). A busy
        or read-only store skips the count: the push matters more than its bookkeeping."""
        if not ids:
            return
        try:
            with self.write() as conn:
                pending.count_served(self, conn, ids)
        except (sqlite3.Error, EngineError) as e:
            log.info("hook push not counted as served: %s", e)

    # --- reading ------------------------------------------------------------------------
    def atom(self, atom_id: str) -> Atom:
        """The full atom for an id or a unique prefix; AtomNotFound when there is none."""
        with self.read() as conn:
            full = atoms.resolve(conn, atom_id)
            return atoms.load(conn, "WHERE id = ?", (full,))[0]

    def atom_json(self, atom_id: str) -> dict[str, Any]:
        """The atom, with its decision record when it is a decision."""
        a = self.atom(atom_id)
        out = a.to_json()
        if a.type == "decision":
            out["decision"] = self.get(a.id).to_json()
        return out

    def atoms_about(self, targets: list[str], states: tuple[str, ...] = ("active", "proposed")
                    ) -> list[Atom]:
        """Atoms with an `about` edge to any of `targets` (files or symbols)."""
        if not targets:
            return []
        marks = ",".join("?" * len(targets))
        state_marks = ",".join("?" * len(states))
        with self.read() as conn:
            return atoms.load(conn, f"WHERE state IN ({state_marks}) AND id IN (SELECT src FROM "
                                    f"edges WHERE kind = 'about' AND dst IN ({marks})) ORDER BY seq",
                              (*states, *targets))

    def recall(self, question: str, budget: int | None = None,
               code_hits: list[CodeHit] | None = None, session: str | None = None,
               record: bool = True) -> RecallResult:
        return recall_module.recall(self, question, budget, code_hits, session, record)

    def directives(self, max_lines: int, max_chars: int) -> directive_block.Directives:
        return directive_block.render(directive_block.pinned(self), max_lines, max_chars)

    def ranked(self, exclude_types: tuple[str, ...] = ("decision",)
               ) -> list[tuple[Atom, float]]:
        """Every atom (of any state) with its rank now, in creation order: what the
        observatory's Memory view lists. Decisions are left out by default (their own
        view shows them by status)."""
        marks = ",".join("?" * len(exclude_types)) or "''"
        with self.read() as conn:
            found = atoms.load(conn, f"WHERE type NOT IN ({marks}) ORDER BY seq", exclude_types)
            edges = atoms.edge_counts(conn, [a.id for a in found])
        now = self.clock.now()
        return [(a, rank.rank(a, edges.get(a.id, 0), now)) for a in found]

    def inbox(self) -> list[dict[str, Any]]:
        """Proposed atoms waiting for their work to survive or for a person."""
        with self.read() as conn:
            found = atoms.load(conn, "WHERE state = 'proposed' ORDER BY seq")
        return [{"id": a.id, "type": a.type, "label": a.label, "text": a.text,
                 "about": a.about, "created_at": a.created_at, "source": a.source,
                 "proposed_head": a.proposed_head} for a in found]

    def wakeup_block(self, budget: int, max_lines: int, max_chars: int
                     ) -> wakeup_module.WakeupMemory:
        return wakeup_module.block(self, budget, max_lines, max_chars)

    def stats(self) -> dict[str, Any]:
        conn = self.connection()
        by_type: dict[str, dict[str, int]] = {}
        for kind, state, n in conn.execute("SELECT type, state, count(*) FROM atoms GROUP BY 1, 2"):
            by_type.setdefault(kind, {})[state] = int(n)
        edges = dict(conn.execute("SELECT kind, count(*) FROM edges GROUP BY kind").fetchall())
        return {
            "path": str(self.path), "atoms": sum(sum(s.values()) for s in by_type.values()),
            "by_type": by_type,
            "pinned": conn.execute("SELECT count(*) FROM atoms WHERE pinned = 1").fetchone()[0],
            "hubs": conn.execute("SELECT count(*) FROM hubs").fetchone()[0],
            "edges": edges,
            "pending": conn.execute("SELECT count(*) FROM pending").fetchone()[0],
            "ratings": conn.execute("SELECT count(*) FROM ratings").fetchone()[0],
            "last_dream": dreams.last_dream(self),
            "fts": self.use_fts,
        }

    # --- promotion and dreams -------------------------------------------------------------
    def review_proposals(self) -> promotion.PromotionReport:
        """Promote or reject proposed atoms now that HEAD moved (promotion.py)."""
        report = promotion.review(self)
        for atom_id in (*report.promoted, *report.rejected):
            atoms.publish_change("state", self.atom(atom_id), by="git")
        return report

    def dream(self, phase: str | None = None,
              synapses: SynapseLayer | None = None) -> dreams.DreamReport:
        report = dreams.dream(self, phase, synapses)
        publish("memory", change="dream", id=report.at, label=f"{', '.join(report.phases)} dream",
                files=[], merged=len(report.merged), linked=len(report.linked),
                summarised=len(report.summarised))
        return report

    # --- helpers --------------------------------------------------------------------------
    def _targets(self, about: list[str] | None) -> list[str]:
        out: list[str] = []
        for raw in clean_list(about):
            t = normalise_symbol(self.root, raw) if "::" in raw else normalise_path(self.root, raw)
            if not t or t.startswith("../") or t == "..":
                raise InvalidArgument(f"{raw!r} is not a file or symbol of this workspace")
            if t not in out:
                out.append(t)
        return out

    def _head(self) -> str | None:
        try:
            return self.git().head()
        except GitError:
            return None

    def _update(self, atom_id: str, sql: str, params: tuple[Any, ...]) -> Atom:
        with self.write() as conn:
            conn.execute(sql, params)
            self.note("atom", atom_id)
        a = self.atom(atom_id)
        atoms.publish_change("state", a)
        return a

    def _judge(self, a: Atom, state: str, verdict: str) -> Atom:
        now = self.clock.iso()
        with self.write() as conn:
            conn.execute("UPDATE atoms SET state = ?, updated_at = ? WHERE id = ?",
                         (state, now, a.id))
            conn.execute("INSERT INTO ratings VALUES (?, ?, 'person', ?)", (a.id, verdict, now))
            self.note("atom", a.id)
        judged = self.atom(a.id)
        atoms.publish_change("state", judged, verdict=verdict)
        return judged


def _label_from(text: str) -> str:
    first = text.split("\n", 1)[0]
    for stop in (". ", "? ", "! "):
        first = first.split(stop, 1)[0]
    first = " ".join(first.split())
    return first if len(first) <= LABEL_FROM_TEXT else first[:LABEL_FROM_TEXT - 1].rstrip() + "…"
