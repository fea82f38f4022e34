"""Language-server figures through the real protocol, on a copy of a benchmark repository.

    python benchmarks/lsp_bench.py [--repo rich-13.7.1] [--edits 1000] [--edit-pause-every 0] [--saves 30]

Prints (and with --json writes) time to first answer after `initialize` (cold:
no index; warm: index present), time to a complete index, didSave-to-searchable
p50/p95, unsaved-edit-to-searchable p50/p95 (the buffer overlay), context-request p50/p95, the event loop's largest stall while the full
background index runs (the server's own ticker, NEURALMIND_LOOP_MONITOR=1), and
the server's RSS after indexing and after N simulated edits.

Targets (PRODUCT.md section 4): context p95 < 50 ms, didSave-to-searchable p95 <
300 ms, stall < 20 ms, RSS < 400 MB (20k nodes), flat across edits.

With --team the servers run connected to a team store (a private PostgreSQL cluster
started here, fsync on) that is kept busy the whole run: a generator process pushes
--team-rate learning batches per second from --team-devs simulated teammates over the
repository's files, which the server pulls, folds and writes into its synapse store
while it is measured; the server's own learning is pushed too. The team figures
(events pulled and pushed, rows shown) are printed beside the editor's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DATA = Path(os.environ.get("NEURALMIND_BENCH_DATA", "/work/bench-data"))
QUESTIONS = [
    "how does the console render a table", "progress bar refresh rate", "syntax highlighting theme",
    "markdown rendering of code blocks", "how are styles parsed from strings",
    "traceback with locals", "live display update", "text wrapping and justification",
    "emoji replacement", "logging handler for rich output", "measure the width of renderables",
    "prompt for confirmation", "tree rendering guides", "pretty printing of containers",
    "color downgrade to 256 colors", "segment splitting by lines",
]


MCP_ON = [False]     # --mcp: serve MCP on loopback too, as an editor does by default
COLD_QUESTION = [QUESTIONS[0]]   # --question: asked during the cold index (attention)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    i = min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))
    return s[i]


class Client:
    """Minimal asyncio LSP client: requests, notifications, timestamps of what arrives."""

    def __init__(self, root: Path, env: dict[str, str], log: Any = None) -> None:
        self.root = root
        self.log = log if log is not None else asyncio.subprocess.DEVNULL
        self.env = env
        self.proc: asyncio.subprocess.Process | None = None
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.progress: list[tuple[float, dict[str, Any]]] = []
        self.diagnostics: dict[str, list[Any]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "neuralmind.cli.server_cmds", "--stdio",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=self.log, env=self.env, cwd=self.root, limit=2 ** 26)
        self._reader = asyncio.create_task(self._read())

    def _send(self, obj: dict[str, Any]) -> None:
        body = json.dumps(obj).encode()
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        while True:
            length = 0
            while True:
                line = await out.readline()
                if not line:
                    for fut in self.pending.values():
                        if not fut.done():
                            fut.set_exception(RuntimeError("the server closed its output"))
                    return
                if line == b"\r\n":
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(await out.readexactly(length))
            if "method" in msg and "id" in msg:          # server -> client request
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif "method" in msg:
                if msg["method"] == "$/progress":
                    self.progress.append((time.monotonic(), msg["params"]["value"]))
                elif msg["method"] == "textDocument/publishDiagnostics":
                    self.diagnostics[msg["params"]["uri"]] = msg["params"]["diagnostics"]
            else:
                fut = self.pending.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = fut
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        msg = await asyncio.wait_for(fut, 120)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg["result"]

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def initialize(self) -> float:
        t0 = time.perf_counter()
        await self.request("initialize", {
            "processId": os.getpid(), "rootUri": self.root.as_uri(),
            "capabilities": {"window": {"workDoneProgress": True}},
            "initializationOptions": {"neuralmind": {"mcp": MCP_ON[0]}}})
        took = time.perf_counter() - t0
        self.notify("initialized", {})
        return took

    def index_ended(self) -> bool:
        return any(v.get("kind") == "end" for _, v in self.progress)

    async def wait_indexed(self, timeout: float = 3600) -> float:
        t0 = time.monotonic()
        while not self.index_ended():
            if time.monotonic() - t0 > timeout:
                raise TimeoutError("indexing did not finish")
            if self.proc is not None and self.proc.returncode is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}")
            await asyncio.sleep(0.05)
        return time.monotonic() - t0

    def rss_mb(self) -> float:
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def cpu_s(self) -> float:
        """The server's CPU seconds so far (user + system), to tell its own cost from the
        machine's load (with --team the generator and PostgreSQL share the cores)."""
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    async def stop(self) -> float:
        t0 = time.perf_counter()
        await self.request("shutdown", None)
        self.notify("exit", None)
        assert self.proc is not None
        await asyncio.wait_for(self.proc.wait(), 10)
        return time.perf_counter() - t0


def copy_repo(name: str, dest: Path) -> Path:
    src = BENCH_DATA / name
    if not src.is_dir():
        how = ("bash benchmarks/make_django_20k.sh" if name == "django-20k"
               else f"bash /work/shared/bench/fetch_sdists.sh {BENCH_DATA}")
        sys.exit(f"{src} not found: run {how}")
    root = dest / name
    shutil.copytree(src, root, ignore=shutil.ignore_patterns(".neuralmind"))
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "bench"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


async def first_answer(c: Client) -> tuple[float, bool]:
    t0 = time.perf_counter()
    out = await c.request("neuralmind/context", {"query": QUESTIONS[0], "budget": 1000})
    return time.perf_counter() - t0, bool(out.get("partial"))


async def first_ranked_answer(c: Client, timeout: float = 600) -> list[str]:
    """Ask until an answer ranks files; returns the files the service pays attention to."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        out = await c.request("neuralmind/context", {"query": COLD_QUESTION[0], "budget": 1000})
        if out.get("files"):
            return [f["file"] for f in out["files"][:5]]
        await asyncio.sleep(0.1)
    raise TimeoutError("no answer ranked any file")


async def asked_files_semantic(c: Client, n: int, timeout: float = 3600) -> float:
    """perf_counter() when the status says the `n` asked-about files are all embedded."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        status = await c.request("neuralmind/status", {})
        attention = status.get("attention") or {}
        if attention.get("files", 0) >= n and attention.get("semantic", 0) >= n:
            return time.perf_counter()
        if status.get("indexing") is None and status.get("embeddings_pending", 1) == 0:
            return time.perf_counter()        # the whole index is semantic
        await asyncio.sleep(0.1)
    raise TimeoutError("the asked-about files never became semantic")


def stalls_between(status: dict[str, Any], t0: float, t1: float) -> float:
    inside = [ms for t, ms in status.get("event_loop", {}).get("stalls", []) if t0 <= t <= t1]
    return max(inside, default=0.0)


def stall_culprits(status: dict[str, Any], t0: float, n: int = 5) -> list[dict[str, Any]]:
    """For the n largest stalls: what every thread was running when the GIL came free."""
    loop = status.get("event_loop", {})
    out = []
    for t, ms in sorted(loop.get("stalls", []), key=lambda s: -s[1])[:n]:
        near = [c for c in loop.get("culprits", []) if abs(c["t"] - t) <= ms / 1000 + 0.01]
        gc_near = [g for g in loop.get("gc_passes", []) if abs(g["t"] - t) <= ms / 1000 + 0.01]
        out.append({"at_s": round(t - t0, 2), "stall_ms": ms,
                    "threads": near[0]["threads"] if near else "not sampled",
                    **({"gc": gc_near} if gc_near else {})})
    return out


def top_stalls(status: dict[str, Any], t0: float, n: int = 5) -> list[tuple[float, float]]:
    """The n largest stalls as (seconds after t0, milliseconds)."""
    stalls = status.get("event_loop", {}).get("stalls", [])
    return [(round(t - t0, 2), ms) for t, ms in sorted(stalls, key=lambda s: -s[1])[:n]]


async def save_latencies(c: Client, root: Path, files: list[str], rounds: int) -> list[float]:
    """Saves that append a function to a file, each waited on until searchable. The files
    are restored afterwards: a kept copy that kept its markers grew with every run, and
    copies that went through more runs measured slower (FRESH4, FRESH5)."""
    out: list[float] = []
    originals = {rel: (root / rel).read_text() for rel in files}
    try:
        for i in range(rounds):
            rel = files[i % len(files)]
            path = root / rel
            name = f"bench_marker_{i}_{int(time.time() * 1000) % 100000}"
            path.write_text(path.read_text() + f"\n\ndef {name}(value):\n    return value\n")
            out.append(await saved_until_searchable(c, path, name))
    finally:
        for rel, text in originals.items():
            (root / rel).write_text(text)
    return out


# Searches whose new function was found below the top hit. Searchable is what is measured:
# the function among the first SEARCHABLE_K hits. Ranking puts another file's similar name
# first at times (a small non-test file full of earlier bench_marker_* functions above the
# exact match in Django's test file): counted here, not mistaken for a save never indexed.
SEARCHABLE_K = 5
NOT_FIRST: list[str] = []


def found_first(hits: list[dict[str, Any]], name: str) -> bool | None:
    """True: `name` is the top hit; False: among the hits below it; None: not found."""
    names = [h["symbol"] for h in hits]
    return None if name not in names else names[0] == name


async def saved_until_searchable(c: Client, path: Path, name: str) -> float:
    """Seconds from didSave of `path` until a search finds the function `name` in it."""
    t0 = time.perf_counter()
    c.notify("textDocument/didSave", {"textDocument": {"uri": path.as_uri()}})
    while True:
        found = await c.request("neuralmind/search", {"query": name, "k": SEARCHABLE_K})
        first = found_first(found["hits"], name)
        if first is not None:
            if not first:
                NOT_FIRST.append(name)
            return time.perf_counter() - t0
        if time.perf_counter() - t0 > 30:
            if c.proc is not None and c.log is not asyncio.subprocess.DEVNULL:
                c.proc.send_signal(signal.SIGABRT)    # every thread's stack into --server-log
            raise TimeoutError(f"{name} never became searchable")


async def structural_saves(c: Client, root: Path, files: list[str], module: str,
                           rounds: int) -> list[float]:
    """Saves that change the file graph, in turn: an import of `module` added to a file, a
    new file importing it, the import removed again. Files are restored afterwards."""
    out: list[float] = []
    originals = {rel: (root / rel).read_text() for rel in files}
    created: list[Path] = []
    try:
        for i in range(rounds):
            rel = files[i % len(files)]
            name = f"bench_structure_{i}_{int(time.time() * 1000) % 100000}"
            marker = f"\n\ndef {name}(value):\n    return value\n"
            if i % 3 == 0:
                path = root / rel
                path.write_text(f"import {module}\n" + originals[rel] + marker)
            elif i % 3 == 1:
                path = (root / rel).parent / f"{name}.py"
                path.write_text(f"import {module}\n" + marker)
                created.append(path)
            else:
                path = root / rel
                path.write_text(originals[rel] + marker)
            out.append(await saved_until_searchable(c, path, name))
    finally:
        for rel, text in originals.items():
            (root / rel).write_text(text)
        for path in created:
            path.unlink(missing_ok=True)
    return out


async def buffer_latencies(c: Client, root: Path, rel: str, rounds: int) -> list[float]:
    """Seconds from an unsaved edit that adds a function (an incremental didChange at the
    end of an open buffer) until a search finds it: the idle debounce plus the extraction.
    Nothing is written; the buffer is closed unsaved at the end."""
    path = root / rel
    text = path.read_text()
    c.notify("textDocument/didOpen", {"textDocument": {
        "uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}})
    out: list[float] = []
    for i in range(rounds):
        name = f"bench_buffer_{i}_{int(time.time() * 1000) % 100000}"
        added = f"\n\ndef {name}(value):\n    return value\n"
        lines = text.split("\n")
        end = {"line": len(lines) - 1, "character": len(lines[-1].encode("utf-16-le")) // 2}
        t0 = time.perf_counter()
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": path.as_uri(), "version": i + 2},
            "contentChanges": [{"range": {"start": end, "end": end}, "text": added}]})
        text += added
        while True:
            found = await c.request("neuralmind/search", {"query": name, "k": SEARCHABLE_K})
            first = found_first(found["hits"], name)
            if first is not None:
                if not first:
                    NOT_FIRST.append(name)
                out.append(time.perf_counter() - t0)
                break
            if time.perf_counter() - t0 > 30:
                raise TimeoutError(f"{name} never became searchable from the buffer")
            await asyncio.sleep(0.01)
    c.notify("textDocument/didClose", {"textDocument": {"uri": path.as_uri()}})
    return out


EDIT_PAUSE_SECONDS = 1.0   # longer than the overlay's idle debounce (0.75 s): typing pauses


async def simulate_edits(c: Client, root: Path, files: list[str], n: int,
                         pause_every: int = 0) -> list[float]:
    """Type `n` one-character edits in bursts; returns RSS (MB) after every 250 edits.

    `pause_every`: stop typing for EDIT_PAUSE_SECONDS after every that many edits, so the
    server extracts the unsaved buffers (the overlay) during the phase, as it does when a
    person types. Without pauses an unloaded machine sends the 1,000 edits in ~1 s and
    the buffers are extracted once, after the last edit (RSS8)."""
    samples: list[float] = []
    for rel in files:
        text = (root / rel).read_text()
        c.notify("textDocument/didOpen", {"textDocument": {
            "uri": (root / rel).as_uri(), "languageId": "python", "version": 1, "text": text}})
    for i in range(n):
        rel = files[(i // 25) % len(files)]       # bursts of typing in one file, then the next
        c.notify("textDocument/didChange", {
            "textDocument": {"uri": (root / rel).as_uri(), "version": i + 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                                          "end": {"line": 0, "character": 0}}, "text": "#"}]})
        if i % 10 == 9:
            await c.request("neuralmind/status", {})   # let the server keep up, as typing does
        if pause_every and i % pause_every == pause_every - 1:
            await asyncio.sleep(EDIT_PAUSE_SECONDS)
        if i % 250 == 249:
            samples.append(c.rss_mb())
    return samples


async def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(args.tmp) if args.tmp else Path(tempfile.mkdtemp(prefix="nm-lsp-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"repo": args.repo}
    team = TeamLoad(args) if args.team else None
    try:
        env = {**os.environ, "NEURALMIND_LOOP_MONITOR": "1", "ORT_DISABLE_TELEMETRY": "1",
               "PYTHONFAULTHANDLER": "1"}
        log = open(args.server_log, "ab") if args.server_log else None  # noqa: SIM115
        root = tmp / args.repo
        if not args.warm_only:
            root = copy_repo(args.repo, tmp)
        elif not (root / ".neuralmind").is_dir():
            sys.exit(f"--warm-only needs an indexed copy in {root}: run once with --tmp")
        if team is not None:
            env["NEURALMIND_TEAM_DSN"] = team.start(root)
            results["team"] = {"rate_per_s": args.team_rate, "teammates": args.team_devs}
        if args.warm_only:
            return await run_warm(args, root, env, log, results)

        # cold: no index at all
        c = Client(root, env, log)
        t_spawn = time.perf_counter()
        await c.start()
        results["cold_initialize_s"] = await c.initialize()
        build_start = time.monotonic()
        _, partial = await first_answer(c)
        results["cold_first_answer_s"] = time.perf_counter() - t_spawn
        results["cold_first_answer_partial"] = partial
        warmed = time.monotonic()
        # issue #21 part 2: the first answer that ranks files (keyword search once the graph
        # exists), then until those files are semantic (their nodes embedded first)
        asked = await first_ranked_answer(c)
        results["cold_first_ranked_answer_s"] = time.perf_counter() - t_spawn
        results["cold_asked_files"] = asked
        results["cold_asked_files_semantic_s"] = (
            await asked_files_semantic(c, len(asked)) - t_spawn) if asked else None
        if args.first_answer_only:      # how far the build was then, and stop there
            status = await c.request("neuralmind/status", {})
            results.update({k: status.get(k) for k in ("nodes", "embedded_nodes",
                                                         "semantic_coverage", "attention")})
            results["load_average"] = os.getloadavg()
            results["cold_shutdown_s"] = await c.stop()
            return results
        await c.wait_indexed()
        results["cold_full_index_s"] = time.perf_counter() - t_spawn
        build_end = time.monotonic()
        status = await c.request("neuralmind/status", {})
        results["nodes"] = status["nodes"]
        results["files"] = status["files"]
        results["embedded_nodes"] = status["embedded_nodes"]
        results["max_stall_during_full_index_ms"] = stalls_between(status, build_start, build_end)
        # the same, once start-up (engine imports, model and tokenizer loads) is behind us
        results["max_stall_index_after_first_answer_ms"] = stalls_between(status, warmed,
                                                                          build_end)
        results["max_stall_whole_run_ms"] = status["event_loop"]["max_stall_ms"]
        results["top_stalls_cold_s_ms"] = top_stalls(status, build_start)
        results["stall_culprits_cold"] = stall_culprits(status, build_start)
        results["load_average"] = os.getloadavg()
        results["rss_after_index_mb"] = c.rss_mb()
        results["cold_shutdown_s"] = await c.stop()
        return await run_warm(args, root, env, log, results)
    finally:
        if team is not None:
            results.setdefault("team", {}).update(team.stop())
        if not args.keep and not args.tmp:
            shutil.rmtree(tmp, ignore_errors=True)


class TeamLoad:
    """A private PostgreSQL cluster and a generator process pushing teammates' learning."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.cluster: Any = None
        self.generator: subprocess.Popen[str] | None = None

    def start(self, root: Path) -> str:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "team"))
        from pgcluster import Cluster  # the tests' throwaway cluster, only for --team

        self.cluster = Cluster(fsync=True)
        self.cluster.start()
        dsn = self.cluster.dsn()
        self.generator = subprocess.Popen(
            [sys.executable, __file__, "--team-generator", dsn, str(root),
             str(self.args.team_rate), str(self.args.team_devs)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.generator.stdout is not None
        self.generator.stdout.readline()        # "ready": the store is migrated and busy
        self.t0, self.pg_cpu0 = time.monotonic(), pg_cpu_s(self.cluster.data)
        return dsn

    def stop(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.generator is not None and self.generator.stdin is not None:
            self.generator.stdin.close()          # the generator stops at end of input
            line = self.generator.stdout.readline() if self.generator.stdout else ""
            self.generator.wait(30)
            out.update(json.loads(line or "{}"))
        if self.cluster is not None:
            # what shared the cores with the server: the generator's own CPU (in its
            # report) and PostgreSQL's, over the same seconds
            out["postgres_cpu_s"] = round(pg_cpu_s(self.cluster.data) - self.pg_cpu0, 2)
            out["load_wall_s"] = round(time.monotonic() - self.t0, 1)
            self.cluster.destroy()
        return out


def proc_cpu_s(pid: int, children: bool = False) -> float:
    """CPU seconds (user + system) of a process from /proc; with `children`, also those of
    its exited, reaped children (PostgreSQL's backends end with their connections)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(x) for x in fields[11:15 if children else 13])
    return ticks / os.sysconf("SC_CLK_TCK")


def pg_cpu_s(data: Path) -> float:
    """CPU seconds of a PostgreSQL cluster so far: the postmaster, its reaped children and
    its live ones (backends, WAL writer, checkpointer)."""
    try:
        master = int((data / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    total = proc_cpu_s(master, children=True)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == master:
                total += proc_cpu_s(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return total


def team_generator(dsn: str, root: str, rate: float, devs: int) -> None:
    """Push `rate` learning batches a second from `devs` teammates until stdin closes."""
    import random  # the generator process only
    import threading

    from neuralmind import outbox  # the team component loads only with --team
    from neuralmind.team.identity import repo_identity
    from neuralmind.team.remote import OutEvent, RemoteStore

    files = sorted(str(p.relative_to(root)) for p in Path(root).rglob("*.py")
                   if ".neuralmind" not in p.parts)
    remote = RemoteStore.open(dsn, repo_identity(Path(root)))
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    print("ready", flush=True)
    rng = random.Random(7)
    seqs = [0] * devs
    run = os.getpid()     # new authors each run: a kept clone has folded the last run's (author, seq)
    sent, t0 = 0, time.monotonic()
    tick = 0.1
    while not stop.is_set():
        batch = []
        for _ in range(max(1, round(rate * tick))):
            dev = rng.randrange(devs)
            seqs[dev] += 1
            start = rng.randrange(max(1, len(files) - 40))
            picked = rng.sample(files[start:start + 40], min(len(files), rng.randint(2, 4)))
            batch.append(OutEvent(f"teammate{dev}-{run}@bench", seqs[dev], outbox.BATCH, outbox.encode({
                "ts": time.time(), "rate": 0.3, "touched": picked,
                "pairs": [[a, b] for i, a in enumerate(picked) for b in picked[i + 1:]],
                "transitions": [list(t) for t in zip(picked, picked[1:], strict=False)]})))
        remote.push(batch)
        sent += len(batch)
        stop.wait(max(0.0, t0 + tick * (sent / max(1, round(rate * tick))) - time.monotonic()))
    print(json.dumps({"generated_events": sent,
                      "generated_per_s": round(sent / (time.monotonic() - t0), 1),
                      "generator_cpu_s": round(sum(os.times()[:2]), 2)}), flush=True)
    remote.close()


async def run_warm(args: argparse.Namespace, root: Path, env: dict[str, str], log: Any,
                   results: dict[str, Any]) -> dict[str, Any]:
    """Start on the index on disk: latency, saves, edits."""
    c = Client(root, env, log)
    t_spawn = time.perf_counter()
    warm_start = time.monotonic()
    await c.start()
    results["warm_initialize_s"] = await c.initialize()
    _, partial = await first_answer(c)
    results["warm_first_answer_s"] = time.perf_counter() - t_spawn
    results["warm_first_answer_partial"] = partial
    results["warm_update_index_s"] = await c.wait_indexed()

    team0 = (await c.request("neuralmind/status", {}))["team"] if "team" in results else {}
    cpu0, wall0 = c.cpu_s(), time.monotonic()
    phases = results["phases_s"] = {"context": round(wall0 - warm_start, 2)}   # a stall's phase
    lat: list[float] = []
    for i in range(args.queries):
        t0 = time.perf_counter()
        await c.request("neuralmind/context", {"query": QUESTIONS[i % len(QUESTIONS)]})
        lat.append(time.perf_counter() - t0)
    results["context_p50_ms"] = 1000 * statistics.median(lat)
    results["context_p95_ms"] = 1000 * pct(lat, 95)
    results["context_ms"] = [round(1000 * x, 1) for x in lat]   # in order: which ones are slow

    py_files = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                      if ".neuralmind" not in p.parts)
    by_size = sorted(py_files, key=lambda r: (root / r).stat().st_size)
    picks = [by_size[len(by_size) // 4], by_size[len(by_size) // 2], by_size[-1]]
    results["save_files"] = {r: (root / r).stat().st_size for r in picks}
    phases["saves"] = round(time.monotonic() - warm_start, 2)
    saves = await save_latencies(c, root, picks, args.saves)
    results["save_to_searchable_p50_ms"] = 1000 * statistics.median(saves)
    results["save_to_searchable_p95_ms"] = 1000 * pct(saves, 95)
    results["save_to_searchable_max_ms"] = 1000 * max(saves)
    results["saves_ms"] = [round(1000 * x) for x in saves]

    # saves that change imports or add files: the file graph and communities change
    module = args.structural_module or ".".join(Path(by_size[len(by_size) // 3]).with_suffix("").parts)
    struct_files = args.structural_files.split(",") if args.structural_files else picks[:2]
    results["structural_save_files"] = struct_files
    t_struct = time.monotonic()
    phases["structural_saves"] = round(t_struct - warm_start, 2)
    struct = await structural_saves(c, root, struct_files, module, args.structural_saves)
    status = await c.request("neuralmind/status", {})
    results["structural_save_module"] = module
    results["structural_save_p50_ms"] = 1000 * statistics.median(struct)
    results["structural_save_p95_ms"] = 1000 * pct(struct, 95)
    results["structural_saves_ms"] = [round(1000 * x) for x in struct]
    results["max_stall_structural_saves_ms"] = stalls_between(status, t_struct,
                                                              time.monotonic())

    if args.buffer_edits:
        t_buf = time.monotonic()
        buffered = await buffer_latencies(c, root, picks[1], args.buffer_edits)
        status = await c.request("neuralmind/status", {})
        results["buffer_edit_to_searchable_p50_ms"] = 1000 * statistics.median(buffered)
        results["buffer_edit_to_searchable_p95_ms"] = 1000 * pct(buffered, 95)
        results["max_stall_buffer_edits_ms"] = stalls_between(status, t_buf, time.monotonic())

    rss_before = c.rss_mb()
    phases["edits"] = round(time.monotonic() - warm_start, 2)
    results["rss_every_250_edits_mb"] = await simulate_edits(c, root, picks, args.edits,
                                                               args.edit_pause_every)
    await asyncio.sleep(2.5)      # one default debounce window: the last batch is learned
    status = await c.request("neuralmind/status", {})
    results["rss_before_edits_mb"] = rss_before
    results["rss_after_edits_mb"] = c.rss_mb()
    results["edits"] = args.edits
    results["search_hit_not_first"] = len(NOT_FIRST)
    results["learned_batches"] = status["learning"]["batches"]
    results["max_stall_warm_run_ms"] = status["event_loop"]["max_stall_ms"]
    # the same from the first context request on: without the start-up's imports and
    # model load, which happen before any teammate's event is folded
    results["max_stall_measured_ms"] = stalls_between(status, wall0, time.monotonic())
    results["server_cpu_measured_s"] = round(c.cpu_s() - cpu0, 2)   # from the first context
    results["measured_wall_s"] = round(time.monotonic() - wall0, 2)  # request to here
    results["top_stalls_warm_s_ms"] = top_stalls(status, warm_start)
    results["stall_culprits_warm"] = stall_culprits(status, warm_start)
    results["warm_start_monotonic"] = warm_start   # to place the stalls below
    results["event_loop_warm"] = status["event_loop"]   # every stall, culprit and GC pass
    if "team" in results:
        results["team"]["server"] = {k: status["team"].get(k) for k in (
            "connected", "pushed", "pulled", "position", "head", "unpushed", "reconnects",
            "last_error", "rounds", "busy_cpu_s", "longest_round_ms")}
        # the sync thread's own CPU over the measured phase, beside server_cpu_measured_s
        results["team"]["sync_cpu_measured_s"] = round(
            status["team"].get("busy_cpu_s", 0.0) - team0.get("busy_cpu_s", 0.0), 2)
        results["team"]["sync_rounds_measured"] = (status["team"].get("rounds", 0)
                                                   - team0.get("rounds", 0))
    results["warm_shutdown_s"] = await c.stop()
    return results


def print_results(results: dict[str, Any]) -> None:
    """One figure per line; stall culprits as every thread's frames, innermost last."""
    for k, v in results.items():
        if k == "event_loop_warm":
            continue
        if k.startswith("stall_culprits"):
            print(k)
            for stall in v:
                print(f"  {stall['stall_ms']:6.1f} ms at {stall['at_s']} s")
                for name, frames in (stall["threads"] if isinstance(stall["threads"], dict)
                                     else {"?": [stall["threads"]]}).items():
                    print(f"    {name}: {' < '.join(reversed(frames))}")
            continue
        print(f"{k:36} {round(v, 3) if isinstance(v, float) else v}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", default="rich-13.7.1")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--saves", type=int, default=30)
    parser.add_argument("--structural-saves", type=int, default=12,
                        help="saves that add/remove an import or add a file")
    parser.add_argument("--structural-files", default=None,
                        help="comma-separated files the structural saves edit (default: the "
                             "files by size at a quarter and a half, as the body saves)")
    parser.add_argument("--structural-module", default=None,
                        help="the module they import (default: the file by size at a third)")
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--edit-pause-every", type=int, default=0,
                        help="pause typing 1 s after every N edits (the overlay extracts "
                             "the buffers meanwhile); 0: type without pauses")
    parser.add_argument("--buffer-edits", type=int, default=10,
                        help="unsaved edits that add a function, each waited on until searchable")
    parser.add_argument("--mcp", action="store_true",
                        help="with the MCP endpoint on (the editor default; off by default "
                             "here so the figures are the LSP's own)")
    parser.add_argument("--tmp", default=None, help="work in this folder (kept) instead of a temp one")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    parser.add_argument("--warm-only", action="store_true",
                        help="skip the cold start: reuse the indexed copy a run with --tmp left")
    parser.add_argument("--question", default=QUESTIONS[0],
                        help="the question asked while the cold index runs")
    parser.add_argument("--first-answer-only", action="store_true",
                        help="stop the cold run once the asked-about files are semantic")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    parser.add_argument("--server-log", default=None, help="append the servers' stderr here")
    parser.add_argument("--team", action="store_true",
                        help="connect the servers to a busy team store (a private PostgreSQL)")
    parser.add_argument("--team-rate", type=float, default=100.0,
                        help="teammates' learning batches per second pushed meanwhile")
    parser.add_argument("--team-devs", type=int, default=20)
    parser.add_argument("--team-generator", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.team_generator:
        dsn, root, rate, devs = args.team_generator
        team_generator(dsn, root, float(rate), int(devs))
        return 0
    MCP_ON[0] = args.mcp
    COLD_QUESTION[0] = args.question
    results = asyncio.run(run(args))
    print_results(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
