#!/usr/bin/env python3
"""Synapse layer benchmark: next-file prediction on the history dev set, and cost.

    python benchmarks/synapse_bench.py [--data /work/bench-data] [--bench /work/shared/bench]
                                       [--skip-cost] [--tune] [--json]

(a) Next-file (protocol (c) of shared/bench/history/README.md): per repo, replay each
    `history` row as one editing session (open each gold file in order, then edit and
    save each), then for each `test` row with `next_given` ask next_likely_file(given, 5)
    and score Recall@5 against gold_files minus given. Online variant: each test row is
    replayed as a session after its prediction. Two clocks: `synthetic` (sessions one hour
    apart, predictions right after) and `commit` (each session at its commit date, each
    prediction at its test row's date: real decay over years of history).
(c) Cost: activate of a 10-file batch, spread over 100k synapses, decay pass over 1M.

No code graph is needed: editing sessions work on file-level ids.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import random
import sqlite3
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from neuralmind import config
from neuralmind.synapse.layer import SynapseLayer
from neuralmind.synapse.schema import V1_STATEMENTS

BASELINES = {"cochange": 0.665, "cochange_online": 0.673, "popularity": 0.338, "same_dir": 0.222}
HOUR = 3600.0


def load_rows(bench: Path) -> list[dict[str, Any]]:
    path = bench / "history" / "queries.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _epoch(date: str) -> float:
    return datetime.fromisoformat(date).timestamp()


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def replay_row(layer: SynapseLayer, row: dict[str, Any], session: str, ts: float) -> None:
    """One commit as an editing session: open each gold file, then edit and save each."""
    layer.editing_event(session, "session_start", ts=ts)
    for f in row["gold_files"]:
        layer.editing_event(session, "open", f, ts=ts)
    for f in row["gold_files"]:
        layer.editing_event(session, "edit", f, ts=ts)
        layer.editing_event(session, "save", f, ts=ts)
    layer.editing_event(session, "session_end", ts=ts)


def next_file(rows: list[dict[str, Any]], data: Path, clock_kind: str,
              mixes: dict[str, dict[str, float]]) -> dict[str, dict[str, dict[str, float]]]:
    """Recall@5 per mix, per repo and overall, static and online."""
    scores: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list)))
    for repo in dict.fromkeys(r["repo"] for r in rows):
        mine = [r for r in rows if r["repo"] == repo]
        root = data / mine[0]["sdist_root"]
        for variant in ("static", "online"):
            with tempfile.TemporaryDirectory() as tmp:
                base = _epoch(mine[0]["date"])
                clock = Clock(base)
                layer = SynapseLayer(Path(tmp) / ".neuralmind", root, clock=clock)
                n = 0
                for r in mine:
                    if r["split"] == "history":
                        clock.t = base + n * HOUR if clock_kind == "synthetic" else _epoch(r["date"])
                        replay_row(layer, r, f"h{n}", clock.t)
                        n += 1
                for r in mine:
                    if r["split"] != "test":
                        continue
                    if clock_kind == "synthetic":
                        clock.t = base + n * HOUR
                    else:
                        clock.t = max(clock.t, _epoch(r["date"]))
                    given = r.get("next_given")
                    if given:
                        targets = set(r["gold_files"]) - {given}
                        for name, mix in mixes.items():
                            preds = [f for f, _ in layer.next_likely_file(given, 5, mix=mix)]
                            scores[name][variant][repo].append(len(targets & set(preds)) / len(targets))
                    if variant == "online":
                        replay_row(layer, r, f"t{n}", clock.t)
                        n += 1
                layer.close()
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, by_variant in scores.items():
        out[name] = {}
        for variant, by_repo in by_variant.items():
            res = {repo: round(statistics.mean(v), 3) for repo, v in by_repo.items()}
            res["overall"] = round(statistics.mean([x for v in by_repo.values() for x in v]), 3)
            res["n"] = sum(len(v) for v in by_repo.values())
            out[name][variant] = res
    return out


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def _git_commit_row(root: Path, row: dict[str, Any], n: int) -> None:
    for f in row["gold_files"]:
        p = root / f
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"# change {n}\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", f"row {n}")


def cochange_seeding(rows: list[dict[str, Any]], replay: bool) -> dict[str, dict[str, float]]:
    """A git repo whose commits are the history rows, mined by seed_cochange at "build"
    (each prediction is made right after a build). With `replay`, the history rows are also
    replayed as editing sessions at their commit dates and predictions are made at each test
    row's date: real decay of what was learned, plus the priors git keeps fresh. Online:
    commit (and replay) each test row after its prediction, then rebuild."""
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for repo in dict.fromkeys(r["repo"] for r in rows):
        mine = [r for r in rows if r["repo"] == repo]
        for variant in ("static", "online"):
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp) / "repo"
                root.mkdir()
                _git(root, "init", "-q", "-b", "main")
                clock = Clock(_epoch(mine[0]["date"]))
                layer = SynapseLayer(root / ".neuralmind", root, clock=clock)
                n = 0
                for r in mine:
                    if r["split"] == "history":
                        _git_commit_row(root, r, n)
                        if replay:
                            clock.t = _epoch(r["date"])
                            replay_row(layer, r, f"h{n}", clock.t)
                        n += 1
                for r in mine:
                    if r["split"] != "test":
                        continue
                    if replay:
                        clock.t = max(clock.t, _epoch(r["date"]))
                    layer.seed_cochange()  # the build before the prediction (idempotent)
                    given = r.get("next_given")
                    if given:
                        targets = set(r["gold_files"]) - {given}
                        preds = [f for f, _ in layer.next_likely_file(given, 5)]
                        scores[variant][repo].append(len(targets & set(preds)) / len(targets))
                    if variant == "online":
                        _git_commit_row(root, r, n)
                        if replay:
                            replay_row(layer, r, f"t{n}", clock.t)
                        n += 1
                layer.close()
    out: dict[str, dict[str, float]] = {}
    for variant, by_repo in scores.items():
        res = {repo: round(statistics.mean(v), 3) for repo, v in by_repo.items()}
        res["overall"] = round(statistics.mean([x for v in by_repo.values() for x in v]), 3)
        res["n"] = sum(len(v) for v in by_repo.values())
        out[variant] = res
    return out


# --- retrieval with a synapse boost (a stand-in for the engine's hybrid ranking) -----------
def _load_baselines(bench: Path) -> Any:
    spec = importlib.util.spec_from_file_location("bench_baselines", bench / "baselines.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _bm25_scores(index: Any, tokens: Any, query: str) -> list[tuple[str, float]]:
    """The README baseline's BM25 (k1 1.2, b 0.75) with its scores, best first."""
    q = set(tokens(query))
    out = []
    for p in index.paths:
        tf, norm = index.tf[p], 1.2 * (1 - 0.75 + 0.75 * index.len[p] / index.avg)
        out.append((p, sum(index.idf[t] * tf[t] * 2.2 / (tf[t] + norm) for t in q if t in tf)))
    return sorted(out, key=lambda kv: (-kv[1], kv[0]))


def _top_files(index: Any, tokens: Any, query: str, k: int = 5) -> list[str]:
    return [p for p, _ in _bm25_scores(index, tokens, query)[:k]]


def _boosted(ranked: list[tuple[str, float]], layer: SynapseLayer, boost: float, share: float,
             question: str | None, qboost: float) -> list[str]:
    """retrieve._boost's rule: spread from the top 5 files; a boost capped at `boost` x the
    best score; files reached only through synapses enter at `share` x best x energy.
    `qboost` adds the files earlier questions sharing words led to, the same way."""
    best = ranked[0][1] or 1.0
    score = dict(ranked)
    extra: dict[str, float] = defaultdict(float)
    spread = layer.spread([p for p, _ in ranked[:5]], top_k=12)
    if spread:
        top = max(e for _, e in spread) or 1.0
        for f, e in spread:
            extra[f] += boost * best * e / top
    if question and qboost:
        past = layer.question_files(question, k=10)
        if past:
            top = past[0][1] or 1.0
            for f, e in past:
                extra[f] += qboost * best * e / top
    for f, x in extra.items():
        if f in score:
            score[f] += x
        else:
            score[f] = share / boost * x if boost else 0.0
    return [p for p, _ in sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))]


def retrieval(rows: list[dict[str, Any]], data: Path, bench: Path,
              settings: dict[str, tuple[float, float, float]]) -> dict[str, Any]:
    """Recall@5 and MRR on the test split: cold (BM25 alone) and warm after replaying the
    history split, without and with its questions (hits = BM25 top 5 of each question).
    Test queries never teach: nothing is recorded while they are asked."""
    base = _load_baselines(bench)
    out: dict[str, Any] = {}
    per: dict[str, dict[str, list[dict[str, float]]]] = defaultdict(lambda: defaultdict(list))
    for repo in dict.fromkeys(r["repo"] for r in rows):
        mine = [r for r in rows if r["repo"] == repo]
        root = data / mine[0]["sdist_root"]
        index = base.BM25(base.source_files(root))
        tests = [r for r in mine if r["split"] == "test"]
        for replay in ("edits", "edits+questions"):
            with tempfile.TemporaryDirectory() as tmp:
                clock = Clock(_epoch(mine[0]["date"]))
                layer = SynapseLayer(Path(tmp) / ".neuralmind", root, clock=clock)
                if replay == "edits+questions":
                    layer.hits_provider = functools.partial(_top_files, index, base.tokens)
                for n, r in enumerate(x for x in mine if x["split"] == "history"):
                    clock.t += HOUR
                    q = r["query"] if replay == "edits+questions" else None
                    layer.editing_event(f"h{n}", "session_start", ts=clock.t, query=q)
                    for f in r["gold_files"]:
                        layer.editing_event(f"h{n}", "open", f, ts=clock.t)
                    for f in r["gold_files"]:
                        layer.editing_event(f"h{n}", "edit", f, ts=clock.t)
                    layer.editing_event(f"h{n}", "session_end", ts=clock.t)
                for r in tests:
                    ranked = _bm25_scores(index, base.tokens, r["query"])
                    if replay == "edits":
                        per["cold"][repo].append(base.score([p for p, _ in ranked], r["gold_files"]))
                    for name, (boost, share, qboost) in settings.items():
                        if qboost and replay == "edits":
                            continue
                        order = _boosted(ranked, layer, boost, share, r["query"], qboost)
                        per[f"warm[{replay}] {name}"][repo].append(base.score(order, r["gold_files"]))
                layer.close()
    for variant, by_repo in per.items():
        res = {repo: base.mean(ms) for repo, ms in by_repo.items()}
        res["overall"] = base.mean([m for ms in by_repo.values() for m in ms])
        out[variant] = res
    return out


RETRIEVAL_SETTINGS = {  # name: (spread boost, synapse-only share, question-memory boost)
    "boost0.25/share0.5": (0.25, 0.5, 0.0),
    "boost0.1/share0.5": (0.1, 0.5, 0.0),
    "boost0.5/share0.5": (0.5, 0.5, 0.0),
    "boost0.25/share0.25": (0.25, 0.25, 0.0),
    "boost0.25/share0.5 +questions0.25": (0.25, 0.5, 0.25),
    "boost0.25/share0.5 +questions0.5": (0.25, 0.5, 0.5),
    "boost0.1/share0.5 +questions0.25": (0.1, 0.5, 0.25),
    "boost0.1/share0.5 +questions0.1": (0.1, 0.5, 0.1),
    "no spread, questions0.25 only": (0.0, 0.0, 0.25),
}


def mix_grid() -> dict[str, dict[str, float]]:
    grid: dict[str, dict[str, float]] = {"default": dict(config.NEXT_FILE_MIX)}
    for t in (0.0, 0.1, 0.2, 0.3, 0.5, 0.7):
        for p in (0.0, 0.02, 0.05, 0.1, 0.2):
            c = round(1.0 - t - p, 3)
            if c >= 0:
                grid[f"t{t}/c{c}/p{p}"] = {"transition": t, "coactivation": c, "popularity": p}
    return grid


# --- cost ---------------------------------------------------------------------------------
def _timeit(fn: Any, repeat: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds (CPU is the honest figure on a busy machine)."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return round(statistics.median(wall) * 1000, 3), round(statistics.median(cpu) * 1000, 3)


def _bulk_synapses(db_path: Path, n: int, nodes: int, now: float, rng: random.Random) -> None:
    """Write n random synapses straight into the schema (setup only; not what is timed)."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("DROP INDEX synapses_b")  # rebuilt after the load: same index, faster setup
    conn.execute("BEGIN")
    seen: set[tuple[str, str]] = set()
    batch = []
    while len(seen) < n:
        a, b = rng.randrange(nodes), rng.randrange(nodes)
        if a == b:
            continue
        x, y = sorted((f"pkg/mod{a}.py", f"pkg/mod{b}.py"))
        if (x, y) in seen:
            continue
        seen.add((x, y))
        batch.append((x, y, "personal", rng.uniform(0.02, 1.0), rng.randint(1, 8),
                      now - rng.uniform(0, 90) * 86400))
        if len(batch) >= 50_000:
            conn.executemany("INSERT INTO synapses VALUES (?, ?, ?, ?, ?, ?)", batch)
            batch = []
    if batch:
        conn.executemany("INSERT INTO synapses VALUES (?, ?, ?, ?, ?, ?)", batch)
    conn.execute("COMMIT")
    conn.execute(next(s for s in V1_STATEMENTS if "INDEX synapses_b" in s))
    conn.close()


def cost() -> dict[str, Any]:
    rng = random.Random(7)
    now = 1_800_000_000.0
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        layer = SynapseLayer(root / "a" / ".neuralmind", root, clock=lambda: now)
        files = [f"src/pkg{i % 40}/mod{i}.py" for i in range(2000)]
        for _ in range(300):  # warm store: a realistic number of existing edges
            layer.activate(rng.sample(files, 10))
        out["activate_10_files_ms"] = _timeit(lambda: layer.activate(rng.sample(files, 10)), 200)
        out["editing_batch_10_files_ms"] = _timeit(lambda: _session(layer, rng.sample(files, 10)), 100)

        layer = SynapseLayer(root / "b" / ".neuralmind", root, clock=lambda: now)
        layer.stats()  # create the schema
        _bulk_synapses(layer.store.path, 100_000, 10_000, now, rng)
        seeds = [[f"pkg/mod{rng.randrange(10_000)}.py" for _ in range(5)] for _ in range(50)]
        it = iter(seeds * 4)
        out["spread_100k_synapses_ms"] = _timeit(lambda: layer.spread(next(it)), 200)
        out["next_likely_file_100k_ms"] = _timeit(
            lambda: layer.next_likely_file(f"pkg/mod{rng.randrange(10_000)}.py", 5), 100)
        layer.close()

        layer = SynapseLayer(root / "c" / ".neuralmind", root, clock=lambda: now)
        layer.stats()
        _bulk_synapses(layer.store.path, 1_000_000, 200_000, now - 86400, rng)
        t0, c0 = time.perf_counter(), time.process_time()
        pruned = layer.decay_pass(now=now)["synapses"]
        out["decay_pass_1m_synapses_s"] = (round(time.perf_counter() - t0, 3),
                                           round(time.process_time() - c0, 3))
        out["decay_pass_pruned"] = pruned
        layer.close()
    return out


def _session(layer: SynapseLayer, files: list[str]) -> None:
    layer.editing_event("bench", "session_start")
    for f in files:
        layer.editing_event("bench", "edit", f)
    layer.editing_event("bench", "session_end")


# --- report -------------------------------------------------------------------------------
def print_next(title: str, res: dict[str, dict[str, dict[str, float]]], names: list[str]) -> None:
    print(f"\n**{title}** (Recall@5; baselines: co-change {BASELINES['cochange']}, "
          f"co-change online {BASELINES['cochange_online']}, popularity {BASELINES['popularity']}, "
          f"same directory {BASELINES['same_dir']})\n")
    repos = [k for k in res[names[0]]["static"] if k not in ("overall", "n")]
    print("| mix | variant | " + " | ".join(r.split("/")[-1] for r in repos) + " | overall | n |")
    print("|---|---|" + "---:|" * (len(repos) + 2))
    for name in names:
        for variant in ("static", "online"):
            r = res[name][variant]
            print(f"| {name} | {variant} | " + " | ".join(str(r[x]) for x in repos)
                  + f" | {r['overall']} | {r['n']} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/work/bench-data", type=Path)
    ap.add_argument("--bench", default="/work/shared/bench", type=Path)
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument("--tune", action="store_true", help="also score a grid of mixtures")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = load_rows(args.bench)
    mixes = mix_grid() if args.tune else {"default": dict(config.NEXT_FILE_MIX)}
    results: dict[str, Any] = {"next_file": {}, "mixes": mixes}
    for clock_kind in ("synthetic", "commit"):
        t0 = time.perf_counter()
        results["next_file"][clock_kind] = next_file(rows, args.data, clock_kind, mixes)
        results["next_file"][clock_kind + "_seconds"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    results["retrieval"] = retrieval(rows, args.data, args.bench, RETRIEVAL_SETTINGS)
    results["retrieval_seconds"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    results["next_file"]["git_cochange_seeding"] = cochange_seeding(rows, replay=False)
    results["next_file"]["git_cochange_seeding+replay_commit_clock"] = cochange_seeding(rows, replay=True)
    results["next_file"]["git_cochange_seeding_seconds"] = round(time.perf_counter() - t0, 2)
    if not args.skip_cost:
        results["cost"] = cost()
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for clock_kind in ("synthetic", "commit"):
        res = results["next_file"][clock_kind]
        names = ["default"]
        if args.tune:
            ranked = sorted((n for n in res if n != "default"),
                            key=lambda n: -(res[n]["static"]["overall"] + res[n]["online"]["overall"]))
            names += ranked[:8]
        print_next(f"Next-file, {clock_kind} clock", res, names)
    seeded = {"git co-change seeding (no replay)": results["next_file"]["git_cochange_seeding"],
              "git co-change seeding + replay, commit clock":
              results["next_file"]["git_cochange_seeding+replay_commit_clock"]}
    print_next("Next-file with git co-change seeding at each build", seeded, list(seeded))
    print("\n**Retrieval on the test split** (BM25 baseline as the ranker; warm = after replaying "
          "the history split)\n")
    print("| variant | R@1 | R@5 | R@10 | MRR | n |")
    print("|---|---:|---:|---:|---:|---:|")
    for variant, res in results["retrieval"].items():
        o = res["overall"]
        print(f"| {variant} | {o['R@1']} | {o['R@5']} | {o['R@10']} | {o['MRR']} | {o['n']} |")
    if "cost" in results:
        print("\n**Cost** (median wall, CPU)\n")
        for k, v in results["cost"].items():
            print(f"- {k}: {v}")


if __name__ == "__main__":
    main()
