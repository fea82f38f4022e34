"""Every tunable constant in one place, with the reason for its value.

Components import their defaults from here; a workspace may override some of
them in `.neuralmind.toml` (see `load_workspace_config`).
"""

from __future__ import annotations

import logging
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

log = logging.getLogger("neuralmind.config")

# --- Walk -----------------------------------------------------------------------------------
MAX_FILE_BYTES = 1024 * 1024  # larger files are skipped (reason "too_large")
SKIP_DIRS = frozenset({
    "node_modules", "vendor", "third_party", "dist", "build", ".venv", "venv",
    "site-packages", ".git", ".hg", ".svn", ".neuralmind", "__pycache__", ".tox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".idea", ".vscode",
})

# --- Extraction ------------------------------------------------------------------------------
BIG_FILE_WORKER_IDLE_SECONDS = 60.0  # the big-file worker (~40 MB) stops after this long unused

# --- Context budgets (tokens, o200k_base) ----------------------------------------------------
DEFAULT_BUDGET = 1500          # what an agent turn affords for context: ~1% of a 128k window
LAYER_BUDGETS = {"L0": 100, "L1": 500, "L2": 400, "L3": 500}
WAKEUP_BUDGET = LAYER_BUDGETS["L0"] + LAYER_BUDGETS["L1"]   # the wake-up pack is L0 + L1
MAX_QUESTION_CHARS = 10_000    # a longer "question" is a pasted file, not a question

# --- Request limits: the engine checks them; adapter schemas state the same numbers -----------
MIN_BUDGET = 50                # below this not even the identity layer (L0) fits
MAX_BUDGET = 100_000           # a whole large context window; more is a mistake, not a request
QUERY_HITS = 40                # ranked nodes a query packs from (the context shows the best few)
MAX_SEARCH_K = 200             # hits one search returns; past this, ranks are noise
MAX_NEXT_K = 100               # next-likely files; past this, probabilities are ~0
MAX_SYMBOLS = 100              # workspace-symbol answers (an editor's picker shows ~20)
SYMBOL_SEMANTIC_MIN_CHARS = 3  # shorter symbol queries match names only: meaning needs a word
SYMBOL_SEMANTIC_HITS = 50      # search hits a symbol query adds after the name matches

# --- Synapses (the Hebbian rule: neuralmind/synapse/store.py) -------------------------------
LEARNING_RATE = 0.30
WEIGHT_CAP = 1.0
HALF_LIFE_DAYS = {"personal": 30.0, "shared": 60.0, "ephemeral": 1.0, "branch": 30.0}
TRANSITION_HALF_LIFE_DAYS = 90.0     # sequences are rarer and noisier: they fade slower
LTP_THRESHOLD = 5                    # activations before an edge is long-term potentiated
LTP_FLOOR = 0.20                     # an LTP edge never decays below this
LTP_HALF_LIFE_FACTOR = 3.0           # LTP edges decay this many times slower
PRUNE_THRESHOLD = 0.01
HUB_DEGREE = 20                      # above this degree a node's outgoing energy is divided by degree
SPREAD_DEPTH = 2
SPREAD_DECAY = 0.6
SPREAD_TOP_K = 12
NAMESPACE_WEIGHTS = {"active": 1.0, "personal": 0.8, "shared": 0.5}
STRUCTURAL_BASE = 0.25
STRUCTURAL_LOG_SCALE = 0.15
STRUCTURAL_MAX = 0.70
EDIT_DEBOUNCE_SECONDS = 2.0
COCHANGE_MAX_COMMITS = 500           # git history mined for co-change at build
COCHANGE_MAX_FILES = 20              # commits touching more files are skipped
SYNAPSE_BUSY_TIMEOUT_MS = 2000       # a learning write waits this long for a lock, then is skipped
SPREAD_FRONTIER_MAX = 64             # strongest nodes expanded per hop: same top-12 as 200 at 2/3 the cost
SESSION_IDLE_SECONDS = 900.0         # an editing pause this long closes a co-activation batch
SESSION_MAX_BATCH_FILES = 25         # a batch with more files is flushed: pairs grow quadratically
NEGATIVE_FEEDBACK_FACTOR = 0.5       # negative feedback multiplies a node's edges by this
ACTIVATE_MAX_NODES = 50              # a larger co-activation set is truncated (pairs are n^2/2)
NEXT_FILE_MIX = {"transition": 0.1, "coactivation": 0.88, "popularity": 0.02}  # benchmarks/synapse_bench.py --tune

# --- Server (neuralmind/service) --------------------------------------------------------------
CLOSE_TIMEOUT_SECONDS = 1.2    # shutdown must finish within the 2 s an LSP client waits
# The search index is written to disk once saves pause this long (not on every save:
# ~20 MB of JSON on Django); other processes see the change then.
FLUSH_IDLE_SECONDS = 2.0
# Saved files' nodes are embedded once saves pause this long: an embedding (~0.1-0.5 s
# on the engine thread) started between two quick saves made the second one wait for it.
EMBED_IDLE_SECONDS = 0.3

# --- Decisions ---------------------------------------------------------------------------------
MAX_SCAN_COMMITS = 50          # commits scanned one by one for one HEAD move: a long pull scans its tip


@dataclass
class WorkspaceConfig:
    """Per-workspace settings; the LSP server also accepts these from the editor."""

    budget: int = DEFAULT_BUDGET
    exclude: list[str] = field(default_factory=list)          # extra glob patterns to skip
    languages: dict[str, str] = field(default_factory=dict)   # extension -> language override
    max_file_bytes: int = MAX_FILE_BYTES
    learning: bool = True
    debounce_seconds: float = EDIT_DEBOUNCE_SECONDS
    mcp: bool = True
    mcp_read_only: bool = False                               # agents may consult, not record
    embed_threads: int = 0                                    # 0: onnxruntime's default

    def update(self, values: dict[str, Any]) -> list[str]:
        """Apply known keys with type checks; return a warning per rejected key."""
        problems: list[str] = []
        known = {f.name: f for f in fields(self)}
        for key, value in values.items():
            f = known.get(key)
            if f is None:
                problems.append(f"unknown setting {key!r}")
                continue
            current = getattr(self, key)
            ok = (isinstance(value, bool) if isinstance(current, bool)
                  else isinstance(value, (int, float)) and not isinstance(value, bool)
                  if isinstance(current, (int, float))
                  else isinstance(value, type(current)))
            if not ok or (isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0):
                problems.append(f"invalid value for {key!r}: {value!r}")
                continue
            setattr(self, key, type(current)(value) if isinstance(current, (int, float)) else value)
        return problems


def load_workspace_config(root: Path) -> WorkspaceConfig:
    """Read `<root>/.neuralmind.toml` when present; bad files warn and fall back to defaults."""
    cfg = WorkspaceConfig()
    path = Path(root) / ".neuralmind.toml"
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as e:
            log.warning("ignoring %s: %s", path, e)
            return cfg
        section = data.get("neuralmind", data)
        for problem in cfg.update({k: v for k, v in section.items() if k != "project"}):
            log.warning("%s: %s", path, problem)
    return cfg

# --- Events (neuralmind/events: the bus and its JSON-lines bridge) ------------------------------
# events.jsonl is rotated (to events.jsonl.1) past this size: ~25k events of ~300 bytes, days of
# editing and agent work, while reading the recent tail for the Debug and Savings views stays
# a few milliseconds.
EVENT_LOG_MAX_BYTES = 8 * 1024 * 1024
# How often a serving process polls the log for other processes' events while a page
# watches: 100 ms keeps a pulse from a CLI or hook process well under the 250 ms target,
# and a stat() ten times a second costs nothing measurable.
EVENT_TAIL_INTERVAL_SECONDS = 0.1
# A poll reads at most this much of the log: a backlog (a page opened after a burst) is
# republished in slices, so no single read holds the GIL for long.
EVENT_TAIL_MAX_READ = 256 * 1024
# Foreign event ids remembered to drop duplicates (a log re-read after a rotation).
EVENT_SEEN_IDS = 4096
# Index progress is published at most this often: a build reports every file, a pulse per
# file would flood the page and the log.
INDEX_EVENT_INTERVAL_SECONDS = 0.25
# "Tokens replaced" by a context pack: the whole files its hits point into, as an agent would
# otherwise read them, estimated from their size: o200k averages 4.36 bytes per token over
# this repository's and Django's Python (counting every file per query would cost ms).
BYTES_PER_TOKEN = 4.36
# Files of a query's hits counted as served (and as replaced): the ones a pack shows first.
QUERY_EVENT_FILES = 8
# A served file counts as used when its session opens, edits or saves it this soon after the
# question (precision by use, the Savings view): one task's worth of work.
USE_WINDOW_SECONDS = 30 * 60

# --- Observatory (neuralmind/observatory: the brain in a browser page) ---------------------
# The Brain view draws files, each linked to its few strongest structural neighbours: on
# Django (2.9k files, ~40k cross-file links) 3 per file keeps ~6k edges, which the page
# renders at once and which still show the clusters.
BRAIN_EDGES_PER_FILE = 3
# Learned synapses drawn on the Brain view, strongest first.
BRAIN_SYNAPSES = 1500
# Symbols listed for one file when the page drills into it (a generated module may hold
# thousands; a drill-down wants the ones a person can read through).
BRAIN_FILE_SYMBOLS = 300
# Events the Debug view loads from the log when it opens.
DEBUG_RECENT_EVENTS = 300
# A login link works once, within this time: long enough to switch to the browser, short
# enough that one found later in a terminal's scrollback is useless.
OBSERVATORY_TICKET_SECONDS = 300.0
# Login links and browser sessions one server keeps (the oldest goes first).
OBSERVATORY_MAX_TICKETS = 32
OBSERVATORY_MAX_SESSIONS = 32
# An idle event stream sends a comment this often, so a dead connection is noticed and
# proxies or the browser do not time it out.
OBSERVATORY_HEARTBEAT_SECONDS = 15.0
# Events waiting for one slow page; past this the oldest are dropped (it is a live view).
OBSERVATORY_CLIENT_QUEUE = 2000
# Largest request body (the Ask view's question; MAX_QUESTION_CHARS is 10k characters).
OBSERVATORY_MAX_BODY = 64 * 1024
# Events waiting for the log's writer thread; past this the oldest are dropped (a stalled
# disk must not grow memory: ~300 bytes each, so at most ~3 MB).
EVENT_LOG_MAX_QUEUED = 10_000
