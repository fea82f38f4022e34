#!/usr/bin/env python3
"""The recall levers of issue #16 wave C, on the memory eval's dev half (BENCHMARKS.md "Memory").

    python benchmarks/memory_levers.py [--parity 0|1] [--json]
    python benchmarks/memory_levers.py --embedder e5q4:DIR     # another model (embed_candidates.py)

Each question's signals are recorded once from the real pipeline (the eval's workspace, as
`memory_bench.py eval` builds it): the FTS5 bm25 scores, the hubs it names, the code search's
relevance per atom, and the cosine of the question with each atom under several embedded
texts (the real model). The fusion forms are then applied offline, so a lever costs
milliseconds instead of a rebuild. Recall@5 per set; `--parity 1` reads the test half
(report it for the chosen lever only: choosing reads dev). `--embedder` puts another model
in the memory's place (the code search keeps the engine's) and prints semantic-only and the
shipped fusion on both halves, with each model's embedding time.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from embed_candidates import Candidate, load_candidate
from memory_bench import SETS, load, seeded_workspace, uptime

from neuralmind import config
from neuralmind.engine.memory_ops import _code_hits
from neuralmind.memory import hubs
from neuralmind.memory import recall as R
from neuralmind.memory.search import about_words, get_embedder
from neuralmind.memory.terms import search_terms, words

Row = dict[str, Any]


def views(data: dict[str, Any]) -> dict[str, list[str]]:
    """The texts an atom could be embedded as."""
    a = data["atoms"]
    return {"label + text": [f"{x['label']}. {x['text']}" for x in a],
            "label": [x["label"] for x in a], "text": [x["text"] for x in a],
            "hubs + label + text": [f"{', '.join(x['hubs'])}: {x['label']}. {x['text']}" for x in a],
            "label + text + about names": [f"{x['label']}. {x['text']} {about_words(x['about'])}"
                                           .strip() for x in a]}


def record(data: dict[str, Any], model: Candidate | None = None,
           timing: dict[str, float] | None = None) -> tuple[list[str], dict[str, list[Row]]]:
    embedder = get_embedder()
    embed = model.embed if model else embedder.embed
    embed_query = model.embed_query if model else (lambda t: embedder.embed([t])[0])
    keys = [x["key"] for x in data["atoms"]]
    t0 = time.perf_counter()
    mats = {name: embed(texts) for name, texts in views(data).items()}
    if timing is not None:
        timing["documents"] = time.perf_counter() - t0
        timing["questions"] = 0.0
    with tempfile.TemporaryDirectory(prefix="memory-levers-") as tmp:
        ws, ids = seeded_workspace(data, Path(tmp) / "neuralmind")
        mem, conn = ws.memory, ws.memory.connection()
        key_of = {int(s): ids[i] for s, i in conn.execute("SELECT seq, id FROM atoms")}
        field = {x["key"]: set(words(" ".join([x["label"], x["text"], *x["hubs"], *(
            s for h in x["hubs"] for s in data["hubs"].get(h, []))]))) for x in data["atoms"]}
        out: dict[str, list[Row]] = {}
        for s in SETS:
            rows = []
            for i, item in enumerate(data[s]):
                q = item["q"]
                t0 = time.perf_counter()
                qv = embed_query(q)
                if timing is not None:
                    timing["questions"] += time.perf_counter() - t0
                lex = R._lexical(mem, conn, q, config.RECALL_DEPTH)
                named = hubs.named(mem.hub_list(), q)
                code = R._code(conn, _code_hits(mem, ws.search, q), config.RECALL_DEPTH)
                terms = search_terms(q)
                rows.append({
                    "answers": item["answers"], "parity": i % 2,
                    "lex": {key_of[k]: v for k, v in lex.items()},
                    "hub": {key_of[k] for k in R._hub_members(mem, conn, named, config.RECALL_DEPTH)},
                    "code": {key_of[k]: v for k, v in code.items()},
                    "cos": {n: dict(zip(keys, (m @ qv).tolist(), strict=True)) for n, m in mats.items()},
                    "cov": coverage(terms, keys, field)})
            out[s] = rows
    return keys, out


def coverage(terms: list[str], keys: list[str], field: dict[str, set[str]]) -> dict[str, float]:
    """IDF-weighted share of the question's terms each atom holds (prefix match)."""
    if not terms:
        return {}
    hit = {k: [any(w.startswith(t) for w in field[k]) for t in terms] for k in keys}
    idf = [math.log((len(keys) + 1) / (sum(hit[k][j] for k in keys) + 0.5))
           for j in range(len(terms))]
    return {k: sum(w for w, h in zip(idf, hit[k], strict=True) if h) / sum(idf) for k in keys}


def minmax(d: dict[str, float], ks: list[str]) -> dict[str, float]:
    vals = [d.get(k, 0.0) for k in ks]
    lo, hi = min(vals), max(vals)
    if hi <= lo:
        return {k: (1.0 if hi > 0 else 0.0) for k in ks}
    return {k: (d.get(k, 0.0) - lo) / (hi - lo) for k in ks}


def fused(r: Row, view: str, form: str, alpha: float, beta: float, gate: bool) -> list[str]:
    """Recall's candidate set and normalisation, with the form under test."""
    cos = r["cos"][view]
    sem = [k for k in sorted(cos, key=lambda k: -cos[k])[:config.RECALL_DEPTH]
           if cos[k] >= config.RECALL_SIM_FLOOR]
    ks = sorted(set(r["lex"]) | r["hub"] | set(sem) | set(r["code"]))
    if not ks:
        return []
    top = max(r["lex"].get(k, 0.0) for k in ks)
    lex = {k: (r["lex"].get(k, 0.0) / top if top > 0 else 0.0)
           + (config.RECALL_HUB_BONUS if k in r["hub"] else 0.0) for k in ks}
    ln, sn, cn = minmax(lex, ks), minmax(cos, ks), minmax(r["code"], ks)
    g = max((r["cov"].get(k, 0.0) for k in ks if lex[k] > 0), default=0.0) if gate else 1.0
    if form == "additive":
        score = {k: g * ln[k] + alpha * sn[k] + beta * cn[k] for k in ks}
    else:
        score = {k: g * ln[k] + alpha * max(sn[k], beta * cn[k]) for k in ks}
    return sorted(score, key=lambda k: -score[k])


def rrf(r: Row, ws: float, wl: float, wc: float, k0: int) -> list[str]:
    cos = r["cos"]["label + text"]
    ranked = [sorted(r["lex"], key=lambda k: -r["lex"][k]),
              sorted(cos, key=lambda k: -cos[k])[:config.RECALL_DEPTH],
              sorted(r["code"], key=lambda k: -r["code"][k])]
    score: dict[str, float] = {}
    for w, lst in zip((wl, ws, wc), ranked, strict=True):
        for i, k in enumerate(lst):
            score[k] = score.get(k, 0.0) + w / (k0 + i + 1)
    return sorted(score, key=lambda k: -score[k])


def measure(rows: dict[str, list[Row]], parity: int, rank: Callable[[Row], list[str]]
            ) -> dict[str, float]:
    out = {}
    for s in SETS:
        got = [sum(a in rank(r)[:5] for a in r["answers"]) / len(r["answers"])
               for r in rows[s] if r["parity"] == parity]
        out[s] = round(statistics.mean(got), 3)
    out["mean"] = round(statistics.mean(out[s] for s in SETS), 3)
    return out


def compare(spec: str) -> dict[str, Any]:
    """One model in the memory's place: semantic-only and the shipped fusion, both halves."""
    data = load()
    model = load_candidate(spec)
    timing: dict[str, float] = {}
    keys, rows = record(data, model, timing)
    n_docs = sum(len(t) for t in views(data).values())
    n_q = sum(len(data[s]) for s in SETS)
    out: dict[str, Any] = {"model": model.name, "load": uptime(),
                           "ms per document": round(1000 * timing["documents"] / n_docs, 2),
                           "ms per question": round(1000 * timing["questions"] / n_q, 2)}
    for p, half in ((0, "dev"), (1, "test")):
        out[f"{half}: semantic only (label + text + about names)"] = measure(
            rows, p, lambda r: sorted(keys, key=lambda k: -r["cos"]["label + text + about names"][k]))
        out[f"{half}: shipped fusion (gate, max, about names)"] = measure(
            rows, p, lambda r: fused(r, "label + text + about names", "max", 2.0, 1.0, True))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parity", type=int, choices=(0, 1), default=0)
    parser.add_argument("--embedder", help="compare a model: minilm or e5q4:DIR")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.embedder:
        result = compare(args.embedder)
        print(json.dumps(result, indent=2) if args.json else
              "\n".join(f"{k:60s} {v}" for k, v in result.items()))
        return
    keys, rows = record(load())
    p = args.parity
    table: dict[str, Any] = {"load": uptime(), "half": "dev" if p == 0 else "test"}
    table["wave B (additive, alpha 2, code 2)"] = measure(
        rows, p, lambda r: fused(r, "label + text", "additive", 2.0, 2.0, False))
    for view in views(load()):
        table[f"semantic only: {view}"] = measure(
            rows, p, lambda r, v=view: sorted(keys, key=lambda k: -r["cos"][v][k]))
    table["semantic only: max over label, text, label + text"] = measure(
        rows, p, lambda r: sorted(keys, key=lambda k: -max(
            r["cos"][v][k] for v in ("label", "text", "label + text"))))
    grid = itertools.product((1.0, 1.5, 2.0, 3.0), (0.5, 1.0), (0.25, 0.5, 1.0), (10, 30, 60))
    best = max(((measure(rows, p, lambda r, g=g: rrf(r, *g)), g) for g in grid),
               key=lambda x: (x[0]["mean"], x[0]["paraphrases"]))
    table[f"RRF, best of 72 (weights semantic/lexical/code, k: {best[1]})"] = best[0]
    table["gate, additive, code 1"] = measure(
        rows, p, lambda r: fused(r, "label + text", "additive", 2.0, 1.0, True))
    table["gate, max(semantic, code)"] = measure(
        rows, p, lambda r: fused(r, "label + text", "max", 2.0, 1.0, True))
    table["gate, max, about names embedded (kept)"] = measure(
        rows, p, lambda r: fused(r, "label + text + about names", "max", 2.0, 1.0, True))
    if args.json:
        print(json.dumps(table, indent=2))
        return
    for name, value in table.items():
        print(f"{name:70s} {value}")


if __name__ == "__main__":
    main()
