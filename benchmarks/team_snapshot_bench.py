"""Index snapshots on whole Django: publish, size in the database, pull + incremental
update to a commit 10 commits later, and time to first answer on a fresh clone.

    python benchmarks/team_snapshot_bench.py [--work .bench-data/team-django]

The origin is a git repository holding /work/bench-data/Django-5.1 (built once with a
cold full index, which is timed when it has to run). A private PostgreSQL cluster
(fsync on) is started for the run and removed after. Ten commits are then made on top
of the published commit (each edits one real module: a new function with a docstring),
and a fresh `git clone` of the tip pulls the snapshot of its nearest ancestor, updates
incrementally and answers a question: the figure the issue targets (<= 20 s).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "team"))

from pgcluster import Cluster  # noqa: E402

from neuralmind.engine import Workspace  # noqa: E402
from neuralmind.team.service import Team  # noqa: E402

DATA = Path(os.environ.get("NEURALMIND_BENCH_DATA", "/work/bench-data"))
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
EDITED = ["django/db/models/query.py", "django/http/request.py", "django/urls/resolvers.py",
          "django/forms/forms.py", "django/contrib/auth/models.py", "django/core/cache/backends/db.py",
          "django/template/base.py", "django/utils/text.py", "django/views/generic/list.py",
          "django/db/backends/sqlite3/base.py"]
REMOTE = "https://example.com/django/django.git"
QUESTION = "how are queryset results cached between iterations?"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True,
                          capture_output=True, text=True).stdout


def load() -> str:
    return open("/proc/loadavg").read().split()[0:3].__str__()


def origin_repo(work: Path) -> Path:
    origin = work / "origin"
    if not (origin / ".git").is_dir():
        shutil.copytree(DATA / "Django-5.1", origin, ignore=shutil.ignore_patterns(".neuralmind"))
        git(origin, "init", "-q", "-b", "main")
        git(origin, "add", "-A")
        git(origin, "commit", "-qm", "Django 5.1")
    if not git(origin, "remote").strip():   # what teammates' clones will name as well
        git(origin, "remote", "add", "origin", REMOTE)
    git(origin, "reset", "-q", "--hard", git(origin, "rev-list", "--max-parents=0", "HEAD").strip())
    return origin


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path(".bench-data/team-django"))
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    origin = origin_repo(args.work.resolve())
    figures: dict[str, object] = {"load_before": load()}
    if not (origin / ".neuralmind" / "vectors.npz").exists():
        t0 = time.perf_counter()
        Workspace(origin).build()
        figures["cold_full_build_s"] = round(time.perf_counter() - t0, 1)
    cluster = Cluster(fsync=True)
    try:
        cluster.start()
        os.environ["NEURALMIND_TEAM_DSN"] = cluster.dsn()
        base = git(origin, "rev-parse", "HEAD").strip()
        pub = Team(origin).publish_index("HEAD")
        figures["publish_s"] = pub["seconds"]
        figures["index_mb"] = round(pub["bytes"] / 1e6, 1)
        figures["stored_mb"] = round(pub["stored_bytes"] / 1e6, 1)
        figures["files"] = {f["name"]: round(f["bytes"] / 1e6, 1) for f in pub["files"]}
        import psycopg

        with psycopg.connect(cluster.dsn()) as conn:
            figures["db_size_mb"] = round(conn.execute(
                "SELECT pg_total_relation_size('neuralmind.snapshot_chunks')").fetchone()[0]
                / 1e6, 1)
        for i, rel in enumerate(EDITED):   # ten commits on top of the published one
            p = origin / rel
            p.write_text(p.read_text() + f"\n\ndef team_bench_helper_{i}(value):\n"
                         f'    """Normalise value for the team benchmark step {i}."""\n'
                         "    return value\n")
            git(origin, "commit", "-qam", f"step {i}")
        clone = args.work.resolve() / "clone"
        shutil.rmtree(clone, ignore_errors=True)
        git(args.work.resolve(), "clone", "-q", str(origin), str(clone))
        git(clone, "remote", "set-url", "origin", REMOTE)
        figures["load_at_pull"] = load()
        t0 = time.perf_counter()
        pulled = Team(clone).pull_index(update=Workspace(clone).build)
        t1 = time.perf_counter()
        answer = Workspace(clone).query(QUESTION, budget=1000)
        t2 = time.perf_counter()
        figures.update(
            distance=pulled["distance"], pull_s=pulled["seconds"],
            download_s=pulled["download_seconds"], update_s=pulled["update_seconds"],
            reextracted=pulled["reextracted"], first_query_s=round(t2 - t1, 2),
            time_to_first_answer_s=round(t2 - t0, 1), answer_tokens=answer.tokens,
            answer_mode=answer.mode)
        assert pulled["commit"] == base
    finally:
        cluster.destroy()
        git(origin, "reset", "-q", "--hard", git(origin, "rev-list", "--max-parents=0",
                                                 "HEAD").strip())
    figures["load_after"] = load()
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
