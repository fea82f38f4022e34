"""1,000 didChange per second for 10 s into a warm language server, while context requests
are timed; then the server must still answer.

    python benchmarks/stress/lsp_load.py [--repo rich-13.7.1] [--rate 1000] [--seconds 10]

Prints context p50/p95/max under that load (target p95 < 100 ms), the changes sent,
the server's RSS/descriptors/threads before and after, and whether it kept serving.
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time

from stress_common import LspProcess, copy_bench_repo, pct, proc_figures, workdir

QUESTIONS = ["how does the console render a table", "progress bar refresh rate",
             "syntax highlighting theme", "markdown rendering of code blocks",
             "traceback with locals", "live display update", "text wrapping and justification"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repo", default="rich-13.7.1")
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()

    root = copy_bench_repo(args.repo, workdir("lsp") / "repo")
    files = sorted(p for p in root.rglob("*.py"))[:50]
    lsp = LspProcess(root)
    t0 = time.monotonic()
    lsp.initialize({"mcp": False})
    lsp.wait_ready(timeout=900)
    print(f"indexed {args.repo} in {time.monotonic() - t0:.1f} s")
    texts = {p: p.read_text(encoding="utf-8") for p in files}
    for p, text in texts.items():
        lsp.notify("textDocument/didOpen", {"textDocument": {
            "uri": p.as_uri(), "languageId": "python", "version": 1, "text": text}})
    lsp.request("neuralmind/context", {"query": QUESTIONS[0]})     # warm: model loaded
    quiet: list[float] = []
    for q in QUESTIONS * 3:                                       # the same requests, no load
        t = time.perf_counter()
        lsp.request("neuralmind/context", {"query": q})
        quiet.append((time.perf_counter() - t) * 1000)
    before = proc_figures(lsp.proc.pid)

    stop = threading.Event()
    sent = [0]

    def pump() -> None:
        rng = random.Random(1)
        versions = dict.fromkeys(files, 1)
        interval = 1.0 / args.rate
        next_at = time.monotonic()
        while not stop.is_set():
            p = rng.choice(files)
            versions[p] += 1
            lsp.notify("textDocument/didChange", {
                "textDocument": {"uri": p.as_uri(), "version": versions[p]},
                "contentChanges": [{"text": texts[p] + f"\n# edit {versions[p]}\n"}]})
            sent[0] += 1
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    pumper = threading.Thread(target=pump, daemon=True)
    latencies: list[float] = []
    errors = 0
    started = time.monotonic()
    pumper.start()
    i = 0
    while time.monotonic() - started < args.seconds:
        q = QUESTIONS[i % len(QUESTIONS)]
        i += 1
        t = time.perf_counter()
        reply = lsp.request("neuralmind/context", {"query": q}, timeout=60)
        latencies.append((time.perf_counter() - t) * 1000)
        errors += "error" in reply
        time.sleep(0.05)
    stop.set()
    pumper.join()
    elapsed = time.monotonic() - started
    after = proc_figures(lsp.proc.pid)
    alive = "error" not in lsp.request("neuralmind/status", {}, timeout=60)
    code = lsp.shutdown()
    out = {"changes_sent": sent[0], "change_rate_per_s": round(sent[0] / elapsed),
           "context_requests": len(latencies), "context_errors": errors,
           "context_p50_ms": round(pct(latencies, 50), 1),
           "context_p95_ms": round(pct(latencies, 95), 1),
           "context_max_ms": round(max(latencies), 1),
           "context_without_load_p50_ms": round(pct(quiet, 50), 1),
           "context_without_load_p95_ms": round(pct(quiet, 95), 1),
           "before": before, "after": after,
           "still_serving": alive, "exit_code": code}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
