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

# --- Agent hooks (neuralmind/hooks, engine/agent_context.py) ----------------------------------
# What a prompt gets pushed: a one-line-per-file index and the top hit's key lines. 400 tokens is
# ~0.3% of a 128k window per turn; the seed's per-turn recall (top 10 one-liners + the best hit)
# measured about the same.
HOOK_PROMPT_BUDGET = 400
HOOK_PROMPT_FILES = 8          # index lines (files) at most; a ninth file is rarely opened
HOOK_PROMPT_MEMORY = 3         # memory lines (decisions, atoms) at most
HOOK_KEY_LINES = 8             # the top hit's lines shown
HOOK_RELATIVE_FLOOR = 0.35     # files scoring under this share of the best are noise in a push
HOOK_MIN_PROMPT_TERMS = 2      # "yes, go on", "thanks": no task terms, nothing to retrieve for
HOOK_SEARCH_FILES = 5          # files named beside a grep/glob the agent runs
# The hook waits this long for the warm server, then gives up silently: the agent's turn must
# not stall behind a busy engine thread (a first answer after a restart can take ~1 s).
HOOK_SERVER_TIMEOUT_SECONDS = 2.0
HOOK_LOG_MAX_BYTES = 256 * 1024   # .neuralmind/hooks.log is rotated (one old copy) past this

# --- The retrieval probe (engine/probe.py, `neuralmind probe`, `doctor`) --------------------------
PROBE_SAMPLE = 200             # symbols asked by `neuralmind probe`: MRR stable to ~±0.03
DOCTOR_PROBE_SAMPLE = 40       # doctor's quick look (~2-4 s warm on a laptop)
PROBE_K = 10                   # a symbol ranked below this counts as not found (RR 0)
PROBE_MIN_DOC_WORDS = 3        # a docstring with fewer search terms left is no question
PROBE_QUESTION_CHARS = 300     # the first paragraph, cut here: a question, not an essay
PROBE_MIN_GROUP = 3            # a directory or community needs this many probes to be judged
# Below this MRR doctor warns. Healthy indexes measured 0.6-0.9 (BENCHMARKS.md, "Probe");
# a missing or stale vector index falls to ~0.3-0.4, keyword-only.
PROBE_HEALTHY_MRR = 0.5

# --- MCP tool profiles (neuralmind/mcp/profiles.py) ---------------------------------------------
# Tool definitions are paid for on every agent turn: `default` must stay <= 2,500 o200k tokens
# and `minimal` <= 1,000 (benchmarks/tool_list_bench.py asserts both).
DEFAULT_TOOL_PROFILE = "default"
TOOL_LIST_BUDGETS = {"minimal": 1_000, "default": 2_500}

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
    mcp_tools: str = DEFAULT_TOOL_PROFILE                     # minimal | default | all | a,b,c
    hook_budget: int = HOOK_PROMPT_BUDGET                     # tokens a prompt hook may add

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
