"""The Linux kernel as a benchmark (issue #21 part 4): build, memory, quality, the server.

    python benchmarks/scale_bench.py build   [--src /work/bench-data/linux-source-6.1] [--work W]
    python benchmarks/scale_bench.py quality [--work W] [--budget 1000]
    python benchmarks/scale_bench.py memory  [--work W]
    python benchmarks/scale_bench.py lsp     [--work W] [--queries 60] [--saves 20]
    python benchmarks/scale_bench.py saves   [--work W] [--saves 12]

`--work` (default /work/scratch-scale/linux) is a copy of the kernel source (made by
`build` with `cp -a`, without any `.neuralmind/`), so saves never touch the bench data.
Debian's package appends `/*` to the top-level .gitignore (its repository holds only the
packaging); `build` removes that block from the copy, or the walk finds no file.

- build: `neuralmind build --no-embed --json` (graph + keyword index, no embeddings) in a
  fresh process: wall, CPU (user + sys, its extraction workers included) from wait4, and
  peak RSS of the whole process tree sampled every 0.5 s from /proc (wait4's ru_maxrss
  is only the largest single process).
- quality: every question of benchmarks/data/kernel_questions.jsonl (written with their
  gold files before anything was measured) through `Workspace.query`, as
  `neuralmind query Q --json` does: Recall@1/5/10 and MRR of the ranked files, the mode
  (keyword / hybrid) and the semantic coverage of the index as it stands (run it before
  and after embedding with a `max_embedded_nodes` cap to compare).
- memory: the graph and the search index loaded as the server loads them (graph,
  resolution state, keyword index, metadata, vectors), the RSS each adds (bytes per
  node), and where the bytes are: nodes, references and edges sized object by object on
  a sample of files, the keyword index's flat arrays (memory-mapped: RSS only for the pages read) and its overlay.
- saves: the server's engine-thread path in process (load, warm-up, answers, then saves
  until searchable), without the LSP transport or the start-up build `lsp` waits for.
- lsp: `neuralmind-lsp` on the indexed copy: initialize, keyword answers p50/p95
  (`neuralmind/search` and `neuralmind/context`), didSave -> searchable p50/p95 (a C
  function appended to a file, searched for by name) once the start-up build's graph is
  served (saves wait only for its graph phase), the server's and its build child's RSS
  every 10 s; `--wait-embedding`: then until the build's embedding ends (its wall and
  CPU), and the saves, answers and questions again.

Every timing carries the load average (`uptime`) beside it: on a shared machine the wall
times are load-bound, CPU times and RSS are not.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "data" / "kernel_questions.jsonl"
SRC = Path("/work/bench-data/linux-source-6.1")
WORK = Path("/work/scratch-scale/linux")
LSP_QUESTIONS = [   # keyword answers in the server: identifiers and phrases a developer types
    "schedule", "try_to_wake_up", "kmalloc", "page fault", "vfs_read", "tcp_sendmsg",
    "netif_receive_skb", "copy_process", "mutex_lock", "spin_lock_irqsave",
    "struct sk_buff", "ext4_map_blocks", "blk_mq_submit_bio", "nvme_queue_rq",
    "rcu_read_lock", "workqueue", "kthread_create", "dma_map_single", "irq handler",
    "inode cache",
]
SAVE_FILES = ["kernel/sched/fair.c", "mm/memory.c", "fs/namei.c", "net/core/dev.c",
              "drivers/base/dd.c", "lib/string.c", "kernel/fork.c", "fs/read_write.c"]


def load_average() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def append_marker(root: Path, i: int) -> tuple[str, str]:
    """Append a new C function to one of SAVE_FILES (the save the bench times): (file, name)."""
    rel = SAVE_FILES[i % len(SAVE_FILES)]
    name = f"bench_marker_{i}_{int(time.time() * 1000) % 100000}"
    path = root / rel
    path.write_bytes(path.read_bytes() + f"\nint {name}(int value)\n{{\n\treturn value;\n}}\n"
                     .encode())
    return rel, name


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))] if s else float("nan")


def descendants(pid: int) -> list[int]:
    """`pid` and every process under it, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def tree_rss_kb(pid: int) -> int:
    """RSS of `pid` and its descendants (processes, not threads), from /proc."""
    total = 0
    for p in descendants(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def rank_figures(ranks: list[int | None]) -> dict[str, float]:
    n = max(1, len(ranks))
    return {"R@1": round(sum(1 for r in ranks if r and r <= 1) / n, 3),
            "R@5": round(sum(1 for r in ranks if r and r <= 5) / n, 3),
            "R@10": round(sum(1 for r in ranks if r and r <= 10) / n, 3),
            "MRR": round(sum(1 / r for r in ranks if r) / n, 3)}


def mem_available_mb() -> float:
    with open("/proc/meminfo") as f:
        return next(int(line.split()[1]) for line in f
                    if line.startswith("MemAvailable:")) / 1024


def upstream_gitignore(work: Path) -> None:
    """The kernel's own top-level .gitignore: Debian's package appends `/*` and `!/debian/`
    (its repository holds only the packaging), which ignores the whole source tree."""
    path = work / ".gitignore"
    text = path.read_text() if path.exists() else ""
    cut = text.find("# Debian packaging")
    if cut >= 0:
        path.write_text(text[:text.rfind("\n#\n", 0, cut) + 1])


def cmd_build(args: argparse.Namespace) -> None:
    work: Path = args.work
    if not work.exists():
        print(f"copying {args.src} -> {work}", flush=True)
        subprocess.run(["cp", "-a", str(args.src), str(work)], check=True)
    upstream_gitignore(work)
    shutil.rmtree(work / ".neuralmind", ignore_errors=True)
    before = load_average()
    peak, samples = [0], []
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "neuralmind.cli.main", "build", "--no-embed",
                             "--json", str(work)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    stop = threading.Event()
    phases: list[tuple[str, float]] = []      # (phase, seconds after start) as it begins

    def follow() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            label = raw.decode(errors="replace").strip().split(" ")[0]
            if label and (not phases or phases[-1][0] != label):
                phases.append((label, round(time.perf_counter() - t0, 1)))

    threading.Thread(target=follow, daemon=True).start()

    def sample() -> None:
        while not stop.wait(0.5):
            kb = tree_rss_kb(proc.pid)
            peak[0] = max(peak[0], kb)
            samples.append((round(time.perf_counter() - t0, 1), kb // 1024))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("the build failed")
    report = json.loads(out)
    figures = {
        "files": report["files"], "nodes": report["nodes"],
        "edges": report["edges_resolved"] + report["edges_heuristic"],
        "communities": report["communities"],
        "skipped": {k: v["count"] for k, v in report["skipped"].items()},
        "wall_s": round(wall, 1), "graph_s": report["seconds"],
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_tree_rss_mb": peak[0] // 1024, "largest_process_rss_mb": usage.ru_maxrss // 1024,
        "phases_start_s": dict(phases),
        "state_mb": {p.name: round(p.stat().st_size / 2**20, 1)
                     for p in sorted((work / ".neuralmind").iterdir()) if p.is_file()},
        "load_before": before, "load_after": load_average(),
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps({**figures, "rss_samples": samples}))


def cmd_quality(args: argparse.Namespace) -> None:
    from neuralmind.engine import Workspace

    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    t0 = time.perf_counter()
    ws = Workspace(args.work)
    graph = ws.graph
    index = ws.index
    load_s = time.perf_counter() - t0
    coverage = index.vector_count / max(1, index.node_count)
    ranks, times, modes, per_row = [], [], set(), []
    for row in rows:
        q0 = time.perf_counter()
        answer = ws.query(row["question"], budget=args.budget).to_json()
        times.append(time.perf_counter() - q0)
        modes.add(answer["mode"])
        files = ([f["file"] for f in answer["files"]] if answer.get("files")
                 else list(dict.fromkeys(h["file"] for h in answer["hits"])))
        first = next((i + 1 for i, p in enumerate(files) if p in set(row["gold"])), None)
        ranks.append(first)
        per_row.append({"id": row["id"], "rank": first, "top3": files[:3]})
    n = len(rows)
    figures = {
        "questions": n, "nodes": len(graph.nodes), "vectors": index.vector_count,
        "semantic_coverage": round(coverage, 4), "modes": sorted(modes),
        **rank_figures(ranks),
        "load_s": round(load_s, 1), "query_p50_ms": round(statistics.median(times) * 1000),
        "query_p95_ms": round(pct(times, 95) * 1000), "load": load_average(),
    }
    print(json.dumps(figures, indent=2))
    for r in per_row:
        print(f"  {r['id']:9} rank {r['rank']!s:5} {', '.join(r['top3'])}")
    if args.json:
        Path(args.json).write_text(json.dumps({**figures, "rows": per_row}))


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def heap_mb(pid: str = "self") -> dict[str, int]:
    """Where a process's RSS is (MB): anonymous pages (the heap, arrays) against file pages
    (memory-mapped files such as bm25.bin and the libraries: clean, the kernel reclaims
    them under pressure). For this process also glibc's view (mallinfo2): bytes malloc
    hands out (`malloc_used`: live objects, pymalloc's arenas included) and bytes it holds
    free (`malloc_free`: fragmentation, what malloc_trim could not return)."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "VmHWM"):
            out[key] = int(rest.split()[0]) // 1024
    if pid == "self":
        try:
            libc = ctypes.CDLL("libc.so.6")
            libc.mallinfo2.restype = _MallInfo2
            info = libc.mallinfo2()
            out["malloc_used"] = (info.uordblks + info.hblkhd) >> 20
            out["malloc_free"] = info.fordblks >> 20
        except (OSError, AttributeError):
            pass
        out.update(pymalloc_mb())
    return out


def file_pages_mb(pid: str, top: int = 8) -> dict[str, int]:
    """Resident MB per mapped file of a process (/proc/PID/smaps), largest first: which
    files' pages make its RssFile (a mapped index read or written is counted in RSS)."""
    sizes: dict[str, int] = {}
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and ":" not in head[0]:
            name = head[5] if len(head) > 5 and head[5].startswith("/") else ""
        elif line.startswith("Rss:") and name:
            sizes[name] = sizes.get(name, 0) + int(head[1])
    return {k: v >> 10 for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])[:top]}


def pymalloc_stats() -> str:
    """What `sys._debugmallocstats` prints (to the C stderr, so read back through a file)."""
    import tempfile
    with tempfile.TemporaryFile() as tmp:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(tmp.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode("utf-8", "replace")


def pymalloc_mb() -> dict[str, int]:
    """CPython's small-object allocator (objects up to 512 B: most of a graph), which maps
    its own 1 MB arenas outside malloc: MB in its arenas, in live blocks, and free inside
    them (blocks and pools free but not returned: its fragmentation)."""
    import re
    fields = {"arenas": r"# arenas allocated current\s*=\s*([\d,]+)",
              "blocks": r"# bytes in allocated blocks\s*=\s*([\d,]+)",
              "free_blocks": r"# bytes in available blocks\s*=\s*([\d,]+)",
              "free_pools": r"\d+ unused pools \* \d+ bytes\s*=\s*([\d,]+)"}
    text = pymalloc_stats()
    out: dict[str, int] = {}
    for key, pattern in fields.items():
        if (m := re.search(pattern, text)):
            value = int(m.group(1).replace(",", ""))
            out[f"pymalloc_{key}"] = value if key == "arenas" else value >> 20
    return out


def _deep(obj: Any, seen: set[int], shared: tuple[type, ...] = ()) -> int:
    """Bytes of `obj` and what it holds (str, tuples, lists, sets, dicts, slotted objects),
    each object counted once (interned strings shared between nodes count where first seen);
    objects of the `shared` types are counted elsewhere (only the pointer to them counts)."""
    if id(obj) in seen or (shared and isinstance(obj, shared)):
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, (list, tuple, set, frozenset)):
        size += sum(_deep(x, seen, shared) for x in obj)
    elif isinstance(obj, dict):
        size += sum(_deep(k, seen, shared) + _deep(v, seen, shared) for k, v in obj.items())
    elif hasattr(obj, "__slots__"):
        size += sum(_deep(getattr(obj, a), seen, shared) for a in obj.__slots__
                    if hasattr(obj, a))
    return size


def resolver_parts(resolver: Any, sample: int) -> dict[str, dict[str, int]]:
    """Where the resolution state's bytes are, table by table: each table's own size plus
    its entries sized on a sample (`sample` entries, scaled up). Nodes, edges and extracts
    are the graph's (shared), so only the pointers to them count; a key object shared by
    several entries counts once per table."""
    from neuralmind.graph.model import Edge, FileExtract, Node

    graph_types = (Edge, Node, FileExtract)

    def size(obj: Any, seen: set[int]) -> int:
        return _deep(obj, seen, graph_types)

    index = resolver.index
    tables = {"call_deps": resolver.call_deps, "base_deps[0]": resolver.base_deps[0],
              "base_deps[1]": resolver.base_deps[1], "import_edges": resolver.import_edges,
              "base_edges": resolver.base_edges, "call_edges": resolver.call_edges,
              "out": resolver.out, "class_bases[0]": resolver.class_bases[0],
              "class_bases[1]": resolver.class_bases[1], "first_bases": resolver.first_bases,
              "keys (shared deps)": resolver._keys, "index.quals": index.quals,
              "index.by_name": index.by_name, "index.bindings": index.bindings,
              "index.wildcards": index.wildcards, "index.implicit": index.implicit,
              "index.families": index.families, "index.bases": index.bases,
              "index._memo": index._memo, "index._memo_deps": index._memo_deps,
              "index._vis_tables": index._vis_tables, "index._vis_ids": index._vis_ids,
              "extracts (dict only)": resolver.extracts, "edges (list only)": resolver.edges}
    for name in ("call_users", "base_users"):       # the dependency tables reversed (key -> files)
        if (users := getattr(resolver, name, None)) is not None:
            for i, table in enumerate(users if isinstance(users, tuple) else (users,)):
                tables[f"{name}[{i}]" if isinstance(users, tuple) else name] = table
    out: dict[str, dict[str, int]] = {}
    for name, table in tables.items():
        own = sys.getsizeof(table)
        if name.endswith("only)") or not table:
            out[name] = {"entries": len(table), "est_mb": round(own / 2**20)}
            continue
        items = list(table.items()) if isinstance(table, dict) else list(enumerate(table))
        picked = items[::max(1, len(items) // sample)][:sample]
        seen: set[int] = set()
        each = sum(size(k, seen) + size(v, seen) for k, v in picked) / len(picked)
        out[name] = {"entries": len(table), "est_mb": round((own + each * len(items)) / 2**20),
                     "bytes_per_entry": round(each)}
    return out


def cmd_memory(args: argparse.Namespace) -> None:
    import gc
    import random

    from neuralmind.graph.build import prepare_incremental
    from neuralmind.graph.store import load_graph
    from neuralmind.heap import return_freed_memory
    from neuralmind.index.search_index import SearchIndex
    from neuralmind.statedir import state_dir

    state = state_dir(args.work)
    marks = [("start", rss_mb(), 0.0)]

    def mark(name: str, t: float) -> None:
        return_freed_memory()
        marks.append((name, rss_mb(), round(time.perf_counter() - t, 1)))

    t = time.perf_counter()
    graph = load_graph(state)
    mark("graph (nodes, edges, extracts with references)", t)
    t = time.perf_counter()
    if not args.no_resolver:
        prepare_incremental(graph)
        mark("resolution state (a server's per-save patching)", t)
    t = time.perf_counter()
    index = SearchIndex(state, args.work)
    mark("search index (keyword index, metadata, vectors)", t)
    nodes = len(graph.nodes)
    parts = [{"part": name, "rss_mb": round(mb - marks[i][1]), "seconds": secs,
              "bytes_per_node": round((mb - marks[i][1]) * 2**20 / max(1, nodes))}
             for i, (name, mb, secs) in enumerate(marks[1:])]
    # where the graph's bytes are: a sample of files, each object counted once
    rng = random.Random(21)
    paths = rng.sample(sorted(graph.extracts), min(args.sample, len(graph.extracts)))
    seen: set[int] = set()
    kinds = {"nodes": 0, "references": 0, "intra-file edges": 0}
    counts = {"nodes": 0, "references": 0, "intra-file edges": 0}
    for p in paths:
        ex = graph.extracts[p]
        for key, items in (("nodes", ex.nodes), ("references", ex.references),
                           ("intra-file edges", ex.edges)):
            kinds[key] += _deep(items, seen)
            counts[key] += len(items)
    scale = len(graph.extracts) / max(1, len(paths))
    sampled = {k: {"est_mb": round(v * scale / 2**20), "count_est": round(counts[k] * scale),
                   "bytes_each": round(v / max(1, counts[k]))} for k, v in kinds.items()}
    resolved = {"count": len(graph.resolved),
                "est_mb": round(sum(sys.getsizeof(e) for e in graph.resolved[:100_000])
                                / max(1, min(100_000, len(graph.resolved)))
                                * len(graph.resolved) / 2**20)}
    bm = index._bm25
    base = bm._base
    keyword = {"docs": len(bm), "terms": base.term_count, "posting_entries": base.entries,
               "flat_arrays_mb": round(sum(a.nbytes for a in (
                   base.lengths, base.term_blob, base.term_off, base.term_hash, base.term_perm,
                   base.post_off, base.post_docs, base.post_tf)) / 2**20),
               "mapped": base._mapped is not None,
               "overlay_docs": len(bm._docs), "overlay_entries": bm._entries}
    resolver = None if args.no_resolver else resolver_parts(graph.resolver, args.sample)
    gc.collect()
    figures = {"nodes": nodes, "edges": len(graph.edges), "files": len(graph.files),
               "keyword_docs": index.node_count, "vectors": index.vector_count,
               "rss_total_mb": round(rss_mb()), "parts": parts,
               "graph_sample": {"files": len(paths), **sampled, "resolved edges": resolved},
               "keyword_index": keyword, "resolution_state": resolver,
               "load": load_average()}
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures))


def cmd_saves(args: argparse.Namespace) -> None:
    """The server's engine-thread path in process: load and warm up as `neuralmind-lsp`
    does, answer LSP_QUESTIONS (search and context), then save: a C function appended
    to a SAVE_FILES file, `update_files`, and a search that finds it. No LSP transport,
    no debounce, no start-up build to wait for (the `lsp` command waits for it)."""
    from neuralmind.config import WorkspaceConfig
    from neuralmind.engine.workspace import Workspace

    root: Path = args.work
    figures: dict[str, Any] = {"load_at_start": load_average()}
    t = time.perf_counter()
    ws = Workspace.open_for_serving(root, WorkspaceConfig())
    figures["open_s"], figures["rss_open_mb"] = round(time.perf_counter() - t, 1), round(rss_mb())
    figures["heap"] = {"open": heap_mb()}
    t = time.perf_counter()
    ws.warm_up()
    figures["warm_up_s"], figures["rss_warm_mb"] = round(time.perf_counter() - t, 1), round(rss_mb())
    figures["heap"]["warm"] = heap_mb()
    for label, ask in (("search", lambda q: ws.search(q, k=10)),
                       ("context", lambda q: ws.query(q, budget=1000))):
        ms = []
        for q in LSP_QUESTIONS * 2:
            t = time.perf_counter()
            ask(q)
            ms.append((time.perf_counter() - t) * 1000)
        figures[label] = {"first_ms": round(ms[0]), "p50_ms": round(pct(ms, 50)),
                          "p95_ms": round(pct(ms, 95)), "rss_mb": round(rss_mb())}
        figures["heap"][label] = heap_mb()
    saves: list[float] = []
    originals = {rel: (root / rel).read_bytes() for rel in SAVE_FILES}
    try:
        for i in range(args.saves):
            rel, name = append_marker(root, i)
            t = time.perf_counter()
            ws.update_files([rel])
            hits, _, _ = ws.search(name, k=1)
            saves.append(time.perf_counter() - t)
            if not hits or hits[0].node.name != name:
                sys.exit(f"{name} not searchable after its save")
    finally:
        for rel, data in originals.items():
            (root / rel).write_bytes(data)
    figures.update({"save_p50_ms": round(pct(saves, 50) * 1000),
                    "save_p95_ms": round(pct(saves, 95) * 1000),
                    "save_ms": [round(x * 1000) for x in saves],
                    "rss_after_saves_mb": round(rss_mb())})
    figures["heap"]["saves"] = heap_mb()
    t = time.perf_counter()
    ws.flush_index()          # what the server does once saves pause (index written, heap settled)
    figures.update({"flush_s": round(time.perf_counter() - t, 1),
                    "rss_settled_mb": round(rss_mb()), "load_at_end": load_average()})
    figures["heap"]["settled"] = heap_mb()
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures))


def proc_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of one process so far (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def build_child(pid: int) -> int | None:
    """The server's build worker (not its big-file worker), if one runs."""
    for p in descendants(pid)[1:]:
        try:
            if b"build_worker" in Path(f"/proc/{p}/cmdline").read_bytes():
                return p
        except OSError:
            continue
    return None


def proc_rss_mb(pid: int | None) -> int:
    if pid is None:
        return 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


async def kernel_questions(client: Any) -> dict[str, Any]:
    """The kernel questions through the server as it stands: ranks of the gold files."""
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    ranks, modes = [], set()
    for row in rows:
        answer = await client.request("neuralmind/context",
                                      {"query": row["question"], "budget": 1000})
        modes.add(answer.get("mode"))
        files = ([f["file"] for f in answer["files"]] if answer.get("files")
                 else list(dict.fromkeys(h["file"] for h in answer.get("hits", []))))
        ranks.append(next((i + 1 for i, p in enumerate(files) if p in set(row["gold"])), None))
    return {"modes": sorted(m for m in modes if m), **rank_figures(ranks), "ranks": ranks}


async def keyword_answers(client: Any, queries: int) -> dict[str, Any]:
    for q in LSP_QUESTIONS[:3]:      # warm-up
        await client.request("neuralmind/search", {"query": q, "k": 10})
    search_ms, context_ms = [], []
    for i in range(queries):
        q = LSP_QUESTIONS[i % len(LSP_QUESTIONS)]
        t = time.perf_counter()
        found = await client.request("neuralmind/search", {"query": q, "k": 10})
        search_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        await client.request("neuralmind/context", {"query": q, "budget": 1000})
        context_ms.append((time.perf_counter() - t) * 1000)
    return {"search_p50_ms": round(pct(search_ms, 50)), "search_p95_ms": round(pct(search_ms, 95)),
            "context_p50_ms": round(pct(context_ms, 50)),
            "context_p95_ms": round(pct(context_ms, 95)), "mode": found.get("mode"),
            "load": load_average()}


async def timed_saves(client: Any, root: Path, count: int, first: int) -> dict[str, Any]:
    """`count` saves (a C function appended, didSave, searched for until found)."""
    saves: list[float] = []
    originals = {rel: (root / rel).read_bytes() for rel in SAVE_FILES}
    before = (await client.request("neuralmind/status", {})).get("indexing")
    try:
        for i in range(first, first + count):
            rel, name = append_marker(root, i)
            saves.append(await searchable_after_save(client, root / rel, name))
    finally:
        for rel, data in originals.items():
            (root / rel).write_bytes(data)
    after = (await client.request("neuralmind/status", {})).get("indexing")
    return {"p50_ms": round(pct(saves, 50) * 1000), "p95_ms": round(pct(saves, 95) * 1000),
            "max_ms": round(max(saves) * 1000), "ms": [round(x * 1000) for x in saves],
            "indexing_before": before, "indexing_after": after, "load": load_average()}


async def lsp_run(args: argparse.Namespace, holder: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from lsp_bench import Client  # the same protocol client

    class KernelClient(Client):
        """lsp_bench's client, waiting as long as a kernel-sized load takes (its 120 s is
        for Django): the first answers wait for the graph and keyword index to load."""

        async def request(self, method: str, params: Any) -> Any:
            self.next_id += 1
            fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self.pending[self.next_id] = fut
            self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                        "params": params})
            msg = await asyncio.wait_for(fut, 3600)
            if "error" in msg:
                raise RuntimeError(f"{method}: {msg['error']}")
            return msg["result"]

    root: Path = args.work
    env = {**os.environ, "NEURALMIND_LOG": "warning"}
    client = holder["client"] = KernelClient(root, env)
    t_spawn = time.perf_counter()
    await client.start()
    init_s = await client.initialize()
    out: dict[str, Any] = {"initialize_s": round(init_s, 3),
                           "spawn_to_initialized_s": round(time.perf_counter() - t_spawn, 3),
                           "load_at_start": load_average()}
    print(json.dumps(out), flush=True)
    # RSS of the server and of its build child every 10 s, with the moment's step
    rss: list[tuple[int, int, int, str]] = []
    step = ["start"]
    child_cpu: dict[int, float] = {}

    async def sample() -> None:
        while client.proc is not None and client.proc.returncode is None:
            child = build_child(client.proc.pid)
            if child is not None and (cpu := proc_cpu_s(child)) is not None:
                child_cpu[child] = cpu
            rss.append((round(time.perf_counter() - t_spawn), round(client.rss_mb()),
                        proc_rss_mb(child), step[0]))
            await asyncio.sleep(10)

    sampler = asyncio.create_task(sample())
    # the first answer after start-up (the graph and keyword index load in the background)
    t0 = time.perf_counter()
    while True:
        found = await client.request("neuralmind/search", {"query": "schedule", "k": 5})
        if found.get("hits"):
            break
        await asyncio.sleep(0.2)
    out["first_keyword_answer_s"] = round(time.perf_counter() - t0, 2)
    out["rss_at_first_answer_mb"] = round(client.rss_mb())
    print(json.dumps(out), flush=True)
    if args.questions:     # the kernel questions through the server, as it stands (keyword)
        step[0] = "questions"
        out["quality"] = await kernel_questions(client)
        print(json.dumps(out), flush=True)
    step[0] = "answers"
    out["answers"] = await keyword_answers(client, args.queries)
    print(json.dumps(out), flush=True)
    # saves wait only while the build's graph phase runs (service/indexing.py)
    step[0] = "graph phase"
    while True:
        state = (await client.request("neuralmind/status", {})).get("indexing")
        if state is None or state.get("graph_ready"):
            break
        await asyncio.sleep(2)
    out["graph_served_s"] = round(time.perf_counter() - t_spawn)
    # saves also wait for the warm-up (the state saves patch is made aside while answers go
    # on: `warming_up` in the status): timed saves start after it, its end reported apart
    while (await client.request("neuralmind/status", {})).get("warming_up"):
        await asyncio.sleep(1)
    out["warmed_up_s"] = round(time.perf_counter() - t_spawn)
    print(json.dumps(out), flush=True)
    out["server_heap"] = {"graph served": heap_mb(str(client.proc.pid))}
    step[0] = "saves"
    out["saves"] = await timed_saves(client, root, args.saves, 0)
    out["server_heap"]["saves"] = heap_mb(str(client.proc.pid))
    print(json.dumps(out), flush=True)
    step[0] = "answers"
    out["answers_after_saves"] = await keyword_answers(client, args.queries)
    print(json.dumps(out), flush=True)
    if args.wait_embedding:
        step[0] = "embedding"
        while (await client.request("neuralmind/status", {})).get("indexing") is not None:
            await asyncio.sleep(5)
        out["build_done_s"] = round(time.perf_counter() - t_spawn)
        out["build_child_cpu_s"] = round(sum(child_cpu.values()))
        status = await client.request("neuralmind/status", {})
        out["status_after_build"] = {k: status.get(k) for k in (
            "semantic_coverage", "file_level_nodes", "embeddings_pending", "embedded_nodes")}
        print(json.dumps(out), flush=True)
        step[0] = "saves after"
        out["saves_after_build"] = await timed_saves(client, root, args.saves, 1000)
        step[0] = "answers after"
        out["answers_after_build"] = await keyword_answers(client, args.queries)
        if args.questions:
            step[0] = "questions after"
            out["quality_after_build"] = await kernel_questions(client)
        print(json.dumps(out), flush=True)
    status = await client.request("neuralmind/status", {})
    out["status"] = {k: status.get(k) for k in ("semantic_coverage", "file_level_nodes",
                                                 "embeddings_pending", "indexing")}
    step[0] = "idle"
    await asyncio.sleep(10 * args.settle)        # RSS steady: sampled while idle
    sampler.cancel()
    out["server_heap"]["idle"] = heap_mb(str(client.proc.pid))
    out["server_files_idle"] = file_pages_mb(str(client.proc.pid))
    out["rss_mb"] = rss            # (seconds, server MB, build child MB, step)
    out["rss_server_max_mb"] = max(r[1] for r in rss)
    out["rss_server_after_saves_mb"] = [r[1] for r in rss if r[3] not in (
        "start", "questions", "answers", "graph phase")]
    out["tree_rss_end_mb"] = round(tree_rss_kb(client.proc.pid) / 1024) if client.proc else None
    out["load_at_end"] = load_average()
    await client.stop()
    return out


async def searchable_after_save(client: Any, path: Path, name: str,
                                timeout: float = 600) -> float:
    """Seconds from didSave of `path` until a search finds the function `name`."""
    t0 = time.perf_counter()
    client.notify("textDocument/didSave", {"textDocument": {"uri": path.as_uri()}})
    while time.perf_counter() - t0 < timeout:
        found = await client.request("neuralmind/search", {"query": name, "k": 1})
        # "symbol" is the qualified name: the kernel's fair.c parses the appended function
        # inside `set_skip_buddy` (its macros), so the marker is `set_skip_buddy.<name>`
        if found["hits"] and found["hits"][0]["symbol"].rpartition(".")[2] == name:
            return time.perf_counter() - t0
        await asyncio.sleep(0.01)
    raise TimeoutError(f"{name} never became searchable")


async def guarded(args: argparse.Namespace) -> dict[str, Any]:
    """lsp_run, stopped (server and build child killed) if the machine runs short of memory:
    the kernel's server and its build child each hold GBs on a machine others share."""
    holder: dict[str, Any] = {}
    run = asyncio.create_task(lsp_run(args, holder))
    while not run.done():
        await asyncio.sleep(1)
        if mem_available_mb() < args.min_free_mb:
            client = holder.get("client")
            if client is not None and client.proc is not None:
                for pid in descendants(client.proc.pid):   # our server and its build child
                    os.kill(pid, 9)
            run.cancel()
            return {"aborted": f"MemAvailable under {args.min_free_mb} MB", "load": load_average()}
    return run.result()


def cmd_lsp(args: argparse.Namespace) -> None:
    toml = args.work / ".neuralmind.toml"
    if args.max_embedded is not None:     # e.g. 1: a keyword server (saves wait for no embedding)
        toml.write_text(f"max_embedded_nodes = {args.max_embedded}\n")
    try:
        figures = asyncio.run(guarded(args))
    finally:
        if args.max_embedded is not None:
            toml.unlink(missing_ok=True)
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, fn in (("build", cmd_build), ("quality", cmd_quality), ("memory", cmd_memory),
                     ("lsp", cmd_lsp), ("saves", cmd_saves)):
        p = sub.add_parser(name)
        p.add_argument("--work", type=Path, default=WORK)
        p.add_argument("--json", default=None, help="also write the figures here")
        p.set_defaults(fn=fn)
        if name == "build":
            p.add_argument("--src", type=Path, default=SRC)
        if name == "memory":
            p.add_argument("--sample", type=int, default=2000, help="files sampled for sizes")
            p.add_argument("--no-resolver", action="store_true")
        if name == "quality":
            p.add_argument("--budget", type=int, default=1000)
        if name == "saves":
            p.add_argument("--saves", type=int, default=12)
        if name == "lsp":
            p.add_argument("--queries", type=int, default=60)
            p.add_argument("--saves", type=int, default=20)
            p.add_argument("--settle", type=int, default=3, help="10 s idle RSS samples at the end")
            p.add_argument("--max-embedded", type=int, default=None,
                           help="max_embedded_nodes for this run (.neuralmind.toml)")
            p.add_argument("--questions", action="store_true",
                           help="also ask the kernel questions through the server")
            p.add_argument("--wait-embedding", action="store_true",
                           help="then wait for the start-up build's embedding to end, and "
                                "save, answer (and ask) again")
            p.add_argument("--min-free-mb", type=int, default=2500,
                           help="stop everything when the machine has less available")
    args = parser.parse_args()
    args.work = args.work.resolve()
    args.fn(args)


if __name__ == "__main__":
    main()
