"""Two editors, one team: two real language servers on two clones of one repository,
connected to one PostgreSQL, see each other's learned associations, decisions and
team-visible memories within seconds (personal notes stay home); a server whose store
is unreachable serves as without one."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import clone
from raw_lsp import SERVER_ENV, RawServer, uri
from sample_workspace import git

from neuralmind.repo.learned import HOME_ENV

TAX = "app/tax.py"
REPORT = "app/report.py"
SOURCES = {TAX: "def vat(amount):\n    return amount * 0.2\n",
           REPORT: "def monthly(rows):\n    return sum(rows)\n"}
WAIT_S = 60.0     # a bound against hangs on a loaded machine; the wait ends when it holds


def poll(check: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def team_clones(origin: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two clones of a repository whose tax and report modules never changed together
    (one commit each: git history gives them no association)."""
    for rel, text in SOURCES.items():
        (origin / rel).write_text(text)
        git(origin, "add", rel)
        git(origin, "commit", "-qm", f"add {rel}")
    a, b = clone(origin, tmp_path / "alice"), clone(origin, tmp_path / "bob")
    for c in (a, b):
        git(c, "remote", "set-url", "origin", "https://example.com/team/shop")
    return a, b


def start(root: Path, env: dict[str, str]) -> RawServer:
    server = RawServer(root, env={**SERVER_ENV, **env})
    server.initialize({"neuralmind": {"mcp": False, "debounceSeconds": 0.2}})
    poll(lambda: (server.request("neuralmind/status", {})["result"]["indexing"] is None
                  and server.request("neuralmind/status", {})["result"]["nodes"]),
         f"{root.name}'s index")
    return server


def stop(server: RawServer) -> None:
    if server.proc.poll() is None:
        server.request("shutdown", None)
        server.notify("exit", None)
        server.wait_exit()
    for stream in (server.proc.stdin, server.proc.stdout, server.proc.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def servers(team_db: str, team_clones: tuple[Path, Path]) -> Iterator[tuple[RawServer, ...]]:
    # two developers, two machines: clones on one machine share learned memory (#17)
    alice, bob = (start(p, {"NEURALMIND_TEAM_DSN": team_db,
                            HOME_ENV: str(p.parent / f"{p.name}-home")}) for p in team_clones)
    try:
        yield alice, bob
    finally:
        stop(alice)
        stop(bob)


def team(server: RawServer) -> dict[str, Any]:
    return server.request("neuralmind/status", {})["result"]["team"]


def edit_together(server: RawServer, *rels: str) -> None:
    """Open and change each file in one debounce window: one co-activation batch."""
    for rel in rels:
        doc = server.root / rel
        server.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri(doc), "languageId": "python", "version": 1, "text": doc.read_text()}})
        server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri(doc), "version": 2},
            "contentChanges": [{"text": doc.read_text() + "# edited\n"}]})


def associations(server: RawServer, rel: str) -> str:
    """What hover on the first line of `rel` says it is often used with."""
    answer = server.request("textDocument/hover", {
        "textDocument": {"uri": uri(server.root / rel)}, "position": {"line": 0, "character": 5}})
    result = answer.get("result") or {}
    return (result.get("contents") or {}).get("value", "")


def test_two_editors_see_each_others_learning_decisions_and_memories(servers: tuple[RawServer, RawServer]) -> None:
    alice, bob = servers
    for who in (alice, bob):
        poll(lambda who=who: team(who).get("connected"), "the team store connection")
    assert REPORT not in associations(bob, TAX)     # nothing links them before

    edit_together(alice, TAX, REPORT)
    poll(lambda: REPORT in associations(bob, TAX), "alice's association on bob's side")
    assert team(alice)["pushed"] >= 1 and team(bob)["pulled"] >= 1

    edit_together(bob, REPORT, "app/billing.py")
    poll(lambda: "app/billing.py" in associations(alice, REPORT),
         "bob's association on alice's side")
    decisions_and_memories(alice, bob)


def found(server: RawServer, method: str, atom_id: str) -> dict[str, Any] | None:
    return server.request(method, {"id": atom_id}).get("result")


def recalled(server: RawServer, question: str) -> dict[str, dict[str, Any]]:
    out = server.request("neuralmind/memory/recall", {"query": question})["result"]
    return {a["id"]: a for a in out["atoms"]}


def decisions_and_memories(alice: RawServer, bob: RawServer) -> None:
    """Decisions and team-visible memories cross too (the same two servers: starting
    them is most of this test's time)."""
    d = alice.request("neuralmind/decisions/record", {
        "title": "VAT is computed in integer cents", "rationale": "Floats round.",
        "files": [TAX]})["result"]
    note = alice.request("neuralmind/memory/remember", {
        "text": "my scratch: ask Bob about the report", "type": "note"})["result"]
    lesson = alice.request("neuralmind/memory/remember", {
        "text": "Monthly reports must be reconciled before the 5th", "type": "lesson",
        "about": [REPORT]})["result"]
    seen = poll(lambda: found(bob, "neuralmind/decisions/get", d["id"]),
                "alice's decision on bob's side")
    assert (seen["title"], seen["status"], seen["files_affected"]) == (
        d["title"], "ACTIVE", [TAX])
    got = poll(lambda: recalled(bob, "reports reconciled").get(lesson["id"]),
               "alice's lesson on bob's side")
    assert got["type"] == "lesson" and got["about"] == [REPORT]
    assert note["id"] not in recalled(bob, "ask Bob about the report")   # personal: home only

    pref = bob.request("neuralmind/memory/remember", {
        "text": "Name money variables with their unit", "type": "preference"})["result"]
    poll(lambda: pref["id"] in recalled(alice, "name money variables unit"),
         "bob's preference on alice's side")
    audit = {e["id"]: e for e in bob.request("neuralmind/decisions/audit", {})["result"]}
    assert audit[d["id"]]["attention"] == []


def test_an_unreachable_store_changes_nothing_for_the_editor(team_clones: tuple[Path, Path],
                                                             ) -> None:
    server = start(team_clones[0], {"NEURALMIND_TEAM_DSN":
                                    "host=127.0.0.1 port=1 dbname=x user=x connect_timeout=1"})
    try:
        poll(lambda: team(server).get("last_error"), "the first failed connection")
        state = team(server)
        assert state["configured"] and state["running"] and not state["connected"]
        edit_together(server, TAX, REPORT)
        poll(lambda: REPORT in associations(server, TAX), "local learning as usual")
        hits = server.request("neuralmind/search", {"query": "vat amount"})["result"]["hits"]
        assert any(h["file"] == TAX for h in hits)
    finally:
        stop(server)
