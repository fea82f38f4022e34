"""Fast experiment harness for file ranking: every signal cached once, variants in memory.

For each repository of the four sets (public symbols/retrieval, history, history2) the
graph, the search index (node BM25 + node vectors) and the questions' vectors are
loaded once from the workspaces `context_bench.py` built (run it first), and every
question's raw signals are computed once. A ranking variant is then a pure function of
those signals and a few parameters, scored in seconds on every set, per repository.

    python benchmarks/context_bench.py --sets symbols retrieval hist-test h2-test   # builds
    python benchmarks/rank_lab.py --report            # the shipped ranking, every set
    python benchmarks/rank_lab.py --loro              # the grid, chosen by leave-one-repo-out
    python benchmarks/rank_lab.py --variant lab2 --trials t.jsonl     # one line per override
    python benchmarks/rank_lab.py --variant lab2 --trials t.jsonl --texts members_out

`--texts` swaps every node vector for those of a text variant (which nodes get a vector
and what text stands for them: ranking_variants.TEXT_VARIANTS), embedded once and cached
by text hash. To compare an embedding model, point NEURALMIND_MODEL_DIR at a directory
holding its model.onnx + tokenizer.json and NM_LAB_CACHE at a fresh cache directory,
then run with `--texts shipped`: node, chunk and question vectors all come from it.
`--texts chunkmem:<all|nodoc>:<selector>` and `--texts filehead` take node vectors from
the cached chunk windows instead (members or file nodes through their window: chunk_lab.py).
NM_BENCH_WORK (context_bench.py) says where the built workspaces are.

Splits: the history rows of the 10 history projects tune (the grid is scored on them), the
test rows report. LORO: for each of the 10 projects, the grid point that is best on the
other nine projects' history rows is scored on the held-out project's test rows.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pickle
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import context_bench as cb  # noqa: E402

CACHE = Path(os.environ.get("NM_LAB_CACHE", "/tmp/retr/lab"))   # signals, vectors
HISTORY_SETS = ("hist-dev", "hist-test", "h2-dev", "h2-test")


@dataclass
class Question:
    set: str
    repo: str
    lang: str
    src: str
    prefix: str
    text: str
    gold: tuple[str, ...]
    gold_tests: tuple[str, ...]


@dataclass
class Signals:
    """A question's raw evidence over one repository (node-level and file-level)."""

    node_bm25: dict[str, float]
    node_cos: np.ndarray             # aligned with Repo.vec_ids
    exact: set[str]
    about_tests: bool
    extra: dict[str, Any] = field(default_factory=dict)


class Repo:
    """One built workspace: graph, index, file texts, node vectors."""

    def __init__(self, src: str) -> None:
        from neuralmind.graph.store import load_graph
        from neuralmind.index.search_index import SearchIndex

        self.src = src
        self.root = cb.WORK / "base" / src.replace("/", "__")
        state = self.root / ".neuralmind"
        self.graph = load_graph(state)
        self.index = SearchIndex(state, root=self.root)
        vs = self.index._vectors
        self.vec_ids: list[str] = vs.ids()
        self.vecs = np.stack([vs.vector(i) for i in self.vec_ids]).astype(np.float32)
        self.files = sorted(self.graph.files)
        pos = {f: i for i, f in enumerate(self.files)}
        self.vec_file_idx = np.array([pos[i.split("::", 1)[0]] for i in self.vec_ids])
        self.text: dict[str, str] = {}
        for f in self.files:
            try:
                self.text[f] = (self.root / f).read_text(encoding="utf-8", errors="replace")
            except OSError:
                self.text[f] = ""


def questions(sets: list[str]) -> list[Question]:
    out = []
    for s in sets:
        for r in cb.rows_of(s):
            out.append(Question(s, r["repo"], r["lang"], r["src"], r["prefix"], r["question"],
                                tuple(r["gold"]), tuple(r["gold_tests"])))
    return out


def query_vectors(qs: list[Question]) -> dict[str, np.ndarray]:
    """Every question's vector, embedded once and cached on disk."""
    path = CACHE / "qvecs.pkl"
    known: dict[str, np.ndarray] = pickle.loads(path.read_bytes()) if path.exists() else {}
    todo = sorted({q.text for q in qs} - set(known))
    if todo:
        from neuralmind.index.embedder import load_embedder

        vecs = load_embedder().embed(todo)
        known.update(zip(todo, vecs, strict=True))
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(known))
    return known


def signals(repo: Repo, q: Question, qv: np.ndarray) -> Signals:
    from neuralmind.index.query import parse_question

    pq = parse_question(q.text)
    bm = dict(repo.index._bm25.search_terms(pq.keyword_terms, 100000))
    cos = repo.vecs @ qv.astype(np.float32)
    return Signals(bm, cos, repo.index._exact_matches(q.text), pq.about_tests,
                   {"qv": qv, "terms": Counter(pq.keyword_terms), "about_docs": pq.about_docs})


# --- scoring ------------------------------------------------------------------------------
def score(files: list[str], q: Question) -> dict[str, Any]:
    g = set(q.gold)
    tests = set(q.gold_tests)
    nontest = g - tests
    first = next((i + 1 for i, p in enumerate(files) if p in g), None)
    top5 = set(files[:5])
    return {"R@1": len(g & set(files[:1])) / len(g), "R@5": len(g & top5) / len(g),
            "R@10": len(g & set(files[:10])) / len(g), "MRR": 1 / first if first else 0.0,
            "test R@5": len(tests & top5) / len(tests) if tests else None,
            "nontest R@5": len(nontest & top5) / len(nontest) if nontest else None,
            "missed@20": len(g - set(files[:20]))}


def mean_of(rows: list[dict[str, Any]], key: str) -> float | None:
    vals = [r[key] for r in rows if r[key] is not None]
    if key == "missed@20":
        return float(sum(vals))
    return statistics.fmean(vals) if vals else None


def table(results: dict[str, list[tuple[Question, dict[str, Any]]]]) -> str:
    cols = ["n", "R@1", "R@5", "R@10", "MRR", "test R@5", "nontest R@5", "missed@20"]
    lines = []
    for s, pairs in results.items():
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for q, m in pairs:
            groups[q.repo].append(m)
        if len({q.lang for q, _ in pairs}) > 1:
            for q, m in pairs:
                groups[f"[{q.lang}]"].append(m)
        groups["overall"] = [m for _, m in pairs]
        lines += [f"\n**{s}**\n", "| repo | " + " | ".join(cols) + " |",
                  "|---|" + "---:|" * len(cols)]
        for key, ms in groups.items():
            cells = [str(len(ms))]
            for c in cols[1:]:
                v = mean_of(ms, c)
                cells.append("–" if v is None else (f"{v:.0f}" if c == "missed@20" else f"{v:.3f}"))
            lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


class Lab:
    """Questions, their repositories and signals, loaded once.

    `texts` names a text variant (TEXT_VARIANTS): each repository's vectors are then
    those of that variant's texts (embedded once, cached by text hash) instead of the
    built index's."""

    def __init__(self, sets: list[str], texts: str | None = None) -> None:
        self.qs = questions(sets)
        self.repos: dict[str, Repo] = {}
        qvecs = query_vectors(self.qs)
        self.sig: list[Signals] = []
        t = time.perf_counter()
        for q in self.qs:
            if q.src not in self.repos:
                self.repos[q.src] = Repo(q.src)
                if texts:
                    revector(self.repos[q.src], texts)
            self.sig.append(signals(self.repos[q.src], q, qvecs[q.text]))
        print(f"signals for {len(self.qs)} questions in {time.perf_counter() - t:.1f} s",
              file=sys.stderr)

    def run(self, rank_fn: Any, params: dict[str, Any], sets: list[str] | None = None,
            repos: set[str] | None = None) -> dict[str, list[tuple[Question, dict[str, Any]]]]:
        out: dict[str, list[tuple[Question, dict[str, Any]]]] = defaultdict(list)
        for q, s in zip(self.qs, self.sig, strict=True):
            if (sets and q.set not in sets) or (repos and q.repo not in repos):
                continue
            files = [q.prefix + f for f in rank_fn(self.repos[q.src], q, s, params)]
            out[q.set].append((q, score(files, q)))
        return out


def brief(results: dict[str, list[tuple[Question, dict[str, Any]]]]) -> str:
    """One line per set: pooled R@5 / MRR / test and non-test R@5, then MRR per repo."""
    lines = []
    for s, pairs in results.items():
        ms = [m for _, m in pairs]
        by: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for q, m in pairs:
            by[q.repo.split("/")[-1]].append(m)
        f = [mean_of(ms, k) for k in ("R@5", "MRR", "test R@5", "nontest R@5")]
        cells = " ".join("  –  " if v is None else f"{v:.3f}" for v in f)
        per = " ".join(f"{r}:{mean_of(v, 'R@5'):.2f}/{mean_of(v, 'MRR'):.2f}" for r, v in by.items())
        lines.append(f"{s:9} R5/MRR/tR5/ntR5 {cells} miss {mean_of(ms, 'missed@20'):.0f} | {per}")
    return "\n".join(lines)


def objective(results: dict[str, list[tuple[Question, dict[str, Any]]]]) -> float:
    """What the grid maximises: mean over sets of (R@5 + MRR) / 2, sets weighted equally."""
    vals = []
    for pairs in results.values():
        ms = [m for _, m in pairs]
        vals.append((mean_of(ms, "R@5") + mean_of(ms, "MRR")) / 2)
    return statistics.fmean(vals)


def trial_line(res: dict[str, list[tuple[Question, dict[str, Any]]]]) -> str:
    """R@5 / MRR per history set, the guard margin, and the objective on the tuning
    (history) rows and on the test rows: mean over the 10 projects of (R@5 + MRR) / 2."""
    cells = []
    for s in HISTORY_SETS:
        ms = [m for _, m in res.get(s, [])]
        if ms:
            cells.append(f"{s} {mean_of(ms, 'R@5'):.3f}/{mean_of(ms, 'MRR'):.3f}")
    ret = [m for _, m in res.get("retrieval", [])]
    if ret:
        cells.append(f"guard {guard_margin(res):+.3f} ret {mean_of(ret, 'MRR'):.3f}")
    for name, sets in (("dev", ("hist-dev", "h2-dev")), ("test", ("hist-test", "h2-test"))):
        by: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for s in sets:
            for q, m in res.get(s, []):
                by[q.repo].append(m)
        if by:
            obj = statistics.fmean((mean_of(v, "R@5") + mean_of(v, "MRR")) / 2
                                   for v in by.values())
            cells.append(f"obj-{name} {obj:.4f}")
    return " | ".join(cells)


# --- text variants: which nodes get a vector, and what text stands for them -------------
def _vector_cache() -> dict[str, np.ndarray]:
    path = CACHE / "textvecs.pkl"
    return pickle.loads(path.read_bytes()) if path.exists() else {}


def embed_cached(texts: list[str]) -> np.ndarray:
    """Vectors of `texts` (the engine's embedder), cached on disk by text hash."""
    import hashlib

    cache = _vector_cache()
    keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
    todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in cache}
    if todo:
        from neuralmind.index.embedder import load_embedder

        t0 = time.perf_counter()
        vecs = load_embedder().embed(list(todo.values()))
        print(f"  embedded {len(todo)} texts in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
        cache.update(zip(todo, vecs, strict=True))
        CACHE.mkdir(parents=True, exist_ok=True)
        (CACHE / "textvecs.pkl").write_bytes(pickle.dumps(cache))
    return np.stack([cache[k] for k in keys]) if keys else np.zeros((0, 384), np.float32)


def revector(repo: Repo, variant: str) -> None:
    """Replace the repository's vectors by those of a text variant: `fn(repo) -> {id: text}`
    (ids left out get no vector)."""
    import ranking_variants as rv

    if variant.startswith("chunkmem:"):   # members through their chunks (chunk_lab.py)
        import chunk_lab

        ids, vecs = chunk_lab.member_vectors(repo, variant)
    elif variant == "filehead":             # file nodes by their head window (chunk_lab.py)
        import chunk_lab

        ids, vecs = chunk_lab.file_head_vectors(repo)
    else:
        texts = rv.TEXT_VARIANTS[variant](repo)
        ids = sorted(texts)
        vecs = embed_cached([texts[i] for i in ids])
    store = repo.index._vectors
    store.clear()
    store.upsert(ids, vecs, ["" for _ in ids])
    repo.vec_ids = store.ids()
    repo.vecs = np.stack([store.vector(i) for i in repo.vec_ids]).astype(np.float32)
    pos = {f: i for i, f in enumerate(repo.files)}
    repo.vec_file_idx = np.array([pos[i.split("::", 1)[0]] for i in repo.vec_ids])


def main() -> None:
    import ranking_variants as rv

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["symbols", "retrieval", *HISTORY_SETS])
    ap.add_argument("--variant", default="shipped")
    ap.add_argument("--params", default="{}", help="JSON overrides of the variant's defaults")
    ap.add_argument("--loro", action="store_true", help="grid by leave-one-repository-out")
    ap.add_argument("--full", action="store_true", help="full tables instead of one line a set")
    ap.add_argument("--texts", help="a text variant (ranking_variants.TEXT_VARIANTS)")
    ap.add_argument("--trials", type=Path,
                    help="a file of JSON overrides, one a line: one summary line each")
    args = ap.parse_args()
    lab = Lab(args.sets, args.texts)
    fn, defaults, grid = rv.VARIANTS[args.variant]
    params = defaults | json.loads(args.params)
    if args.trials:
        for line in args.trials.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                print(line, "\n   ", trial_line(lab.run(fn, params | json.loads(line))),
                      flush=True)
        return
    if not args.loro:
        t = time.perf_counter()
        res = lab.run(fn, params)
        print(table(res) if args.full else brief(res))
        print(f"\n{time.perf_counter() - t:.1f} s", file=sys.stderr)
        return
    loro(lab, fn, defaults, grid)


# The guards a chosen point must keep (issue #14): public symbols MRR per repo and public
# retrieval MRR no lower than the shipped engine's.
GUARDS = {("symbols", "psf/requests"): 27 / 28, ("symbols", "pallets/click"): 1.0,
          ("symbols", "pallets/flask"): 0.8366666, ("symbols", "Textualize/rich"): 17 / 18,
          ("retrieval", None): 0.8480092}


def guard_margin(res: dict[str, list[tuple[Question, dict[str, Any]]]]) -> float:
    """The smallest (MRR - guard) over the guards (>= 0: every guard kept)."""
    worst = 1.0
    for (s, repo), floor in GUARDS.items():
        ms = [m for q, m in res.get(s, []) if repo is None or q.repo == repo]
        if ms:
            worst = min(worst, mean_of(ms, "MRR") - floor + 1e-9)
    return worst


def loro(lab: Lab, fn: Any, defaults: dict[str, Any], grid: dict[str, list[Any]]) -> None:
    """Grid on history rows; in-sample best vs leave-one-repository-out on test rows.

    Only points that keep the public guards are eligible; if none does, the points
    with the best guard margin are."""
    names = list(grid)
    points = [defaults | dict(zip(names, vals, strict=True))
              for vals in itertools.product(*(grid[n] for n in names))]
    hist_repos = sorted({q.repo for q in lab.qs if q.set in HISTORY_SETS})
    per_point: list[dict[str, list[dict[str, Any]]]] = []
    margins: list[float] = []
    t = time.perf_counter()
    for p in points:
        res = lab.run(fn, p, sets=["hist-dev", "h2-dev", "symbols", "retrieval"])
        margins.append(guard_margin(res))
        by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for s in ("hist-dev", "h2-dev"):
            for q, m in res.get(s, []):
                by_repo[q.repo].append(m)
        per_point.append(by_repo)
    print(f"{len(points)} points in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    top_margin = max(margins)
    eligible = [i for i, m in enumerate(margins) if m >= 0] or [
        i for i, m in enumerate(margins) if m >= top_margin - 1e-9]
    print(f"{sum(m >= 0 for m in margins)} of {len(points)} points keep the guards "
          f"(best margin {top_margin:+.3f})")

    def obj(by_repo: dict[str, list[dict[str, Any]]], keep: set[str]) -> float:
        # every project weighs the same, whatever its number of rows
        vals = [(mean_of(rows, "R@5") + mean_of(rows, "MRR")) / 2
                for r, rows in by_repo.items() if r in keep]
        return statistics.fmean(vals)

    ranked = sorted(eligible, key=lambda i: -obj(per_point[i], set(hist_repos)))
    for i in ranked[:8]:
        print(f"  {obj(per_point[i], set(hist_repos)):.4f} margin {margins[i]:+.3f} "
              f"{({n: points[i][n] for n in names})}")
    best_all = ranked[0]
    print("in-sample best:", {n: points[best_all][n] for n in names})
    test_sets = ["hist-test", "h2-test"]
    ins = lab.run(fn, points[best_all], sets=test_sets)
    loro_rows: dict[str, list[tuple[Question, dict[str, Any]]]] = defaultdict(list)
    for held in hist_repos:
        i = max(eligible, key=lambda j: obj(per_point[j], set(hist_repos) - {held}))
        print(f"  held out {held}: {({n: points[i][n] for n in names})}")
        for s, pairs in lab.run(fn, points[i], sets=test_sets, repos={held}).items():
            loro_rows[s].extend(pairs)
    for s in test_sets:
        a = [m for _, m in ins[s]]
        b = [m for _, m in loro_rows[s]]
        print(f"{s}: in-sample R@5 {mean_of(a, 'R@5'):.3f} MRR {mean_of(a, 'MRR'):.3f} | "
              f"LORO R@5 {mean_of(b, 'R@5'):.3f} MRR {mean_of(b, 'MRR'):.3f}")
    print(brief(lab.run(fn, points[best_all])))


if __name__ == "__main__":
    main()


CHUNK_LINES = 24   # ~256 word pieces of code, the model's window


def file_chunks(path: str, text: str, lines_per: int = CHUNK_LINES) -> list[str]:
    """Windows of non-blank lines, each headed by the path (what a chunk embeds)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return [path + "\n" + "\n".join(lines[i:i + lines_per])
            for i in range(0, max(1, len(lines)), lines_per)]


def chunk_vectors(repo: Repo, model_tag: str = "minilm") -> tuple[np.ndarray, np.ndarray]:
    """(chunk vectors, file index of each chunk), embedded once and cached on disk."""
    path = CACHE / f"chunks-{model_tag}-{repo.src.replace('/', '__')}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    from neuralmind.index.embedder import load_embedder

    texts, owner = [], []
    for i, f in enumerate(repo.files):
        for c in file_chunks(f, repo.text[f]):
            texts.append(c)
            owner.append(i)
    t = time.perf_counter()
    vecs = load_embedder().embed(texts)
    print(f"  {repo.src}: {len(texts)} chunks in {time.perf_counter() - t:.1f} s",
          file=sys.stderr)
    out = (vecs.astype(np.float32), np.array(owner))
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out
