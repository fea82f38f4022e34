"""Several writers on one workspace at once: engine processes learning, threads recording
decisions, a full build seeding synapses. Exact totals, intact databases, no lock errors."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from reliability_support import CLI, ENV, integrity, store_path

WRITERS = 3
ACTIVATIONS = 200
THREADS = 10
DECISIONS = 20
PAIR = ("pkg/mod005.py::helper_5", "pkg/mod006.py")

SYNAPSE_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from neuralmind.engine import Workspace
    ws = Workspace(Path(sys.argv[1]))
    lost = sum(ws.synapses.store.activate([sys.argv[3], sys.argv[4]], ws.synapses.namespace) == 0
               for _ in range(int(sys.argv[2])))
    print(lost)
""")

DECISION_WRITER = textwrap.dedent("""
    import sys, threading
    from pathlib import Path
    from neuralmind.engine import Workspace
    ws = Workspace(Path(sys.argv[1]))
    errors = []
    def work(t):
        for i in range(int(sys.argv[3])):
            try:
                ws.decisions.record(f"Thread {t} decision {i}", "Concurrency check.",
                                    files=[f"pkg/mod{t:03d}.py"])
            except Exception as e:
                errors.append(repr(e))
    threads = [threading.Thread(target=work, args=(t,)) for t in range(int(sys.argv[2]))]
    for th in threads: th.start()
    for th in threads: th.join()
    print(len(errors)); print("\\n".join(errors[:5]))
""")


def test_writers_at_once_lose_nothing(small_repo: Path) -> None:
    root = str(small_repo)
    procs = [subprocess.Popen([sys.executable, "-c", SYNAPSE_WRITER, root, str(ACTIVATIONS), *PAIR],
                              env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(WRITERS)]
    procs.append(subprocess.Popen([sys.executable, "-c", DECISION_WRITER, root, str(THREADS),
                                   str(DECISIONS)], env=ENV, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True))
    procs.append(subprocess.Popen([*CLI, "build", root], env=ENV, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-2000:]
        assert "locked" not in (out + err).lower(), err[-2000:]
        assert "Traceback" not in err, err[-2000:]
    assert [int(out.split()[0]) for out, _ in outs[:WRITERS]] == [0] * WRITERS   # none skipped
    assert outs[WRITERS][0].split()[0] == "0", outs[WRITERS][0]

    state = store_path(small_repo, "synapses.db").parent       # the learned folder
    assert integrity(state / "synapses.db") == "ok"
    assert integrity(state / "memory.db") == "ok"
    con = sqlite3.connect(state / "synapses.db")
    try:
        (count,) = con.execute("SELECT count FROM synapses WHERE a=? AND b=? AND namespace="
                               "'personal'", PAIR).fetchone()
        (touched,) = con.execute("SELECT count FROM activations WHERE node=? AND namespace="
                                 "'personal'", (PAIR[0],)).fetchone()
    finally:
        con.close()
    assert count == touched == WRITERS * ACTIVATIONS
    con = sqlite3.connect(state / "memory.db")
    try:
        (n,) = con.execute("SELECT count(*) FROM decisions WHERE title LIKE 'Thread %'").fetchone()
        (fts,) = con.execute("SELECT count(*) FROM decisions_fts WHERE decisions_fts MATCH "
                             "'concurrency'").fetchone()
    finally:
        con.close()
    assert n == fts == THREADS * DECISIONS
