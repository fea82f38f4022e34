"""Resolution cost on a synthetic C workspace with a dense include graph.

Every header includes ten others and every function makes calls that resolve
nowhere, the worst case for following wildcard imports. Prints files, references,
edges and seconds; the cost should grow linearly with N.

Usage: python benchmarks/resolve_stress.py [N ...]   (default: 300 1500)
"""

from __future__ import annotations

import random
import sys
import time

from neuralmind.graph.extract import extract_file
from neuralmind.graph.model import FileExtract
from neuralmind.graph.resolve import resolve


def workspace(n: int, seed: int = 0) -> dict[str, FileExtract]:
    rng = random.Random(seed)
    out: dict[str, FileExtract] = {}
    for i in range(n):
        inc = "".join(f'#include "h{rng.randrange(n)}.h"\n' for _ in range(10))
        header = f"{inc}struct s{i} {{ int x; }};\nstatic inline int hf{i}(void) {{ return 0; }}\n"
        out[f"inc/h{i}.h"] = extract_file(f"inc/h{i}.h", header.encode(), "c")
        body = "".join(f"    f{rng.randrange(n)}(); g{rng.randrange(50)}(); "
                       f"hf{rng.randrange(n)}(); obj.m();\n" for _ in range(30))
        source = f'#include "../inc/h{i}.h"\n{inc}int f{i}(void) {{\n{body}}}\n'
        out[f"src/c{i}.c"] = extract_file(f"src/c{i}.c", source.encode(), "c")
    return out


def main() -> int:
    sizes = [int(a) for a in sys.argv[1:]] or [300, 1500]
    for n in sizes:
        extracts = workspace(n)
        refs = sum(len(fe.references) for fe in extracts.values())
        t0, c0 = time.perf_counter(), time.process_time()
        edges = resolve(extracts)
        print(f"files {len(extracts):6d}  references {refs:7d}  edges {len(edges):7d}  "
              f"{time.perf_counter() - t0:.2f} s wall  {time.process_time() - c0:.2f} s cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main())
