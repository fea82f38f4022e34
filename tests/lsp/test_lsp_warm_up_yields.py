"""Requests during the server's warm-up are answered before it ends (issue #21 part 2).

On the Linux kernel the warm-up (the resolution state saves patch, 33-57 s) was one engine
job, and `status` and every answer queued behind it. The real server on a built
repository, its warm-up held at the step that prepares for saves by
`NEURALMIND_TEST_HOLD_AT` (the warm-up's thread blocks on a FIFO the test holds open; no
sleeps): the status (which says it warms up) and a search are answered while
it is held, a save waits for it (one writer), and once released the save is applied.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

from raw_lsp import SERVER_ENV, RawServer, uri
from sample_workspace import make_repo

from neuralmind.engine import Workspace
from neuralmind.graph.store import HOLD_ENV

TIMEOUT_S = 60


def _hold(fifo: Path) -> BinaryIO:
    """The FIFO's write end, opened once the server's warm-up is at the hold point."""
    opened: list[BinaryIO] = []
    opener = threading.Thread(  # the caller closes it: its close is the release
        target=lambda: opened.append(open(fifo, "wb")), daemon=True)  # noqa: SIM115
    opener.start()
    opener.join(TIMEOUT_S)
    assert opened, "the warm-up never reached its hold point"
    return opened[0]


def _answer_within(server: RawServer, method: str, params: Any) -> dict[str, Any] | None:
    """The answer to a request if it comes within TIMEOUT_S, else None."""
    server.next_id += 1
    want = server.next_id
    server.send({"jsonrpc": "2.0", "id": want, "method": method, "params": params})
    answers: list[dict[str, Any]] = []

    def read() -> None:
        while True:
            msg = server.read()
            if msg.get("id") == want and "method" not in msg:
                answers.append(msg["result"])
                return
            if "method" in msg and "id" in msg:      # a server->client request: accept it
                server.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            else:
                server.notifications.append(msg)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(TIMEOUT_S)
    return answers[0] if answers else None


def _search(server: RawServer, name: str) -> list[str]:
    hits = server.request("neuralmind/search", {"query": name, "k": 5})["result"]["hits"]
    return [h["symbol"] for h in hits]


def test_status_and_answers_do_not_wait_for_the_warm_up(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    Workspace(repo).build()
    fifo = tmp_path / "hold"
    os.mkfifo(fifo)
    server = RawServer(repo, env={**SERVER_ENV, HOLD_ENV: f"warm_up_saves={fifo}"})
    try:
        server.initialize({"mcp": False})
        release = _hold(fifo)
        with release:
            # held: the warm-up has not prepared for saves; questions are answered
            status = _answer_within(server, "neuralmind/status", {})
            assert status is not None, "status waited for the warm-up"
            assert status["indexed_nodes"] > 0
            assert status["warming_up"] is True     # what saves wait for, said
            found = _answer_within(server, "neuralmind/search", {"query": "compute_invoice_total", "k": 5})
            assert found is not None, "a search waited for the warm-up"
            assert any(h["symbol"].endswith("compute_invoice_total") for h in found["hits"])
            # a save made now waits for the warm-up (one writer): not applied while held
            billing = repo / "app" / "billing.py"
            billing.write_text(billing.read_text() + "\n\ndef refund_late_orders(order):\n"
                               '    """Refund what shipped late."""\n    return order\n')
            server.notify("textDocument/didSave", {"textDocument": {"uri": uri(billing)}})
            status = _answer_within(server, "neuralmind/status", {})
            assert status is not None and "refund_late_orders" not in _search(
                server, "refund_late_orders")
        # released: the warm-up ends, the save applies
        deadline = time.monotonic() + TIMEOUT_S
        while not any(s.endswith("refund_late_orders") for s in _search(
                server, "refund_late_orders")):
            assert time.monotonic() < deadline, "the save was never applied"
        while server.request("neuralmind/status", {})["result"]["warming_up"]:
            assert time.monotonic() < deadline, "status says it warms up after the warm-up"
        server.shut_down()
    finally:
        server.kill()
