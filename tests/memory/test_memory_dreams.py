"""Dreams: light merges near-duplicates, rem links associations, deep summarises busy hubs;
deterministic, dated in DREAMS.md, and never deciding retention."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from memory_helpers import T0, store_at
from sample_workspace import make_repo

from neuralmind.engine import Workspace
from neuralmind.memory.dreams import summary_id

DEPLOY = ["The deploy script needs the VPN.", "Deploys run from the release branch only.",
          "A deploy takes about four minutes end to end.", "Roll back a deploy with the previous tag.",
          "Deploy notifications go to the ops channel."]


def _states(store) -> list[tuple]:     # noqa: ANN001 - a MemoryStore
    conn = sqlite3.connect(store.path)
    return conn.execute("SELECT id, state, served, used, useful, noise FROM atoms WHERE "
                        "source != 'dream' ORDER BY seq").fetchall()


def test_light_merges_near_duplicates_into_the_newest(tmp_path: Path, model: object) -> None:
    store = store_at(tmp_path)
    old = store.remember("Run the migrations before starting the server.", "lesson",
                         hubs=["db"], about=["manage.py"])
    new = store.remember("Run the migrations before starting the server!", "lesson",
                         hubs=["ops"])
    store.remember("Start the worker after the server.", "lesson")
    d = store.record("Run migrations at deploy", "Run the migrations before starting the server.")
    before = _states(store)
    report = store.dream("light")
    assert report.merged == [{"kept": new.id, "kept_label": new.label, "superseded": old.id,
                              "superseded_label": old.label}]
    kept = store.atom(new.id)
    assert kept.hubs == ["ops", "db"] and kept.about == ["manage.py"]
    assert {"kind": "supersedes", "id": old.id} in kept.links
    ids = [h.atom.id for h in store.recall("run the migrations before the server").hits]
    assert old.id not in ids and d.id in ids                  # decisions are never merged
    assert _states(store) == before                           # dreams decide no retention


def test_deep_summarises_a_busy_hub_once_and_updates_it(tmp_path: Path, model: object) -> None:
    store = store_at(tmp_path)
    sources = [store.remember(t, "lesson", hubs=["deploy"]) for t in DEPLOY]
    store.remember("Invoices round once.", "fact", hubs=["billing"])
    report = store.dream("deep")
    [entry] = report.summarised
    assert entry["hub"] == "deploy" and entry["summary"] == summary_id("deploy")
    summary = store.atom(summary_id("deploy"))
    assert summary.hubs == ["deploy"] and summary.source == "dream"
    assert {link["id"] for link in summary.links} <= {a.id for a in sources}
    assert all(s in " ".join(DEPLOY) for s in summary.text.split(". ") if s)   # extractive
    store.remember("Deploy only on weekdays.", "lesson", hubs=["deploy"])
    store.dream("deep")
    assert store.stats()["by_type"]["note"] == {"active": 1}                   # the same atom


def test_rem_links_atoms_recalled_together(tmp_path: Path, model: object) -> None:
    ws = Workspace(make_repo(tmp_path / "shop"))
    a = ws.remember("Carts expire after one day of inactivity.", "fact", hubs=["carts"])
    b = ws.remember("Expired carts release their reserved stock.", "fact")
    ws.remember("Invoices round once.", "fact")
    for session in ("mcp:one", "mcp:two", "mcp:three"):
        got = {h.atom.id for h in ws.recall("what happens when carts expire?", session=session).hits}
        assert {a.id, b.id} <= got
    report = ws.dream("rem")
    assert [(link["from"], link["to"]) for link in report.linked] == [(b.id, a.id)]
    assert {"kind": "about", "id": a.id} in ws.memory.atom(b.id).links
    assert ws.dream("rem").linked == []                        # already linked


def test_same_store_same_dream(tmp_path: Path, model: object) -> None:
    first = store_at(tmp_path / "one")
    for t in DEPLOY:
        first.remember(t, "lesson", hubs=["deploy"])
    first.remember("The deploy script needs the VPN!", "lesson")
    first.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copytree(tmp_path / "one" / ".neuralmind", tmp_path / "two" / ".neuralmind")
    second = store_at(tmp_path / "two")
    a, b = first.dream(), second.dream()
    assert a.entry == b.entry and a.merged and a.summarised
    diary = (tmp_path / "one" / ".neuralmind" / "DREAMS.md").read_text()
    assert diary.endswith(a.entry) and diary.startswith("# Dreams")
    assert "2026-05-28" in a.entry                              # the clock's date (T0)
    first.dream("light")
    assert (tmp_path / "one" / ".neuralmind" / "DREAMS.md").read_text().count("## ") == 2
    assert first.stats()["last_dream"] == pytest.approx(T0)


def test_unknown_phase_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown dream phase"):
        store_at(tmp_path).dream("nightmare")
