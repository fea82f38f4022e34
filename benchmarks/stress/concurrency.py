"""Every kind of writer on one workspace at once: a language server taking edits, a
standalone `neuralmind mcp` recording decisions, engine processes learning, threads
recording decisions, `neuralmind replay` and `neuralmind build` from the CLI.

    python benchmarks/stress/concurrency.py [--writers 3] [--activations 1000]
                                            [--threads 10] [--decisions 100]

Asserts exact totals (every activation counted, every decision present), PRAGMA
integrity_check ok on both databases, and no "database is locked" in any output; prints
the wall time and the slowest writer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from stress_common import CLI, ENV, LspProcess, cli, integrity, make_repo, workdir

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "reliability"))
from test_reliability_concurrency import DECISION_WRITER, PAIR, SYNAPSE_WRITER  # noqa: E402

MCP_DECISIONS = 50


async def mcp_writer(root: Path) -> int:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", str(root)],
                                   env={k: v for k, v in ENV.items() if isinstance(v, str)})
    ok = 0
    with open(root.parent / "mcp-stderr.txt", "w") as err:
        async with Client(stdio_client(params, errlog=err)) as client:
            for i in range(MCP_DECISIONS):
                result = await client.call_tool("neuralmind_decision_record", {
                    "title": f"MCP decision {i}", "rationale": "Concurrency check.",
                    "files": ["pkg/mod010.py"]})
                ok += not result.is_error
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--writers", type=int, default=3)
    ap.add_argument("--activations", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=10)
    ap.add_argument("--decisions", type=int, default=100)
    args = ap.parse_args()
    root = make_repo(workdir("conc") / "repo", n_files=200)
    assert cli("build", str(root), timeout=1800).returncode == 0
    events = root.parent / "events.jsonl"
    with events.open("w") as f:
        for i in range(2000):
            f.write(json.dumps({"session": f"s{i // 50}", "type": "edit",
                                "file": f"pkg/mod{(i * 7) % 200:03d}.py", "ts": 1.7e9 + i}) + "\n")

    lsp = LspProcess(root)
    lsp.initialize({"mcp": False})
    lsp.wait_ready(timeout=900)
    t0 = time.monotonic()
    procs = {f"learner{w}": subprocess.Popen(
        [sys.executable, "-c", SYNAPSE_WRITER, str(root), str(args.activations), *PAIR],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for w in range(args.writers)}
    procs["decision-threads"] = subprocess.Popen(
        [sys.executable, "-c", DECISION_WRITER, str(root), str(args.threads), str(args.decisions)],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs["build"] = subprocess.Popen([*CLI, "build", str(root)], env=ENV,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs["replay"] = subprocess.Popen([*CLI, "replay", str(events), str(root)], env=ENV,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for i in range(200):                                   # the editor keeps typing meanwhile
        uri = lsp.doc(f"pkg/mod{i % 200:03d}.py")
        lsp.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                             "version": 1, "text": "x = 1\n"}})
        lsp.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    mcp_ok = asyncio.run(mcp_writer(root))
    took: dict[str, float] = {}
    outs: dict[str, tuple[str, str]] = {}
    for name, p in procs.items():
        outs[name] = p.communicate(timeout=3600)
        took[name] = round(time.monotonic() - t0, 1)
    lsp_alive = "error" not in lsp.request("neuralmind/status", {}, timeout=120)
    lsp.shutdown()
    wall = time.monotonic() - t0

    text = " ".join(o + e for o, e in outs.values()) + lsp.stderr_text() + (
        root.parent / "mcp-stderr.txt").read_text()
    state = root / ".neuralmind"
    con = sqlite3.connect(state / "synapses.db")
    (count,) = con.execute("SELECT count FROM synapses WHERE a=? AND b=? AND namespace="
                           "'personal'", PAIR).fetchone()
    con.close()
    con = sqlite3.connect(state / "memory.db")
    (threads_n,) = con.execute("SELECT count(*) FROM decisions WHERE title LIKE 'Thread %'").fetchone()
    (mcp_n,) = con.execute("SELECT count(*) FROM decisions WHERE title LIKE 'MCP %'").fetchone()
    con.close()
    out = {
        "activations_expected": args.writers * args.activations, "activations_counted": count,
        "activations_skipped_by_writers": [int(outs[f"learner{w}"][0].split()[0] or 0)
                                           for w in range(args.writers)],
        "decisions_expected": args.threads * args.decisions + MCP_DECISIONS,
        "decisions_present": threads_n + mcp_n, "mcp_recorded": mcp_ok,
        "exit_codes": {n: p.returncode for n, p in procs.items()},
        "integrity": [integrity(state / "synapses.db"), integrity(state / "memory.db")],
        "locked_messages": text.lower().count("database is locked"),
        "tracebacks": text.count("Traceback"), "language_server_serving": lsp_alive,
        "wall_s": round(wall, 1), "finished_at_s": took,
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
