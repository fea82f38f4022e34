"""Cold-start priors: the code structure, a bundle from another checkout, and git co-change.

All three land in the `shared` namespace with MAX semantics (weight =
max(existing, seeded), activation count not incremented), so re-seeding at every
build is idempotent and never LTP-protects an edge; a prior the code no longer
supports simply decays (60-day half-life) and is pruned.
"""

from __future__ import annotations

import json
import logging
import math
import subprocess
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from neuralmind import config
from neuralmind.graph.model import file_of

log = logging.getLogger("neuralmind.synapse")

BUNDLE_FORMAT = "neuralmind-synapses"
BUNDLE_VERSION = 1
GIT_TIMEOUT_SECONDS = 30


def structural_weight(count: int) -> float:
    """clamp(BASE + LOG_SCALE * ln(count + 1), MAX): hot paths approach the cap, one-offs stay low."""
    return min(config.STRUCTURAL_MAX,
               config.STRUCTURAL_BASE + config.STRUCTURAL_LOG_SCALE * math.log(max(0, count) + 1))


def file_level_edges(edges: Iterable[tuple[str, str, int]]) -> dict[tuple[str, str], int]:
    """Sum symbol-level relation counts per unordered pair of distinct files."""
    out: Counter[tuple[str, str]] = Counter()
    for source, target, count in edges:
        a, b = file_of(source), file_of(target)
        if a and b and a != b:
            out[(min(a, b), max(a, b))] += max(1, int(count))
    return dict(out)


# --- bundles ----------------------------------------------------------------------------
def parse_bundle(data: Any) -> tuple[dict[tuple[str, str], float], list[tuple[str, str, float]]]:
    """Pairs -> weight (MAX over duplicates) and transitions from a bundle; ValueError if malformed.

    Accepted: {"synapses": [...], "transitions": [...]} (what export_bundle writes) or a bare
    list; a synapse is {"a", "b", "weight"} (or node_a/node_b) or [a, b, weight].
    """
    if isinstance(data, dict):
        if data.get("format", BUNDLE_FORMAT) != BUNDLE_FORMAT:
            raise ValueError(f"not a synapse bundle (format {data.get('format')!r})")
        rows, trans = data.get("synapses", []), data.get("transitions", [])
    elif isinstance(data, list):
        rows, trans = data, []
    else:
        raise ValueError("a bundle is a JSON object with a 'synapses' list, or a list of pairs")
    if not isinstance(rows, list) or not isinstance(trans, list):
        raise ValueError("'synapses' and 'transitions' must be lists")
    pairs: dict[tuple[str, str], float] = {}
    for i, row in enumerate(rows):
        a, b, w = _triple(row, ("a", "node_a"), ("b", "node_b"), f"synapse #{i + 1}")
        key = (min(a, b), max(a, b))
        pairs[key] = max(pairs.get(key, 0.0), min(config.WEIGHT_CAP, w))
    transitions = [_triple(row, ("src",), ("dst",), f"transition #{i + 1}")
                   for i, row in enumerate(trans)]
    return pairs, transitions


def _triple(row: Any, a_keys: tuple[str, ...], b_keys: tuple[str, ...],
            what: str) -> tuple[str, str, float]:
    if isinstance(row, dict):
        a = next((row[k] for k in a_keys if k in row), None)
        b = next((row[k] for k in b_keys if k in row), None)
        w = row.get("weight")
    elif isinstance(row, (list, tuple)) and len(row) == 3:
        a, b, w = row
    else:
        raise ValueError(f"{what}: expected an object or [a, b, weight]")
    if not isinstance(a, str) or not isinstance(b, str) or not a or not b or a == b:
        raise ValueError(f"{what}: needs two different node ids")
    if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w <= 0:
        raise ValueError(f"{what}: weight must be a positive number")
    return a, b, float(w)


def read_bundle(path: Path) -> tuple[dict[tuple[str, str], float], list[tuple[str, str, float]]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} is not valid JSON: {e}") from e
    return parse_bundle(data)


# --- git co-change ----------------------------------------------------------------------
def git_commits(root: Path, max_commits: int = config.COCHANGE_MAX_COMMITS,
                rev: str = "HEAD") -> list[list[str]] | None:
    """Files changed by each of the last `max_commits` non-merge commits reachable from `rev`,
    newest first, paths relative to `root` (restricted to it); None when `root` is not in a
    git checkout or git fails."""
    cmd = ["git", "-c", "core.quotepath=off", "-C", str(root), "log", "--relative",
           "--no-merges", "--no-renames", f"-n{int(max_commits)}", "--name-only",
           "--format=%x1e", rev, "--"]
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=GIT_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        log.info("co-change mining skipped: %s", e)
        return None
    if proc.returncode != 0:
        log.info("co-change mining skipped: %s",
                 proc.stderr.decode("utf-8", "replace").strip().splitlines()[:1] or "git failed")
        return None
    out = proc.stdout.decode("utf-8", "replace")
    return [[ln for ln in chunk.splitlines() if ln.strip()] for chunk in out.split("\x1e")[1:]]


def cochange(commits: list[list[str]], root: Path,
             max_files: int = config.COCHANGE_MAX_FILES) -> tuple[Counter, Counter]:
    """Pair counts and per-file commit counts over commits touching 1..max_files files that
    still exist outside skipped folders (huge commits are reformatting or vendoring, not
    association)."""
    pairs: Counter[tuple[str, str]] = Counter()
    freq: Counter[str] = Counter()
    exists: dict[str, bool] = {}
    for files in commits:
        if not files or len(files) > max_files:
            continue
        live = []
        for f in dict.fromkeys(files):
            if f not in exists:
                exists[f] = (root / f).is_file() and not config.SKIP_DIRS.intersection(
                    f.split("/")[:-1])
            if exists[f]:
                live.append(f)
        live.sort()
        freq.update(live)
        for i, a in enumerate(live):
            for b in live[i + 1:]:
                pairs[(a, b)] += 1
    return pairs, freq
