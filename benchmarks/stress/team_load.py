"""The team store under load: simulated developers, each a separate process with its own
`.neuralmind/`, learning and recording concurrently against one PostgreSQL.

    python benchmarks/stress/team_load.py                      # 50 developers, no faults
    python benchmarks/stress/team_load.py --faults             # + 20 SIGKILLs mid-sync,
                                                               #   a server restart and a
                                                               #   60 s outage
    python benchmarks/stress/team_load.py --devs 10 --events 200 --duration 20   # quick

Each developer writes `--events` learning batches (2-4 files of a 300-file project,
with locality, so pairs repeat and folds are long) and `--records` decision or memory
writes through its real memory store (half decisions recorded or amended, ids from a
shared pool of 60, so concurrent edits of one record happen; half lessons remembered),
spread over `--duration` seconds, through the stores' own outboxes and a real `SyncTask`
(LISTEN/NOTIFY, catch-up, reconnects) with both bridges. Figures:

- events lost / duplicated: the server's events against every developer's own log
  (what it committed locally), by (author, seq);
- convergence: every developer's state hash (the mirror's fold and record views) and
  memory hash (the decisions and lessons its memory.db shows) once it has every event
  and has applied every record, and how long after quiescence (the moment the server
  held the last event) the last one got there;
- events/s (server ingest during the write phase) and sync latency (from an event's
  local write to its arrival in each other developer's mirror: p50/p95/max);
- with --faults: kills (each one lands while the victim has unpushed events and the
  restarted process resumes), the restart and outage times, and how long the outbox
  took to drain after the outage.

The cluster runs with fsync on, in a temporary directory, on loopback only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "team"))

import psycopg  # noqa: E402
from pgcluster import Cluster  # noqa: E402

from neuralmind import outbox  # noqa: E402
from neuralmind.errors import InvalidArgument  # noqa: E402
from neuralmind.memory.sharing import exchange_needed, record_view, share  # noqa: E402
from neuralmind.memory.store import MemoryStore  # noqa: E402
from neuralmind.synapse.layer import SynapseLayer  # noqa: E402
from neuralmind.team import views  # noqa: E402
from neuralmind.team.bridge import RecordBridge, SynapseBridge  # noqa: E402
from neuralmind.team.identity import RepoIdentity  # noqa: E402
from neuralmind.team.local import TeamLocal  # noqa: E402
from neuralmind.team.remote import RemoteStore  # noqa: E402
from neuralmind.team.sync import SyncTask, TeamSync  # noqa: E402

REPO = RepoIdentity("e" * 40, "example.com/team/bench")
FILES = [f"pkg/area{i // 30}/mod{i}.py" for i in range(300)]
RECORD_POOL = 60
CONVERGE_WAIT_S = 600.0     # a developer that has not converged by then reports its state


# --- the developer process ------------------------------------------------------------------
def worker(args: argparse.Namespace) -> None:
    state = Path(args.dir)
    local = TeamLocal(state)
    layer = SynapseLayer(state, state)     # not a git folder: learning is "personal"
    layer.share = True                     # a team store is configured
    memory = MemoryStore(state, directory=state)
    hook = share(memory)                   # decisions and lessons into memory.db's outbox
    latencies = array("d")
    me = local.author

    def on_ingest(batch: Any) -> None:
        now = time.time()
        mine = {me, synapse_author(layer), store_author(memory.path)}
        for e in batch:
            if e.author not in mine:
                try:
                    latencies.append(now - json.loads(e.payload)["ts"])
                except (ValueError, KeyError, TypeError):
                    pass

    task = SyncTask(TeamSync(local, args.dsn, REPO, on_ingest=on_ingest,
                             bridges=[SynapseBridge(local, lambda: layer),
                                      RecordBridge(local, lambda: record_view(memory),
                                                   lambda m: exchange_needed(memory, m))]),
                    poll_seconds=5.0)
    layer.on_share = hook.on_write = task.kick
    task.start()
    while not task.status()["connected"]:
        time.sleep(0.05)
    print(json.dumps({"ready": me}), flush=True)
    if not args.resume:
        sys.stdin.readline()                     # "go": everyone starts together
    rng = random.Random(f"{args.seed}:{me}")
    # what this developer wrote before a kill: the outboxes' counters (the log's folded
    # rows are compacted away)
    done_r = written(memory.connection())
    done_b = written(sqlite3.connect(layer.store.path)) if layer.store.path.exists() else 0
    plan = ["b"] * (args.events - done_b) + ["r"] * (args.records - done_r)
    rng.shuffle(plan)
    gap = args.duration / max(1, args.events + args.records)
    home = rng.randrange(10)
    for step in plan:
        if step == "b":      # an editing batch, through the synapse store's own outbox
            area = home if rng.random() < 0.8 else rng.randrange(10)
            files = rng.sample(FILES[area * 30:(area + 1) * 30], rng.randint(2, 4))
            layer.store.learn_batch([(a, b) for i, a in enumerate(files) for b in files[i + 1:]],
                                    files, list(zip(files, files[1:], strict=False)), "personal",
                                    share=True)
        elif rng.random() < 0.5:     # a decision recorded, or amended when the team has it
            rid = f"d{rng.randrange(RECORD_POOL):015d}"
            why = f"{rid} by {me}: {rng.random()}"
            try:
                memory.record(f"Decision {rid}", why, decision_id=rid)
            except InvalidArgument:
                memory.amend(rid, rationale=why)
        else:
            memory.remember(f"Lesson {rng.random()} from {me}", "lesson")
        task.kick()
        time.sleep(rng.uniform(0, 2 * gap))
    while local.pending_count() or outbox_count(layer.store.path) or outbox_count(memory.path):
        task.kick()
        time.sleep(0.02)
    print(json.dumps({"written": me, "at": time.time()}), flush=True)
    # converged: folded through the store's last position (every event, no gap left) and
    # every changed target and record written into the stores; at most CONVERGE_WAIT_S
    give_up = time.monotonic() + CONVERGE_WAIT_S
    while ((task.status().get("position") or 0) < args.expect or views.dirty(local, 1)
           or views.dirty_records(local, 1)) and time.monotonic() < give_up:
        task.kick()
        time.sleep(0.05)
    converged = time.time()
    Path(args.dir, "latencies.bin").write_bytes(latencies.tobytes())
    ru = resource.getrusage(resource.RUSAGE_SELF)
    shown = hashlib.sha256(repr(layer.store.dump(["shared"], now=args.view_at)).encode())
    print(json.dumps({"converged": me, "at": converged, "hash": local.state_hash(),
                      "synapse_view": shown.hexdigest(), "memory_view": memory_hash(memory), "status": task.status(),
                      "cpu_s": ru.ru_utime + ru.ru_stime, "counts": local.counts()}),
          flush=True)
    task.stop()


def synapse_author(layer: SynapseLayer) -> str | None:
    return store_author(layer.store.path)


def store_author(path: Path) -> str | None:
    conn = sqlite3.connect(path)
    try:
        return outbox.author(conn) if outbox.installed(conn) else None
    finally:
        conn.close()


def outbox_count(path: Path) -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return outbox.count(conn)
    finally:
        conn.close()


def memory_hash(memory: MemoryStore) -> str:
    """The decisions and lessons memory.db shows (their content, not local counters)."""
    rows = memory.connection().execute(
        "SELECT a.id, a.type, a.label, a.text, d.status FROM atoms a LEFT JOIN "
        "decision_records d ON d.atom_id = a.id ORDER BY a.id").fetchall()
    return hashlib.sha256(repr([tuple(r) for r in rows]).encode()).hexdigest()


# --- the coordinator ------------------------------------------------------------------------
class Dev:
    def __init__(self, i: int, root: Path, dsn: str, a: argparse.Namespace, expect: int) -> None:
        self.i, self.dir = i, root / f"dev{i:02d}"
        self.dsn, self.args, self.expect = dsn, a, expect
        self.proc: subprocess.Popen[str] | None = None
        self.author = ""
        self.lines: list[dict[str, Any]] = []
        self.kills = 0

    def spawn(self, resume: bool = False) -> None:
        a = self.args
        cmd = [sys.executable, __file__, "--worker", "--dir", str(self.dir), "--dsn", self.dsn,
               "--events", str(a.events), "--records", str(a.records), "--duration",
               str(a.duration), "--expect", str(self.expect), "--seed", str(a.seed),
               "--view-at", str(a.view_at)]
        if resume:
            cmd.append("--resume")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "ready" in msg:
                self.author = msg["ready"]
            self.lines.append(msg)

    def last(self, key: str) -> dict[str, Any] | None:
        return next((m for m in reversed(self.lines) if key in m), None)


def wait(pred: Any, timeout: float, what: str, every: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(every)


def loadavg() -> list[str]:
    return open("/proc/loadavg").read().split()[:3]


def server_events(dsn: str) -> list[tuple[str, int]]:
    with psycopg.connect(dsn) as conn:
        return [(a, int(s)) for a, s in conn.execute(
            "SELECT author, seq FROM neuralmind.events ORDER BY pos")]


def records_on_server(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        return int(conn.execute("SELECT count(*) FROM neuralmind.events WHERE kind = %s",
                                (outbox.RECORD,)).fetchone()[0])


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))] if s else float("nan")


def run_faults(cluster: Cluster, devs: list[Dev], a: argparse.Namespace,
               out: dict[str, Any]) -> None:
    """20 kills spread over the write phase, then a restart, then the outage."""
    rng = random.Random(a.seed)
    kills = []
    phase = a.duration * 0.8
    for k in range(a.kills):
        time.sleep(phase / (a.kills + 2))
        victims = [d for d in devs if d.proc and d.proc.poll() is None and d.last("written") is None
                   and pending_events(d.dir)]
        if not victims:
            continue
        d = rng.choice(victims)
        assert d.proc is not None
        os.kill(d.proc.pid, signal.SIGKILL)
        d.proc.wait()
        d.kills += 1
        d.lines.clear()
        d.spawn(resume=True)
        kills.append({"dev": d.i, "at_s": round(time.monotonic() - out["_t0"], 1)})
        if k == a.kills // 2:
            t = time.monotonic()
            cluster.restart()
            out["restart_s"] = round(time.monotonic() - t, 2)
            out["restart_at_s"] = round(t - out["_t0"], 1)
    out["kills"] = kills
    # the outage: the server stops for `--outage` seconds while developers keep writing
    t = time.monotonic()
    cluster.stop()
    out["outage_at_s"] = round(t - out["_t0"], 1)
    time.sleep(a.outage)
    backlog = {d.i: pending_events(d.dir) for d in devs}
    cluster.start()
    back = time.monotonic()
    out["outage_s"] = round(back - t, 1)
    out["pending_when_back"] = sum(len(b) for b in backlog.values())
    # the backlog has drained when every developer's outbox holds nothing it held at return
    # (developers keep writing meanwhile: their new events are not the backlog)
    def drained(d: Dev) -> bool:
        return not pending_events(d.dir) & backlog[d.i]

    wait(lambda: all(drained(d) for d in devs if backlog[d.i]), 900, "outbox drain",
         every=0.5)
    out["backlog_drained_after_s"] = round(time.monotonic() - back, 2)


def written(conn: sqlite3.Connection) -> int:
    """How many events this outbox ever took (its AUTOINCREMENT counter: a rolled-back
    write does not move it)."""
    try:
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'team_outbox'"
                           ).fetchone()
    except sqlite3.OperationalError:
        return 0          # no outbox yet
    return int(row[0]) if row else 0


def pending_events(state: Path) -> set[tuple[str, int]]:
    """(author, seq) of every event a developer has not pushed yet, read without any lock:
    the synapse store's outbox first, then the mirror's queues (collecting moves an event
    from the first to the second, never the other way)."""
    out: set[tuple[str, int]] = set()
    outboxes = ("SELECT m.value, o.seq FROM team_outbox o, team_outbox_meta m "
                "WHERE m.key = 'author'")
    for name, sql in (("synapses.db", outboxes), ("memory.db", outboxes),
                      ("team.db", "SELECT m.value, o.seq FROM team_outbox o, team_outbox_meta m "
                       "WHERE m.key = 'author' UNION ALL SELECT author, seq FROM collected")):
        path = state / name
        if not path.exists():
            continue
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            out.update((a, int(q)) for a, q in conn.execute(sql))
        except sqlite3.OperationalError:
            pass          # no outbox yet
        finally:
            conn.close()
    return out


def coordinator(a: argparse.Namespace) -> None:
    out: dict[str, Any] = {"devs": a.devs, "events_each": a.events, "records_each": a.records,
                           "duration_s": a.duration, "faults": a.faults,
                           "load_before": loadavg()}
    expect = a.devs * (a.events + a.records)
    root = Path(tempfile.mkdtemp(prefix="nm-team-load-"))
    cluster = Cluster(fsync=True)
    try:
        cluster.start()
        dsn = cluster.dsn()
        RemoteStore.open(dsn, REPO).close()          # migrate and register once
        devs = [Dev(i, root, dsn, a, expect) for i in range(a.devs)]
        for d in devs:
            d.spawn()
        wait(lambda: all(d.author for d in devs), 300, "every developer connected")
        t0 = time.monotonic()
        out["_t0"] = t0
        for d in devs:
            assert d.proc is not None and d.proc.stdin is not None
            d.proc.stdin.write("go\n")
            d.proc.stdin.flush()
        if a.faults:
            run_faults(cluster, devs, a, out)
        wait(lambda: all(d.last("written") for d in devs), 3600, "every developer written")
        with psycopg.connect(dsn) as conn:
            head = conn.execute("SELECT head FROM neuralmind.repos").fetchone()[0]
        quiet = max(d.last("written")["at"] for d in devs)  # type: ignore[index]
        write_phase = time.monotonic() - t0
        wait(lambda: all(d.last("converged") for d in devs), 3600, "every developer converged")
        conv = [d.last("converged") for d in devs]
        for d in devs:
            if d.proc is not None:
                d.proc.wait(60)
        hashes = {c["hash"] for c in conv if c}
        views_shown = {c["synapse_view"] for c in conv if c}
        memory_shown = {c["memory_view"] for c in conv if c}
        # lost / duplicated, by (author, seq): the server against each developer's own log
        on_server = server_events(dsn)
        own: set[tuple[str, int]] = set()
        for d in devs:     # every event a developer committed locally: seqs 1..its counters
            for db in (d.dir / "team.db", d.dir / "synapses.db", d.dir / "memory.db"):
                conn = sqlite3.connect(db)
                if outbox.installed(conn):
                    author = outbox.author(conn)
                    own.update((author, s) for s in range(1, written(conn) + 1))
                conn.close()
        server_set = set(on_server)
        lat: list[float] = []
        for d in devs:
            f = d.dir / "latencies.bin"
            if f.exists():
                arr = array("d")
                arr.frombytes(f.read_bytes())
                lat.extend(arr)
        out.update({
            "expected_events": expect, "server_events": len(on_server), "server_head": head,
            "lost": len(own - server_set), "duplicated": len(on_server) - len(server_set),
            "unknown_on_server": len(server_set - own),
            "identical_states": len(hashes) == 1, "distinct_hashes": len(hashes),
            "identical_synapse_views": len(views_shown) == 1,
            "identical_memory_views": len(memory_shown) == 1,
            "records_on_server": records_on_server(dsn),
            "converged_after_quiescence_s": round(max(c["at"] for c in conv if c) - quiet, 2),
            "not_folded_through_head": sum((c or {}).get("status", {}).get("position", 0) < expect
                                           for c in conv),
            "waiting_events": sum((c or {}).get("counts", {}).get("waiting", 0) for c in conv),
            "write_phase_s": round(write_phase, 1),
            "events_per_s": round(len(on_server) / write_phase, 1),
            "latency_samples": len(lat),
            "sync_latency_ms": {"p50": round(pct(lat, 50) * 1000, 1),
                                "p95": round(pct(lat, 95) * 1000, 1),
                                "max": round(max(lat, default=0) * 1000, 1)},
            "cpu_s_per_developer": round(pct([c["cpu_s"] for c in conv if c], 50), 1),
            "reconnects": sum(int((c or {}).get("status", {}).get("reconnects", 0)) for c in conv),
            "load_after": loadavg(),
        })
    finally:
        cluster.destroy()
        if not a.keep:
            import shutil

            shutil.rmtree(root, ignore_errors=True)
    out.pop("_t0", None)
    print(json.dumps(out, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--resume", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    ap.add_argument("--dsn", help=argparse.SUPPRESS)
    ap.add_argument("--expect", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--view-at", type=float, default=time.time() + 86400.0,
                    help=argparse.SUPPRESS)   # when every developer reads its synapse view
    ap.add_argument("--devs", type=int, default=50)
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--records", type=int, default=20)
    ap.add_argument("--duration", type=float, default=120.0,
                    help="seconds over which each developer spreads its writes")
    ap.add_argument("--faults", action="store_true")
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--outage", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the developers' folders")
    a = ap.parse_args()
    if a.worker:
        worker(a)
    else:
        coordinator(a)


if __name__ == "__main__":
    main()
