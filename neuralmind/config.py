"""Every tunable constant in one place, with the reason for its value.

Components import their defaults from here; a workspace may override some of
them in `.neuralmind.toml` (see `load_workspace_config`). One section per component, each
constant beside its reason: it reads top to bottom, and splitting it would scatter what
one place is for.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

# --- Walk -----------------------------------------------------------------------------------
MAX_FILE_BYTES = 1024 * 1024  # larger files are skipped (reason "too_large")
SKIP_DIRS = frozenset({
    "node_modules", "vendor", "third_party", "dist", "build", ".venv", "venv",
    "site-packages", ".git", ".hg", ".svn", ".neuralmind", "__pycache__", ".tox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".idea", ".vscode",
})

STALE_TEMP_SECONDS = 3600.0  # a `.NAME.*.tmp` in the state folder untouched this long is a
# killed write's leftover (the slowest write, a kernel-sized keyword index, takes minutes): a full build removes it

# --- Extraction ------------------------------------------------------------------------------
BIG_FILE_WORKER_IDLE_SECONDS = 60.0  # the big-file worker (~40 MB) stops after this long unused
# (unless a server holding big files keeps it: big_file_worker.keep_ready)

# Characters of text one regex scan tokenises (index/tokens.py `code_tokens`): a scan
# holds the GIL, ~0.5 ms per 16 KB; a whole 370 KB file in one scan held it 9-26 ms (SAVE15).
TOKEN_SCAN_CHARS = 16384

# Import resolution by path tail (graph/path_suffixes.py): a file name shared by more
# paths than this (`__init__.py`, `Makefile`) is looked up by its last two parts. At 32 a
# group is scanned in a few us; Django's 20k subset has 308 `__init__.py`, whose scans made
# ~290 ms of a new file's save (SAVE15). One entry per path of a split group.
SUFFIX_GROUP_SPLIT_OVER = 32

# --- Retrieval (benchmarks/rank_lab.py; figures in BENCHMARKS.md "Retrieval") ---------------
# Every value below was chosen on the history rows of the 10 history projects (3 Python,
# 7 in Go/Rust/JS/TS/Python) by leave-one-repository-out, under the guard that the public
# symbol and retrieval sets keep their MRR; none is set per language or per repository.
# Symbol ranking: node BM25 and node vectors fused by weighted reciprocal rank.
RRF_K = 10.0                   # grid {5,10,20,30,60}: 10 best on both dev sets
RRF_WEIGHTS = {"bm25": 1.0, "vector": 1.0}   # vector 0.5-1.5 measured: 1 balances the sets
CANDIDATES = 100               # how deep each node list is read (200: no gain)
EXACT_BOOST = 1.0              # added to an exact identifier match: beats any fused score
EXACT_MAX_NODES = 8            # a name shared by more nodes than this is not "exact"
SYMBOL_TEST_FACTOR = 0.5       # test symbols among the symbol hits (L3 shows implementation)
FILE_GROUP_WEIGHT = 0.25       # a file's summed symbol scores, fused back into its symbols
SYMBOL_LIST_DEPTH = 40         # symbols whose files make the file ranking's "symbols" list
# File ranking (index/file_rank.py): three file lists fused by weighted reciprocal rank.
FILE_RRF_K = 10.0              # grid {5, 10, 20}: 10 (20 picked for 2 of 10 held-out repos)
FILE_LIST_WEIGHTS = {"symbols": 4.0, "keywords": 1.0, "meaning": 1.0}  # symbols 2-4 x the
#   others measured: 4 keeps the public sets' MRR (precise "where is X" questions)
FILE_DENSE_CANDIDATES = 300    # nodes read for the "meaning" list (a file at its best node)
FILE_BM25_B = 0.75             # whole files: full length normalisation (0.4 is for nodes,
#   whose texts range from a signature to a file); 0.4-0.9 measured, 0.75 best on both sets
FILE_TEST_FACTOR = 1.0         # 0.5 lost changed test files (38% of the files commits change)
DOC_FACTOR = 0.5               # README/CHANGELOG match every question's words: 1.0 cost
#   history2 R@5 0.04 and MRR 0.07; unless the question is about documentation
PAIR_SHARE = 0.5               # a test scores this share of the best source it exercises
#   (0, 0.5, 0.8 measured; 0.5 best on history rows, test files R@5 +0.05 on history2)
PAIR_FOLLOW_SOURCES = 2        # the best non-test files each bring their paired test into
PAIR_FOLLOW_DEPTH = 20         #   the top five when the test's own evidence ranks it within
PAIR_FOLLOW_POSITION = 5       #   20 files: placed below its source, never above rank 5
#   unless its own evidence put it in the top four (so the best files keep their order:
#   MRR within 0.001; position 1 cost 0.004-0.006). Grid follow {0-3} x depth {5-40} x
#   position {1-5}, by LORO: R@5 history test 0.810 -> 0.827, history2 test 0.673 -> 0.687
MAX_RANKED_FILES = 20          # files an answer ranks (and whose best symbol leads the hits)
# The learned step for change requests (file_rank.learned_rank; questions in question form,
# query.is_locate_question, keep the ranking above). Weights over candidate_features' raw
# features, fitted by pairwise logistic regression on the 10 history projects' tuning rows
# (benchmarks/learn_rank_lab.py --gate; BENCHMARKS.md RETR8: the fit and its LORO).
LEARNED_CANDIDATE_DEPTH = 30   # each list's first files that become candidates (RETR7)
LEARNED_KEYWORD_DEPTH = 100    # whole-file BM25 scores read for the features (RETR7)
PATH_TERMS_KEPT = 4096         # candidate paths' words the learned step keeps (~1 MB; they recur)
# Paths whose test/generated verdict is kept (pairing.is_test_path: ~230 calls, two regex
# searches each, per answer at Django's 20k, on the same few hundred files question after
# question). A verdict is a function of the path alone, so it cannot go stale; < 2 MB full.
TEST_PATHS_KEPT = 8192
# Base documents' token counts BM25Index.length keeps (the learned step's size feature: ~130
# files a change request, the same ones question after question; finding a base number
# bisects the ids). Kept per base: dropped when the document leaves it or a new base comes;
# emptied when full. ~0.1 KB an entry, < 1 MB full.
BASE_LENGTHS_KEPT = 8192
# Paths whose documentation / example-program verdict the file ranking keeps
# (file_rank._doc_kind): the ranking and the learned step ask it of the same few hundred
# files every answer (~250 checks, each a lower-casing and a regex, at Django's 20k). A
# function of the path alone, so nothing goes stale; ~0.3 KB a path, < 2 MB full.
PATH_FACTS_KEPT = 4096
LEARNED_FILE_WEIGHTS: dict[str, float] = {  # every feature group, L2 1e-3, no added
    #   rr_fused, no protected files: the best of a 36-point grid on all ten projects, and the
    #   choice of 4 of 10 nested leave-one-repository-out folds (the other six: the same
    #   groups with one size feature, size_hi or size_z); BENCHMARKS RETR8
    "fused": -0.1215, "rr_fused": 1.148, "rrf_sym": -0.062, "rrf_kw": -0.1399,
    "rrf_mean": 0.1241, "sym_norm": -0.1906, "sym_hits": 0.4933, "kw_norm": 1.778,
    "kw_z": 0.2942, "cos_gap": 2.251, "cos_z": 0.1016, "is_test": -1.055, "is_doc": -6.461,
    "pair_lift": 1.151, "path_match": 4.183, "exact": 1.25, "sym_top": 0.483,
    "size_z": 0.2738, "size_lo": 0.1817, "size_hi": 0.5469}
PAIR_MIN_REFS = 2              # references from a test to a source file that pair them when
#   names do not (one helper import is not a pairing)
# Learned boost (context/retrieve.py), measured before issue #14 on the history sets warm.
SEED_FILES = 3                 # top files that seed spreading activation
SYNAPSE_BOOST = 0.10           # max spread boost, as a fraction of the best file's score
SYNAPSE_NEW_FILE_SHARE = 0.5   # a file reached only through synapses scores at most this share
# Max boost for files that earlier, similar questions led to. 0.25 before issue #14; on the
# file ranking of #14 it cost history2's dev split 0.021 MRR warm (R@1 0.39 -> 0.33), 0.10
# gains on both dev splits (benchmarks/use_bench.py --dev; a lab sweep of 0.05-1.0).
QUESTION_BOOST = 0.10
# The same boost on the learned step's ranking (change requests, index/file_rank.py): a
# fraction of the best file's score, whose scale there is the linear score's (best ~5,
# the fifth file ~2.5 below), not the fused one's. use_bench.py --dev, 0.1 / 0.25 / 0.5:
# warm - cold +0.028 / +0.038 / +0.029 (history), +0.007 / +0.010 / -0.013 (history2);
# on the test rows 0.25 gives +0.030 / +0.010 against 0.10's +0.022 / +0.007 (BENCHMARKS use).
QUESTION_BOOST_LEARNED = 0.25

# --- Context budgets (tokens, o200k_base) ----------------------------------------------------
DEFAULT_BUDGET = 1500          # what an agent turn affords for context: ~1% of a 128k window
# Shares of a budget (L3 takes whatever L0, L1 and L2's share leave): the answer is the
# code. Before issue #14 L3 had a third (1/3 of 1,000 tokens measured 0.31 of the pack on
# the history sets); now L0/L1/L2 are capped at 6/15/13% and L3 gets >= 60% of 1,000.
LAYER_BUDGETS = {"L0": 90, "L1": 220, "L2": 200, "L3": 990}
WAKEUP_BUDGET = 600            # the wake-up pack (L0 + L1) at the default budget
L1_MAX_COMMUNITIES = 8
L1_KEY_SYMBOLS = 3             # entry points named per community
# A community's best symbols kept by rank after a save (graph/community_rank.Ranking): the next
# save re-ranks only its own files' symbols against these. 32: a save would have to demote
# 28 of them before a whole re-rank is needed (the kernel's largest community: 118k symbols)
RANKED_SYMBOLS_KEPT = 32
PAGERANK_DAMPING = 0.85        # the usual value; 20 passes name the same key symbols as 100
#   on rich, werkzeug and just
PAGERANK_ITERATIONS = 20
L2_MAX_COMMUNITIES = 2
L2_SYMBOLS_PER_COMMUNITY = 4
# Workspaces whose L0 identity (README title and first paragraph) is kept: a process serves
# a few; each entry is ~1 KB, dropped whole when full.
IDENTITIES_KEPT = 16
L3_MAX_HITS = 10               # pieces L3 may show, budget permitting (one per top file first)
L3_LINES_PER_HIT = 8           # code lines a piece shows: its declaration, then query matches
L3_SPANS_KEPT = 4096           # per file read, a symbol span's lines per asked token kept (RSS9): a long
                               # session's questions would otherwise grow them without bound
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

# --- Embedding order and coverage (index/embed_order.py, SearchIndex.embed_pending) --------
# Vectors the background build computes ahead of need; the other symbols are represented
# by their file's vector and by keyword search. ~20 min of embedding at ~80 texts/s on 2
# cores and ~75 MB of float16 vectors; whole Django (42,572 nodes) fits under it entirely.
MAX_EMBEDDED_NODES = 100_000
# Which members (a method, a nested function: a qualified name with a dot) get a vector of
# their own: "all", "documented" (only those with a docstring) or "none". A member without
# one is still found by name and keyword, and its file ranks by the file's own vector and
# its other nodes'. "documented" embeds 0.72x the word pieces, "none" 0.49x (the 14 bench
# projects); on today's ranking (the learned file step) each loses quality on a history set
# (BENCHMARKS EMBED10), so every member keeps its vector.
EMBED_MEMBERS = "all"
# glibc malloc arenas the embedding threads share (heap.limit_malloc_arenas): one arena per
# thread kept each thread's last batch activations, +230-290 MB of build peak RSS on requests
# and rich; one shared arena measured no slower (BENCHMARKS.md "Cold index time").
EMBED_MALLOC_ARENAS = 1
EMBED_SLICE = 256              # texts per slice: ~2-4 s on 2 cores, how often attention is read
VECTOR_SAVE_SECONDS = 30.0     # a build writes its vectors this often (whole Django's ~65 MB
#   npz takes ~0.3 s to write): a server reloading them gains coverage meanwhile
ATTENTION_SAVE_SECONDS = 2.0   # ...and this soon after embedding attention files
# Nodes whose texts a keyword-index update holds at once. A file node's keyword text is the
# whole file and a symbol's its body: the Linux kernel's 835k texts held together (and every
# file's lines) took its build past 7.3 GB before the keyword phase was half done (6.6 GB
# peak in chunks: BENCHMARKS.md "Scale: the Linux kernel"); 2,000 at a time are a few MB.
UPDATE_CHUNK = 2_000
# Keyword-index entries (a term in a document) held as Python dicts before they are merged
# into the flat base (index/postings.py): ~35 B each as dicts against ~6 B flat. Each merge
# copies the base, so fewer merges cost time and more cost memory: 4M (~150 MB of dicts)
# is ~15 merges for the Linux kernel's 61.5M entries.
KEYWORD_OVERLAY_ENTRIES = 4_000_000
# Merged name tables of wildcard imports (graph/lookup.py `visible`) a server keeps between
# saves; any other is rebuilt from the symbol tables when a save resolves a file that sees
# it. A C file's includes are nearly its own set, so the Linux kernel had one table per
# file (~9 KB each, ~20% of the resolution state); a Go package or C# namespace shares one.
VISIBLE_TABLES_KEPT = 1024
# A codebase token count in slices (engine/codebase.py) is written at its end, or this long
# after its last write: per slice, the Linux kernel's 1.25 MB file_tokens.json was
# rewritten ~1,100 times a pass.
CODEBASE_SAVE_SECONDS = 30.0
# ...and each engine call of a server's count stops after this long (at least one file):
# 50 of the Linux kernel's files were ~1 s of pure-Python o200k tokenising, and a save or
# an answer arriving meanwhile waited for the slice (29% of a 25 s profile of saves).
CODEBASE_SLICE_SECONDS = 0.05
# ...and a server's count runs only once no question has come for this long: while the
# kernel's build child embedded, the first count (55k files, ~20 min of slices) filled every
# gap of the engine thread and each answer waited for the slice running (LIVE15).
USE_COUNT_AFTER_ASKS_SECONDS = 2.0
MAX_ATTENTION_FILES = 50       # files the service asks the build to embed first
ATTENTION_NEIGHBOURS = 5       # files near an edit (same folder, import neighbours) that join

# --- Server (neuralmind/service) --------------------------------------------------------------
CLOSE_TIMEOUT_SECONDS = 1.2    # shutdown must finish within the 2 s an LSP client waits
# The search index is written to disk once saves pause this long (not on every save:
# ~20 MB of JSON on Django); other processes see the change then.
FLUSH_IDLE_SECONDS = 2.0
# ...and at least this many times as long as the last flush took: on the Linux kernel a
# flush merges and rewrites the whole keyword base and metadata (~750 MB, ~10 s of the
# engine thread), and 2 s of pause fell between consecutive saves, which then waited for
# it (save -> searchable p95 9.7 s through the server). A workspace whose flush is short
# (whole Django: ~0.3 s) keeps the 2 s.
FLUSH_IDLE_PER_FLUSH_SECOND = 5.0
# Before a server has timed a write of its own, a write is expected to take the index's
# size on disk (keyword base + metadata) at this rate: the Linux kernel's 765 MB took
# 9.2-18.2 s on a worker thread (LIVE10: 42-83 MB/s on a shared core). Without it the first
# write was paced at FLUSH_IDLE_SECONDS and overlapped the next saves, which shared the
# GIL with it (KERN11: saves p95 1,057 ms on the kernel against 465 ms without a write).
FLUSH_EXPECTED_BYTES_PER_SECOND = 50e6
# A write waits for saves to pause (above), but never longer than this after the first
# save the disk lacks: under saves that never pause for long the index is still written
# (other processes read it; a server killed before the write loses no save, the graph
# has it and the next build indexes it again, only the vectors the saves embedded).
FLUSH_MAX_DEFER_SECONDS = 300.0
# A server writes the search metadata as the entries changed since the last full file
# (index/search_meta.py) while they and the pending list are at most this share of the
# nodes: past it a delta costs nearly a full write, and every load folds it in. On the
# Linux kernel the full file is 148 MB of JSON, half the writer's GIL time beside saves.
META_DELTA_MAX_SHARE = 0.25
# Saved files' nodes are embedded once saves pause this long: an embedding (~0.1-0.5 s
# on the engine thread) started between two quick saves made the second one wait for it.
EMBED_IDLE_SECONDS = 0.3
# Work a save causes but no save needs waits until saves pause this long: the files near a
# file's first edit (`coverage.files_near`, a running build's attention: on the Linux kernel
# one pass over ~2.6M resolved edges, ~250 ms the engine thread ran between the first save
# of each file and its first answer; KERN13: saves p50 ~700 against ~500 ms for a file
# saved before), and the answers' periodic settle and count (0.5-0.7 s on the kernel, KERN13).
SAVES_PAUSE_SECONDS = 0.3

# --- Freshness (neuralmind/engine/freshness.py, neuralmind/service/worktree.py) ------------
FRESHNESS_MAX_FILES = 20       # files listed per kind in an answer's stamp: an agent reads them
# The change set (`git status`, ~10-80 ms) is re-read this long after the last write to the
# work tree, not per save: a burst of saves or a checkout costs one run.
DIRTY_REFRESH_SECONDS = 0.5
# A checkout that changed more files than this is re-indexed by the background build's child
# process (tree-sitter holds the GIL: parsing many files in the server would stall the
# editor); fewer go through the per-save path and are searchable in milliseconds.
CHECKOUT_INLINE_MAX_FILES = 20
# Unsaved buffers are extracted once edits pause this long (one pass for a burst of typing:
# the per-keystroke cost is what the editor cannot afford); their names are searchable then.
OVERLAY_IDLE_SECONDS = 0.75

# --- Answers scored by use (neuralmind/usage) ---------------------------------------------
# An answer is credited with the files opened and changed this long after it: long enough for
# a developer to read and start the change, short enough not to credit the next task. The
# observatory's Savings view uses the same window for its precision by use.
USE_WINDOW_SECONDS = 1800.0
# Files changed in the window wait this long for the commit that says whether they were kept;
# work left uncommitted longer taught nothing.
KEEP_WAIT_SECONDS = 2 * 86400.0
USE_RETURNED_FILES = 10        # files of an answer kept for scoring (best first)
USE_UNUSED_TOP = 5             # of those, the best ones that count as unused when not used
USE_UNUSED_ABOVE_USED = True   # only those ranked above the first used file count as unused
USE_SETTLE_SECONDS = 60.0      # how often a server settles answers whose window closed
# A server records its answers (usage.db, on the engine thread) once no answer has been given
# for USE_RECORD_IDLE_SECONDS, or USE_RECORD_MAX_WAIT_SECONDS after the first one waiting: recorded
# right after each answer, they sat in the engine's queue ahead of the next request (0.4-0.8 ms
# per ask through the server, BENCHMARKS.md LAT10). Each answer keeps the time it was given, and
# the drain records answers before uses, so what is recorded is the same.
USE_RECORD_IDLE_SECONDS = 0.05
USE_RECORD_MAX_WAIT_SECONDS = 1.0
# A file an earlier similar question's answer returned above what the work used, and that the
# work did not use, takes this much off that file's question -> file association (per question,
# as a file the question led to adds 1), down to no association: weakened, never a penalty below
# the cold ranking (penalties cost 0.002-0.03 MRR on the dev splits; 0.25-1.0 measured).
UNUSED_WEIGHT = 0.5

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

# --- Memory (neuralmind/memory: atoms, recall, rank, feedback, promotion, dreams) ----------------
# Recall: score = gate * lexical + RECALL_ALPHA * max(semantic, RECALL_CODE_WEIGHT * code), each
# in 0..1 over the candidates (the gate: how much of the question the best keyword match covers).
# The form and weights are the best dev-half point of memory_bench.py (BENCHMARKS.md "Memory",
# issue #16 wave C); alpha was flat over 1..5 there, so neoBrain's 2.0 stays.
RECALL_ALPHA = 2.0
RECALL_CODE_WEIGHT = 1.0
RECALL_FIELD_WEIGHTS = (3.0, 2.5, 1.0)   # bm25 weights of label, hubs/tags, text (neoBrain's)
RECALL_GATE_CANDIDATES = 10      # best keyword matches whose question coverage sets the gate (each costs a scan)
RECALL_HUB_BONUS = 0.5           # lexical bonus of an atom in a hub the question names (or a synonym)
RECALL_DEPTH = 50                # candidates each signal (lexical, semantic, hubs, code) proposes
RECALL_SIM_FLOOR = 0.30          # a cosine below this is noise for MiniLM on short texts (decisions' floor)
RECALL_BUDGET = 400              # tokens (o200k) a recall answer spends by default: ~10 one-line memories
RECALL_MAX_K = 10                # memories one recall returns at most, whatever the budget
RECALL_TEXT_CHARS = 300          # a memory's text is clipped to this in a recall answer (get: all of it)
RECALL_CODE_HITS = 10            # code-search hits that make atoms about them candidates
RECALL_FILE_FACTOR = 0.7         # code boost of an atom about a retrieved file, vs one about the symbol
# Rank = clamp01(feedback * decay * connectedness); it moves a recall score by at most +-RANK_SWAY.
RANK_SWAY = 0.10
FEEDBACK_PRIOR = 0.5             # an unrated atom's feedback factor
FEEDBACK_WEIGHTS = {"useful": 0.15, "used": 0.05, "noise": -0.25}  # two noise verdicts reach zero
DECAY_HALF_LIFE_DAYS = 30.0      # age since the atom was last useful
DECAY_FLOOR = 0.5                # age alone never forgets: only noise can bring rank below LOW_RANK
CONNECTEDNESS_BASE = 0.5
CONNECTEDNESS_PER_EDGE = 0.1     # each typed edge (in or out, code included)
CONNECTEDNESS_PER_HUB = 0.05
LOW_RANK = 0.10                  # below: ignored (low exposure) or archived (high exposure)
ARCHIVE_EXPOSURE = 6             # exposure = served + 3 * verdicts: two verdicts, or three looks and one
FEEDBACK_GRACE_SECONDS = 120.0   # unrated atoms past this block the session's next recall
FEEDBACK_TIMEOUT_SECONDS = 600.0  # ... and past this clear as exposure with no verdict
PROMOTION_COMMITS = 3            # a proposed atom's change must survive this many commits after it
DIRECTIVES_MAX_LINES = 8         # the pinned-preferences block: small enough to re-inject every turn
DIRECTIVES_MAX_CHARS = 1000
DREAM_DUPLICATE_COSINE = 0.95    # light: atoms this close are near-duplicates (MiniLM paraphrase ~0.8)
DREAM_ASSOCIATION_WEIGHT = 0.3   # rem: co-activation weight that makes two atoms associated
DREAM_ASSOCIATIONS_PER_ATOM = 5  # rem: strongest associations kept per atom
DREAM_HUB_MIN_ATOMS = 5          # deep: a hub this busy gets a summary atom
DREAM_SUMMARY_SENTENCES = 5      # deep: sentences in a hub summary
DREAM_IDLE_SECONDS = 600.0       # the server dreams after this long without requests or saves
DREAM_INTERVAL_HOURS = 20.0      # ... and at most this often: once a night
WAKEUP_MEMORY_SHARE = 0.5        # of the wake-up budget, at most this goes to memory
WAKEUP_OPEN_LOOPS = 5
WAKEUP_HUBS = 5
WAKEUP_RECENT_COMMITS = 10       # "recently edited": the working tree and the last commits

# --- Review of a pending change (neuralmind/review) -------------------------------------------------
# A file is warned about when together / (of + 1) reaches this: the precision wanted, since a
# warning users learn to ignore is worse than none. benchmarks/review_bench.py: pooled
# precision 0.733 (history) and 0.629 (history2), recall 0.117 and 0.138 (BENCHMARKS.md).
REVIEW_MIN_CONFIDENCE = 0.6
REVIEW_MAX_MISSING = 20        # warnings in one review: past this a change is a refactor, not a slip
REVIEW_MAX_REASONS = 3         # changed files named per warning (the best ones)
REVIEW_DEBOUNCE_SECONDS = 1.0  # the editor's review diagnostics follow saves and edits after this pause

# --- Shared attention: what the editor shows, for agents (engine/attention.py) --------------------
EDITOR_SELECTION_CHARS = 2_000  # selected text kept: enough for a function, not a pasted file
EDITOR_TRAIL = 50               # files and symbols visited that the navigation trail keeps
EDITOR_MAX_FILES = 200          # open files kept from one report (more tabs are noise to an agent)
EDITOR_MAX_RANGES = 20          # visible ranges kept (split editors)
EDITOR_MAX_DIAGNOSTICS = 200    # diagnostics of the active file kept (a broken file has thousands)


# --- Team store (neuralmind/team, PostgreSQL) ------------------------------------------------
TEAM_DSN_ENV = "NEURALMIND_TEAM_DSN"  # overrides team_dsn of .neuralmind.toml (secrets stay out of files)
TEAM_CONNECT_TIMEOUT_S = 5           # an unreachable store must not hold up a CLI command for long
TEAM_PUSH_BATCH = 500                # outbox events per push transaction: one round trip, short row locks
TEAM_PULL_BATCH = 2000               # events fetched per round trip when catching up
TEAM_COALESCE_S = 0.25              # wake-ups this close are one sync: 50 writers at ~120 events/s
                                     # otherwise cost every mirror ~120 fetches and thread wake-ups a
                                     # second (at 0.1 s the 50-writer run was still CPU-bound)
TEAM_POLL_SECONDS = 15.0             # catch-up even without a NOTIFY (one lost in a reconnect gap)
TEAM_RECONNECT_MIN_S = 0.5           # reconnect backoff doubles from here...
TEAM_RECONNECT_MAX_S = 10.0          # ...up to this: a restarted server is found again within 10 s
TEAM_COMPACT_BATCH = 5000            # folded log rows dropped per transaction: short write locks
TEAM_COMPACT_EVERY_S = 60.0          # a long-lived sync drops folded log rows at most this often:
                                     # ~7,000 rows a minute at 120 events/s, two short transactions
TEAM_SEED_REFRESH = 0.75             # a seed is sent when the team's view decayed below 75% of it:
                                     # rebuilding the same history sends nothing for ~25 days
TEAM_SEED_EVENT_ROWS = 2000          # seeded pairs per event: ~100 KB of JSON, one small insert
TEAM_VIEW_BATCH = 500                # team rows written to synapses.db per transaction: the
                                     # store's lock is held a few ms, so queries wait no longer
TEAM_SNAPSHOT_CHUNK_BYTES = 4 * 1024 * 1024  # bytea rows of a snapshot: bounded memory both ways
TEAM_SNAPSHOT_LEVEL = 1              # zlib level of snapshot chunks: level 6 costs 3x the time for ~5% less
TEAM_MEMORY_TYPES = ("decision", "lesson", "preference")  # team-visible atoms (#20): decisions,
                                     # lessons and preferences (directives are pinned ones); notes,
                                     # facts and open loops are personal working memory
TEAM_RECORD_BATCH = 200              # record versions applied to memory.db per transaction: each
                                     # rewrites an atom's rows and FTS entry (~1 ms), the lock stays short
TEAM_QUESTION_MAX_ITEMS = 200        # words or files in one shared question (#20, answers scored by
                                     # use): a real one has < 30; a peer's larger one is refused

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
    embed_threads: int = 0                                    # 0: a batch per core
    use_window_seconds: float = USE_WINDOW_SECONDS            # an answer's use window
    max_embedded_nodes: int = MAX_EMBEDDED_NODES              # the rest at file level
    directives_max_lines: int = DIRECTIVES_MAX_LINES          # the standing-directives block
    directives_max_chars: int = DIRECTIVES_MAX_CHARS
    dream_when_idle: bool = True                              # the server consolidates memory
    editor_state: bool = True                                 # agents may see and steer the editor
    team_dsn: str = ""                                        # team store, never with a password
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
        # ~5 ms of CPU each that the hook client's fast path (which imports this module for
        # two constants and reads no settings) does not pay
        import logging
        import tomllib

        log = logging.getLogger("neuralmind.config")
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
