"""One mirror's fold of many developers' learning, alone: the CPU each developer of
`team_load.py` spends on the others' events, without 50 processes queueing for 2 cores.

    python benchmarks/stress/team_fold.py [--events 10000] [--authors 50] [--pull 30 100 2000]

Makes `--events` learning batches of `--authors` developers the way team_load.py does
(2-4 files of a 300-file project, 80% in the author's own area), then, for each pull
size, ingests them into a fresh `team.db` that many at a time (a sync wake-up's worth)
and writes what changed into a synapse store's `shared` rows after each pull (the
`SynapseBridge`), as a developer's sync does. Prints wall and CPU seconds, events per
CPU-second and the state hash (equal across pull sizes: the fold is order- and
batch-independent).
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

from neuralmind import outbox
from neuralmind.synapse.layer import SynapseLayer
from neuralmind.team.bridge import SynapseBridge
from neuralmind.team.local import TeamLocal
from neuralmind.team.remote import RemoteEvent

FILES = [f"pkg/area{i // 30}/mod{i}.py" for i in range(300)]
T0 = 1_800_000_000.0


def make_events(n: int, authors: int, seed: int = 1) -> list[RemoteEvent]:
    rng = random.Random(seed)
    seqs: dict[str, int] = {}
    out = []
    for pos in range(1, n + 1):
        k = rng.randrange(authors)
        author = f"dev{k}@bench"
        seqs[author] = seqs.get(author, 0) + 1
        area = k % 10 if rng.random() < 0.8 else rng.randrange(10)
        files = rng.sample(FILES[area * 30:(area + 1) * 30], rng.randint(2, 4))
        payload = {"ts": T0 + pos * 0.01, "rate": 0.1,
                   "pairs": [[a, b] for i, a in enumerate(files) for b in files[i + 1:]],
                   "touched": files,
                   "transitions": [list(t) for t in zip(files, files[1:], strict=False)]}
        out.append(RemoteEvent(pos, author, seqs[author], outbox.BATCH, outbox.encode(payload)))
    return out


def fold(events: list[RemoteEvent], pull: int) -> dict[str, float | str]:
    folder = Path(tempfile.mkdtemp(prefix="nm-team-fold-"))
    local = TeamLocal(folder)
    layer = SynapseLayer(folder, folder)
    layer.share = True
    bridge = SynapseBridge(local, lambda: layer)
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(events), pull):
        local.ingest("store", events[i:i + pull])
        bridge.exchange()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    out: dict[str, float | str] = {"pull": pull, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                                   "events_per_cpu_s": round(len(events) / cpu),
                                   "hash": local.state_hash()[:12]}
    layer.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--authors", type=int, default=50)
    ap.add_argument("--pull", type=int, nargs="+", default=[30, 100, 2000])
    a = ap.parse_args()
    events = make_events(a.events, a.authors)
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
    for pull in a.pull:
        print(fold(events, pull), flush=True)


if __name__ == "__main__":
    main()
