"""kill -9 of `neuralmind build` at random moments on a real repository, many times.

    python benchmarks/stress/kill_build.py [--repo rich-13.7.1] [--runs 50] [--edit 10]

Each run edits --edit files, starts a build, and kills its process group at a uniformly
random moment within 1.2x the last unkilled build's duration, so kills land in every
phase (start-up, walk, parse, resolve, communities, save, seeding, embedding, index
write). After every kill: `neuralmind validate` passes, `neuralmind doctor` finds no
damaged and no moved-aside file (nothing half-written is in use), and `neuralmind query`
answers. At the end the next build finishes and contains every edit.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import time

from stress_common import CLI, ENV, cli, copy_bench_repo, workdir

QUESTION = "how does the console render a table"


def edit(root, rng: random.Random, run: int, n: int) -> list[str]:  # noqa: ANN001
    files = sorted((root / "rich").glob("*.py"))
    names = []
    for p in rng.sample(files, n):
        name = f"stress_kill_run{run}_{p.stem}"
        with p.open("a", encoding="utf-8") as f:
            f.write(f"\n\ndef {name}(value):\n    \"\"\"Added by kill run {run}.\"\"\"\n"
                    "    return value\n")
        names.append(name)
    return names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repo", default="rich-13.7.1")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--edit", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    root = copy_bench_repo(args.repo, workdir("kill") / "repo")

    t = time.monotonic()
    done = cli("build", str(root), timeout=3600)
    assert done.returncode == 0, done.stderr
    full = time.monotonic() - t
    print(f"full build of {args.repo}: {full:.1f} s", flush=True)
    edit(root, rng, -1, args.edit)
    t = time.monotonic()
    assert cli("build", str(root), timeout=3600).returncode == 0
    incremental = time.monotonic() - t
    print(f"incremental build ({args.edit} files): {incremental:.1f} s", flush=True)

    phases: collections.Counter[str] = collections.Counter()
    failures: list[str] = []
    completed = 0
    names: list[str] = []
    for run in range(args.runs):
        names = edit(root, rng, run, args.edit)
        delay = rng.uniform(0, 1.2 * incremental)
        proc = subprocess.Popen([*CLI, "build", str(root)], env=ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        time.sleep(delay)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            err = proc.communicate(timeout=30)[1].decode("utf-8", "replace").strip()
            phase = (err.splitlines()[-1].split(" ")[0] if err else "start-up")
        else:
            completed += 1
            proc.communicate()
            phase = "completed"
        phases[phase] += 1
        checks = {
            "validate": cli("validate", str(root)),
            "doctor": cli("doctor", str(root), "--no-model", "--json"),
            "query": cli("query", QUESTION, str(root), "--json"),
        }
        doctor = json.loads(checks["doctor"].stdout or "{}")
        bad = [c for c in doctor.get("checks", []) if c["status"] == "error"
               or c["name"] == "moved aside"]
        problems = [k for k in ("validate", "query") if checks[k].returncode != 0] + (
            [f"doctor: {bad}"] if bad else [])
        if problems:
            failures.append(f"run {run} ({phase}, {delay:.2f} s): {problems}")
        print(f"run {run:2d}: killed at {delay:5.2f} s in {phase:<20} "
              f"{problems or 'OK'}", flush=True)
    done = cli("build", str(root), timeout=3600)
    search = cli("search", names[0], str(root), "--json")
    final_ok = done.returncode == 0 and names[0] in search.stdout
    print(json.dumps({"runs": args.runs, "kills": args.runs - completed,
                      "finished_before_kill": completed, "phases": dict(phases),
                      "failed_runs": len(failures), "failures": failures[:5],
                      "next_build_finished_with_all_edits": final_ok,
                      "full_build_s": round(full, 1),
                      "incremental_build_s": round(incremental, 1)}, indent=2))


if __name__ == "__main__":
    main()
