"""Shared by the stress scripts: workspaces, process figures, percentiles.

The raw LSP client and the generated repository come from tests/reliability (the same
code the CI-scale tests use), so the stress figures measure exactly what the tests check.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "reliability"))

from lsp_wire import LspProcess  # noqa: E402
from reliability_support import CLI, ENV, cli, git, integrity, make_repo  # noqa: E402

BENCH_DATA = Path(os.environ.get("NEURALMIND_BENCH_DATA", "/work/bench-data"))

__all__ = ["CLI", "ENV", "LspProcess", "cli", "copy_bench_repo", "git", "integrity",
           "make_repo", "pct", "proc_figures", "tree_rss_mb", "workdir"]


def workdir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"nm-stress-{prefix}-"))


def copy_bench_repo(name: str, dest: Path) -> Path:
    """A git repository holding a copy of /work/bench-data/<name> (run fetch_sdists.sh first)."""
    src = BENCH_DATA / name
    if not src.is_dir():
        sys.exit(f"{src} is missing: bash /work/shared/bench/fetch_sdists.sh {BENCH_DATA}")
    shutil.copytree(src, dest)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "import")
    return dest


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def proc_figures(pid: int) -> dict[str, float]:
    """RSS (MB), open descriptors and threads of one process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {"rss_mb": int(fields["VmRSS"].split()[0]) / 1024,
            "fds": len(os.listdir(f"/proc/{pid}/fd")),
            "threads": int(fields["Threads"])}


def tree_rss_mb(pid: int) -> float:
    """RSS of a process and its children (a build worker counts)."""
    out = subprocess.run(["ps", "-o", "rss=", "--ppid", str(pid), "-p", str(pid)],
                         capture_output=True, text=True).stdout
    return sum(int(x) for x in out.split()) / 1024
