"""Extraction and resolution speed over a folder: files, nodes, references, edges, seconds.

Usage: python benchmarks/extract_speed.py /work/bench-data/Django-5.1
Single process, no walker: every file with a known extension under the folder
(skipping hidden and vendored directories) is read and extracted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter

from neuralmind.graph.extract import extract_file
from neuralmind.graph.languages import language_for
from neuralmind.graph.resolve import resolve

_SKIP = {"node_modules", ".git", "vendor", "__pycache__", ".venv"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("folder")
    args = ap.parse_args()
    root = os.path.abspath(args.folder)
    files: list[tuple[str, str, bytes]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP and not d.startswith("."))
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            lang = language_for(full)
            if lang is None or os.path.getsize(full) > 1024 * 1024:
                continue
            with open(full, "rb") as fh:
                files.append((os.path.relpath(full, root).replace(os.sep, "/"), lang, fh.read()))
    t0, c0 = time.perf_counter(), time.process_time()
    extracts = {path: extract_file(path, data, lang) for path, lang, data in files}
    t1, c1 = time.perf_counter(), time.process_time()
    edges = resolve(extracts)
    t2, c2 = time.perf_counter(), time.process_time()
    nodes = sum(len(fe.nodes) for fe in extracts.values())
    refs = sum(len(fe.references) for fe in extracts.values())
    langs = Counter(fe.language for fe in extracts.values())
    kinds = Counter(e.kind for e in edges)
    heuristic = sum(1 for e in edges if not e.resolved)
    print(f"folder     {root}")
    print(f"files      {len(extracts)}  {dict(sorted(langs.items()))}")
    print(f"partial    {sum(fe.partial for fe in extracts.values())}  "
          f"errors {sum(bool(fe.error) for fe in extracts.values())}")
    print(f"nodes      {nodes}")
    print(f"references {refs}")
    print(f"edges      {len(edges)}  {dict(sorted(kinds.items()))}  heuristic {heuristic}")
    # Wall time drifts with other load on a shared machine; CPU time less so.
    print(f"extract    {t1 - t0:.2f} s wall  {c1 - c0:.2f} s cpu")
    print(f"resolve    {t2 - t1:.2f} s wall  {c2 - c1:.2f} s cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main())
