"""MemoryStore: atoms, hubs, edges, pins, forgetting, the write path, on real SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from memory_helpers import store_at

from neuralmind.errors import EngineError
from neuralmind.events import Event, bus
from neuralmind.memory.atoms import AtomNotFound
from neuralmind.memory.db import Change


def test_remember_stores_an_atom_with_hubs_and_code_links(repo: Path) -> None:
    store = store_at(repo)
    a = store.remember("Pool.acquire waits at most `timeout` seconds. Callers retry once.",
                       "lesson", hubs=["pool", " pool ", "db"],
                       about=["./pool.py", "pool.py::Pool.acquire"])
    got = store.atom(a.id[:6])                                             # prefixes resolve
    assert got.to_json() == a.to_json()
    assert got.label == "Pool.acquire waits at most `timeout` seconds"       # first sentence
    assert got.hubs == ["pool", "db"] and got.about == ["pool.py", "pool.py::Pool.acquire"]
    assert got.state == "active" and got.proposed_head is None
    proposed = store.remember("Helper returns one", "fact", proposed=True, about=["pool.py"])
    assert proposed.state == "proposed" and len(proposed.proposed_head or "") == 40
    assert [i["id"] for i in store.inbox()] == [proposed.id]


@pytest.mark.parametrize("kwargs, message", [
    ({"text": " "}, "needs a text"),
    ({"text": "x", "atom_type": "dream"}, "unknown atom type"),
    ({"text": "x", "about": ["../outside.py"]}, "not a file or symbol"),
    ({"text": "x", "about": ["pool.py::"]}, "path::Qualified.name"),
    ({"text": "x", "label": "l" * 301}, "at most 300"),
])
def test_bad_input_is_refused_and_nothing_stored(tmp_path: Path, kwargs: dict, message: str) -> None:
    store = store_at(tmp_path)
    with pytest.raises(ValueError, match=message):
        store.remember(**kwargs)
    assert store.stats()["atoms"] == 0


def test_a_decision_remembered_is_a_decision_record(repo: Path) -> None:
    store = store_at(repo)
    a = store.remember("Connections cost 40 ms to open.", "decision", label="Pool connections",
                       hubs=["perf"], about=["pool.py::Pool.acquire"])
    d = store.get(a.id)
    assert (d.title, d.tags, d.files_affected, d.symbols_affected) == (
        "Pool connections", ["perf"], ["pool.py"], ["pool.py::Pool.acquire"])
    assert d.fingerprints and a.type == "decision"


def test_links_pins_close_and_hubs(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    old = store.remember("Deploy with the shell script", "lesson")
    new = store.remember("Deploy with the make target", "lesson")
    edge = store.link(new.id, "supersedes", old.id)
    assert edge == {"src": new.id, "kind": "supersedes", "dst": old.id, "dst_type": "atom"}
    assert store.link(new.id, "about", "Makefile")["dst_type"] == "file"
    with pytest.raises(ValueError, match="unknown edge kind"):
        store.link(new.id, "likes", old.id)
    with pytest.raises(ValueError, match="itself"):
        store.link(new.id, "caused_by", new.id)
    with pytest.raises(AtomNotFound):
        store.link(new.id, "caused_by", "ffffffff")
    with pytest.raises(ValueError, match="only preferences"):
        store.pin(new.id)
    pref = store.remember("Prefer small commits", "preference")
    assert store.pin(pref.id).pinned and not store.pin(pref.id, on=False).pinned
    loop = store.remember("Migrate the CI to the new runner", "open_loop")
    assert store.close(loop.id).closed_at
    store.remember("Login uses bearer tokens", "fact", hubs=["auth"])
    assert store.hub("auth", ["sign in", "login"]) == {"hub": "auth", "synonyms": ["sign in", "login"],
                                                       "atoms": 1}
    with pytest.raises(EngineError) as err:
        store.hub("nope")
    assert err.value.code == "not_found"


def test_forget_deletes_the_atom_and_every_edge_to_it(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    a = store.remember("A", "note")
    b = store.remember("B", "note", hubs=["h"], about=["x.py"])
    store.link(a.id, "caused_by", b.id)
    store.forget(b.id)
    with pytest.raises(AtomNotFound):
        store.atom(b.id)
    conn = sqlite3.connect(store.path)
    for table, column in (("edges", "dst"), ("edges", "src"), ("atom_hubs", "atom_id")):
        assert conn.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", (b.id,)).fetchone()[0] == 0
    assert store.atom(a.id).links == []


def test_the_one_write_path_calls_hooks_inside_the_transaction(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    seen: list[list[Change]] = []

    def outbox(conn: sqlite3.Connection, changes: list[Change]) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS outbox (kind TEXT, id TEXT)")
        conn.executemany("INSERT INTO outbox VALUES (?, ?)", [(c.kind, c.id) for c in changes])
        seen.append(changes)

    store.add_write_hook(outbox)
    generation = store.generation()
    a = store.remember("Hooked", "note")
    assert seen == [[Change("atom", a.id)]] and store.generation() == generation + 1
    store.rate(a.id, "used")
    assert seen[-1] == [Change("feedback", a.id)] and store.generation() == generation + 1

    def broken(conn: sqlite3.Connection, changes: list[Change]) -> None:
        raise RuntimeError("the outbox is full")

    store.add_write_hook(broken)
    with pytest.raises(RuntimeError):
        store.remember("Never stored", "note")
    assert store.stats()["atoms"] == 1                         # the atom and the outbox row
    conn = sqlite3.connect(store.path)                         # rolled back together
    assert conn.execute("SELECT count(*) FROM outbox").fetchone()[0] == 2


def test_decisions_and_atoms_share_one_store(repo: Path) -> None:
    store = store_at(repo)
    d = store.record("Pool connections", "Opening costs 40 ms.", files=["pool.py"])
    note = store.remember("The pool is tuned for 20 connections", "fact", about=["pool.py"])
    assert {a.id for a in store.atoms_about(["pool.py"])} == {d.id, note.id}
    rows = store.memory_search("pool connections", mode="keyword")["results"]
    assert {r["id"] for r in rows} == {d.id, note.id}
    assert next(r for r in rows if r["id"] == note.id)["type"] == "fact"
    records = store.memory_get([d.id, note.id])["records"]
    assert records[0]["rationale"] == "Opening costs 40 ms." and records[1]["label"].startswith("The pool")
    assert store.stats()["by_type"] == {"decision": {"active": 1}, "fact": {"active": 1}}


def test_a_superseded_decision_is_linked_and_recall_shows_the_new_one(repo: Path) -> None:
    store = store_at(repo)
    old = store.record("Pool of four connections", "The database allows five.", files=["pool.py"])
    new, old_after = store.supersede(old.id, "Pool of eight connections", "The database now allows ten.")
    assert old_after.status == "INVALIDATED"
    edges = store.connection().execute("SELECT src, kind, dst FROM edges WHERE dst_type = 'atom'")
    assert [tuple(e) for e in edges] == [(new.id, "supersedes", old.id)]
    hits = [h.atom.id for h in store.recall("pool connections", record=False).hits]
    assert new.id in hits and old.id not in hits


def test_each_change_is_told_to_the_event_bus_after_it_is_stored(repo: Path) -> None:
    store = store_at(repo)
    told: list[dict] = []

    def listen(e: Event) -> None:
        if e.kind == "memory":      # what the listener sees is already committed
            told.append({**e.data, "stored": store.atom(e.data["id"]).state
                         if e.data["change"] not in ("dream",) and not e.data.get("deleted")
                         else None})
    unsubscribe = bus.subscribe(listen)
    try:
        a = store.remember("Pool waits. Retry once.", "lesson", about=["pool.py::Pool.acquire"])
        b = store.remember("Helper returns one", "fact", proposed=True)
        store.reject(b.id)
        store.rate(a.id, "noise")
        store.forget(b.id)
        store.dream("deep")
    finally:
        unsubscribe()
    assert [(t["change"], t.get("state"), t.get("stored")) for t in told] == [
        ("remember", "active", "active"), ("remember", "proposed", "proposed"),
        ("state", "rejected", "rejected"), ("rate", told[3]["state"], told[3]["state"]),
        ("state", "rejected", None), ("dream", None, None)]
    assert told[0]["files"] == ["pool.py"] and told[0]["label"] == "Pool waits"
    assert told[3]["verdict"] == "noise" and told[4]["deleted"] is True
    assert told[5]["label"] == "deep dream" and told[5]["files"] == []
