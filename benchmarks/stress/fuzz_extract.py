"""Extractor fuzz at full scale: 10,000 mutated files over the 11 languages (byte flips,
truncation, 10,000-deep nesting, NUL bytes, invalid UTF-8, CR-only endings, splices), a
5 MB single-line minified JS file and a 1 GB sparse file.

    python benchmarks/stress/fuzz_extract.py [--files 10000] [--depth 10000]

Prints per-file extraction time (p50/p99/max, each file alone in this process), the
outcome of a full build over the folder (extracted / partial / failed by the watchdog /
skipped by reason), unaccounted files (must be 0), validation, and peak RSS of this
process and of the build's worker processes.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import sys
import time

from stress_common import ROOT, pct, workdir

sys.path.insert(0, str(ROOT / "tests" / "reliability"))
from fuzz_corpus import corpus, minified_js  # noqa: E402

from neuralmind.config import WorkspaceConfig  # noqa: E402
from neuralmind.graph import extract  # noqa: E402
from neuralmind.graph.build import GraphBuilder  # noqa: E402
from neuralmind.graph.languages import language_for  # noqa: E402
from neuralmind.graph.validate import validate_graph  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=10_000)
    args = ap.parse_args()

    root = workdir("fuzz") / "repo"
    root.mkdir()
    times: list[float] = []
    by_mutation: dict[str, list[float]] = collections.defaultdict(list)
    crashes = 0
    for name, data, how in corpus(args.files, seed=2026, nest_depth=args.depth):
        (root / name).write_bytes(data)
        t = time.perf_counter()
        try:
            extract.extract_file(name, data, language_for(name) or "")
        except Exception as e:  # extract_file promises never to raise
            crashes += 1
            print(f"CRASH {name}: {e!r}")
        dt = time.perf_counter() - t
        times.append(dt)
        by_mutation[how].append(dt)
    (root / "bundle.js").write_bytes(minified_js(5 * 1024 * 1024))
    with open(root / "sparse.py", "wb") as f:
        f.truncate(1024 ** 3)
    rss_extract = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    t = time.perf_counter()
    report = GraphBuilder(root, WorkspaceConfig()).build()
    build_s = time.perf_counter() - t
    skipped = {p: r for r, v in report.skipped.items() for p in v["paths"]}
    on_disk = {p.name for p in root.iterdir() if p.is_file()}
    unaccounted = sorted(on_disk - set(report.graph.files) - set(skipped))
    out = {
        "files": len(on_disk), "extract_crashes": crashes,
        "extract_p50_ms": round(pct(times, 50) * 1000, 2),
        "extract_p99_ms": round(pct(times, 99) * 1000, 1),
        "extract_max_ms": round(max(times) * 1000, 1),
        "extract_max_ms_by_mutation": {k: round(max(v) * 1000, 1) for k, v in by_mutation.items()},
        "watchdog_seconds": extract.EXTRACT_TIMEOUT_SECONDS,
        "build_seconds": round(build_s, 1),
        "extracted": len(report.graph.files), "partial": len(report.partial_files),
        "failed": len(report.failed_files),
        "skipped_by_reason": {r: v["count"] for r, v in report.skipped.items()},
        "sparse_1gb": skipped.get("sparse.py"), "minified_5mb": skipped.get("bundle.js"),
        "unaccounted": unaccounted[:10], "validation_problems": len(validate_graph(report.graph, root)),
        "peak_rss_mb_this_process": round(max(rss_extract, resource.getrusage(
            resource.RUSAGE_SELF).ru_maxrss / 1024)),
        "peak_rss_mb_build_workers": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "sparse_bytes_on_disk": os.stat(root / "sparse.py").st_blocks * 512,
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
