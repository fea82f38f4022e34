"""A scripted day in one language-server process: edit events over 200 files, context
requests, saves with re-index and commits, with RSS / open descriptors / threads sampled
every 1,000 events.

    python benchmarks/stress/soak.py [--events 20000] [--files 200] [--repo django-20k]

Without --repo the workspace is the generated 200-file repository (~600 nodes); with
--repo it is a copy of /work/bench-data/<name> (its `.neuralmind/` too, when present, so
a built index is reused), edited in its first --files Python files. For the 20k-node
memory target: `bash benchmarks/make_django_20k.sh` and `--repo django-20k`.

Per 20,000 events: 2,000 context requests, 200 saves (file written + didSave), 20 commits
(scaled with --events). Targets: RSS growth after warm-up (the first 2,000 events) under
10 %, descriptors and threads flat, RSS under 400 MB.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from stress_common import (
    ENV,
    LspProcess,
    copy_bench_repo,
    git,
    make_repo,
    pct,
    proc_figures,
    workdir,
)

QUESTIONS = ["normalise an invoice value", "apply the cart policy", "payment service rules",
             "shipping helper", "session token normalisation", "audit ledger export"]
REPO_QUESTIONS = ["how is a database query compiled", "where are migrations applied",
                  "form field validation errors", "template rendering context",
                  "url routing and reverse", "cache backend configuration"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--repo", default=None,
                    help="a benchmark repository under /work/bench-data instead of the "
                         "generated one")
    ap.add_argument("--no-learning", action="store_true",
                    help="learning off (A/B: is memory growth in the learning path?)")
    ap.add_argument("--only", choices=["edits", "context", "saves"], default=None,
                    help="A/B: edits always; add only context requests or only saves")
    args = ap.parse_args()
    assert ENV
    if args.repo:
        root = copy_bench_repo(args.repo, workdir("soak") / "repo")
        paths = sorted(str(f.relative_to(root)) for f in root.rglob("*.py")
                       if ".neuralmind" not in f.parts)[: args.files]
        questions = REPO_QUESTIONS
    else:
        root = make_repo(workdir("soak") / "repo", n_files=args.files)
        paths = [f"pkg/mod{i:03d}.py" for i in range(args.files)]
        questions = QUESTIONS
    rng = random.Random(42)
    lsp = LspProcess(root)
    t0 = time.monotonic()
    lsp.initialize({"mcp": True, **({"learning": False} if args.no_learning else {})})
    lsp.wait_ready(timeout=900)
    print(f"indexed {args.repo or 'the generated repository'} in "
          f"{time.monotonic() - t0:.1f} s", flush=True)
    texts = {p: (root / p).read_text(encoding="utf-8") for p in paths}
    versions = dict.fromkeys(paths, 0)
    samples: list[dict[str, float]] = []
    latencies: list[float] = []
    saves = commits = 0
    started = time.monotonic()
    for event in range(1, args.events + 1):
        p = rng.choice(paths[: max(10, args.files // 4)] if rng.random() < 0.7 else paths)
        uri = lsp.doc(p)
        if versions[p] == 0:
            versions[p] = 1
            lsp.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": texts[p]}})
        versions[p] += 1
        texts[p] += f"# edit {event}\n"
        lsp.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": versions[p]},
                                              "contentChanges": [{"text": texts[p]}]})
        if event % 10 == 0 and args.only in (None, "context"):
            t = time.perf_counter()
            reply = lsp.request("neuralmind/context", {"query": rng.choice(questions)}, timeout=120)
            latencies.append((time.perf_counter() - t) * 1000)
            assert "error" not in reply, reply
        if event % 100 == 0 and args.only in (None, "saves"):
            (root / p).write_text(texts[p], encoding="utf-8")
            lsp.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            saves += 1
        if event % 1000 == 0:
            git(root, "commit", "-q", "--allow-empty", "-am", f"work {event}")
            commits += 1
            fig = proc_figures(lsp.proc.pid)
            fig.update(event=event, elapsed_s=round(time.monotonic() - started, 1),
                       context_p95_ms=round(pct(latencies[-100:], 95), 1) if latencies else None)
            samples.append(fig)
            print(json.dumps(fig), flush=True)
    warm = [s for s in samples if s["event"] > min(2000, args.events // 10)] or samples
    base = warm[0]["rss_mb"]
    out = {"events": args.events, "context_requests": len(latencies), "saves": saves,
           "commits": commits, "wall_s": round(time.monotonic() - started, 1),
           "context_p50_ms": round(pct(latencies, 50), 1) if latencies else None,
           "context_p95_ms": round(pct(latencies, 95), 1) if latencies else None,
           "rss_after_warmup_mb": round(base, 1), "rss_end_mb": round(samples[-1]["rss_mb"], 1),
           "rss_growth_after_warmup_pct": round(100 * (max(s["rss_mb"] for s in warm) - base)
                                                / base, 1),
           "fds_min_max": [min(s["fds"] for s in samples), max(s["fds"] for s in samples)],
           "threads_min_max": [min(s["threads"] for s in samples),
                               max(s["threads"] for s in samples)],
           "exit_code": lsp.shutdown()}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
