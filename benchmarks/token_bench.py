#!/usr/bin/env python3
"""o200k_base token counting: our encoder (context/o200k.py) against bpe-openai's.

    python benchmarks/token_bench.py [--data /work/bench-data] [--skip-exactness] [--json]

(a) Exactness: every UTF-8 text file of every pinned sdist under --data (the roots named
    by --data/_sdists/*.tar.gz, Django-5.1 included when fetched) encoded by both; token
    ids must be equal. bpe-openai's Python wrapper refuses 1M characters or 200k tokens,
    so the oracle here is its Rust tokenizer called directly (same ids, no limits).
    A mismatch prints the file and the first differing piece.
(b) Memory and load time: each encoder loaded in a fresh subprocess, VmRSS after
    counting one string, next to a bare interpreter's.
(c) Speed: MB/s counting the sdists' .py files (under 200k characters: bpe-openai's
    wrapper raises beyond 200k tokens) one by one, ours from a cold piece cache, then
    warm; bpe-openai through its Encoding.encode, the call count_tokens used to make, and a context request: 35 count calls over ~15k characters.
(d) Huge pieces (ours only; bpe-openai refuses them): 1 MB of spaces, a 5 MB line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from neuralmind.context import o200k

_MEASURE = """
import re, sys, time
def rss_mb():
    status = open("/proc/self/status").read()
    return int(re.search(r"VmRSS:\\s+(\\d+)", status).group(1)) / 1024
started = time.perf_counter()
{load}
print(time.perf_counter() - started, rss_mb())
"""
_LOADERS = {
    "python (bare interpreter)": "pass",
    "ours (neuralmind.context.tokens)": (
        "from neuralmind.context.tokens import count_tokens\ncount_tokens('warm up')"
    ),
    "bpe_openai.get_encoding": (
        "import bpe_openai\n"
        "bpe_openai.get_encoding('o200k_base').encode('warm up', disallowed_special=())"
    ),
}


def sdist_roots(data: Path) -> list[Path]:
    names = sorted(p.name.removesuffix(".tar.gz") for p in (data / "_sdists").glob("*.tar.gz"))
    return [data / name for name in names if (data / name).is_dir()]


def text_files(root: Path) -> list[tuple[Path, str]]:
    out = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        raw = path.read_bytes()
        if b"\0" in raw:
            continue
        try:
            out.append((path, raw.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return out


def first_difference(encoder: o200k.Encoder, oracle: Any, text: str) -> str:
    ours, theirs = encoder.pieces(text), oracle.pretokenize(text)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        if a != b:
            return f"piece {i}: ours {a!r} vs bpe-openai {b!r}"
    for i, piece in enumerate(ours):
        a, b = encoder.encode(piece), oracle.encode(piece)
        if a != b:
            return f"piece {i} {piece!r} merges to {a} vs bpe-openai {b}"
    return f"piece counts differ: {len(ours)} vs {len(theirs)}"


def exactness(data: Path, encoder: o200k.Encoder, oracle: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"roots": {}, "files": 0, "chars": 0, "tokens": 0, "mismatches": []}
    for root in sdist_roots(data):
        files = text_files(root)
        for path, text in files:
            ours = encoder.encode(text)
            if ours != oracle.encode(text):
                diff = first_difference(encoder, oracle, text)
                result["mismatches"].append(f"{path}: {diff}")
            result["tokens"] += len(ours)
            result["chars"] += len(text)
        result["roots"][root.name] = len(files)
        result["files"] += len(files)
    return result


def load_costs(repeats: int) -> dict[str, dict[str, float]]:
    out = {}
    for name, load in _LOADERS.items():
        runs = []
        for _ in range(repeats):
            code = _MEASURE.format(load=load)
            line = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout.split()
            runs.append((float(line[0]), float(line[1])))
        out[name] = {
            "load_s": statistics.median(r[0] for r in runs),
            "rss_mb": statistics.median(r[1] for r in runs),
        }
    return out


def _mb_per_s(chars: int, seconds: float) -> float:
    return chars / seconds / 1e6


def speed(data: Path, encoder: o200k.Encoder) -> dict[str, Any]:
    import bpe_openai

    theirs = bpe_openai.get_encoding("o200k_base")
    files = [text for root in sdist_roots(data) if root.name != "Django-5.1"
             for path, text in text_files(root) if path.suffix == ".py" and len(text) < 200_000]
    chars = sum(map(len, files))

    def clock(count: Any) -> float:
        started = time.perf_counter()
        for text in files:
            count(text)
        return time.perf_counter() - started

    encoder._counts.clear()
    cold = clock(encoder.count)
    warm = clock(encoder.count)
    bpe = clock(lambda t: len(theirs.encode(t, disallowed_special=())))

    # A context request: 35 texts of 430 characters; the first one on a cold cache.
    joined = "".join(files[-40:])
    snippets = [joined[i * 430 : (i + 1) * 430] for i in range(35)]

    def request(count: Any) -> float:
        started = time.perf_counter()
        for s in snippets:
            count(s)
        return (time.perf_counter() - started) * 1000

    encoder._counts.clear()
    first = request(encoder.count)
    steady = statistics.median(request(encoder.count) for _ in range(20))
    other = statistics.median(
        request(lambda t: len(theirs.encode(t, disallowed_special=()))) for _ in range(20)
    )
    return {
        "corpus_files": len(files), "corpus_mb": chars / 1e6,
        "ours_cold_mb_s": _mb_per_s(chars, cold), "ours_warm_mb_s": _mb_per_s(chars, warm),
        "bpe_openai_mb_s": _mb_per_s(chars, bpe),
        "request_chars": sum(map(len, snippets)),
        "request_ms_ours_first": first, "request_ms_ours_steady": steady,
        "request_ms_bpe_openai": other,
    }


def huge(encoder: o200k.Encoder, data: Path) -> dict[str, float]:
    out = {}
    started = time.perf_counter()
    encoder.count(" " * 1_000_000)
    out["spaces_1mb_s"] = time.perf_counter() - started
    code = " ".join(text for _, text in text_files(data / "requests-2.32.3")).replace("\n", ";")
    line = (code * (5_000_000 // max(1, len(code)) + 1))[:5_000_000]
    encoder._counts.clear()
    started = time.perf_counter()
    encoder.count(line)
    out["minified_line_5mb_s"] = time.perf_counter() - started
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/bench-data"))
    parser.add_argument("--skip-exactness", action="store_true")
    parser.add_argument("--repeats", type=int, default=3, help="subprocess loads per encoder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from bpe_openai import _bindings

    encoder = o200k.encoder()
    oracle = _bindings.tokenizer_for_encoding("o200k_base")
    report: dict[str, Any] = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    if not args.skip_exactness:
        started = time.perf_counter()
        report["exactness"] = exactness(args.data, encoder, oracle)
        report["exactness"]["seconds"] = time.perf_counter() - started
    report["load"] = load_costs(args.repeats)
    report["speed"] = speed(args.data, encoder)
    report["huge"] = huge(encoder, args.data)

    if args.json:
        print(json.dumps(report, indent=2))
        return 1 if report.get("exactness", {}).get("mismatches") else 0
    if "exactness" in report:
        ex = report["exactness"]
        roots = ", ".join(f"{k} {v}" for k, v in ex["roots"].items())
        print(f"exactness: {ex['files']} files ({roots}), {ex['chars'] / 1e6:.1f} M chars, "
              f"{ex['tokens']} tokens, {len(ex['mismatches'])} mismatching files "
              f"({ex['seconds']:.0f} s)")
        for line in ex["mismatches"][:20]:
            print("  MISMATCH", line)
    print("load (fresh subprocess, median):")
    for name, cost in report["load"].items():
        print(f"  {name:34s} RSS {cost['rss_mb']:6.1f} MB   load {cost['load_s'] * 1000:6.0f} ms")
    sp = report["speed"]
    print(f"count speed over {sp['corpus_files']} .py files ({sp['corpus_mb']:.1f} MB): "
          f"ours {sp['ours_cold_mb_s']:.1f} MB/s cold cache, {sp['ours_warm_mb_s']:.1f} MB/s "
          f"warm; bpe-openai {sp['bpe_openai_mb_s']:.1f} MB/s")
    print(f"context request (35 calls, {sp['request_chars']} chars): ours "
          f"{sp['request_ms_ours_first']:.1f} ms first, {sp['request_ms_ours_steady']:.1f} ms "
          f"steady; bpe-openai {sp['request_ms_bpe_openai']:.1f} ms")
    hu = report["huge"]
    print(f"huge (ours): 1 MB of spaces {hu['spaces_1mb_s']:.1f} s, 5 MB single line "
          f"{hu['minified_line_5mb_s']:.1f} s")
    return 1 if report.get("exactness", {}).get("mismatches") else 0


if __name__ == "__main__":
    sys.exit(main())
