"""Which chunk vectors pay for themselves: subsets of rank_lab's cached 24-line chunk
vectors, scored by rank_lab (`lab2`, `chunk_sel`) and costed in embedded word pieces.

A chunk list is the one lever RETR2 found that wins both history sets, at 2.7x the word
pieces of all node texts; the build-time guard allows 1.2x. Each selector keeps a subset
of a repository's chunks (the vectors are the cached full-window MiniLM ones, so a subset
costs nothing to try) and `cost` counts what embedding that subset would cost:

    all          every window
    headN        the first N windows of each file
    strideN      every Nth window of each file (0, N, 2N, ...)
    tests        only test files' windows; nontests the rest
    sparseX      only files whose node texts hold fewer than X word pieces per chunk
                 word piece (the code the node vectors describe least)

    python benchmarks/chunk_lab.py --cost head1 stride2 tests     # word pieces, 14 projects
    python benchmarks/rank_lab.py --variant lab2 --trials t.jsonl # {"w_chunks": 2, "chunk_sel": "head1"}
"""

from __future__ import annotations

import argparse
import pickle
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rank_lab  # noqa: E402

TODAY_PIECES = 698_346   # every node text of the 14 projects (BENCHMARKS.md, cold index time)


def meta(repo: Any) -> dict[str, Any]:
    """Per chunk: position in its file, word pieces; per file: node-text word pieces."""
    if hasattr(repo, "chunk_meta"):
        return repo.chunk_meta
    path = rank_lab.CACHE / f"chunkmeta-{repo.src.replace('/', '__')}.pkl"
    if path.exists():
        repo.chunk_meta = pickle.loads(path.read_bytes())
        return repo.chunk_meta
    import ranking_variants as rv

    from neuralmind.index.embedder import load_embedder

    emb = load_embedder()
    texts, pos = [], []
    for f in repo.files:
        for i, c in enumerate(rank_lab.file_chunks(f, repo.text[f])):
            texts.append(c)
            pos.append(i)
    pieces = [len(x) for x in emb._tokenize(texts)]
    node_texts = rv._shipped_texts(repo)
    node_pieces: dict[str, int] = {}
    ids = list(node_texts)
    for i, n in zip(ids, emb._tokenize([node_texts[i] for i in ids]), strict=True):
        f = i.split("::", 1)[0]
        node_pieces[f] = node_pieces.get(f, 0) + len(n)
    repo.chunk_meta = {"pos": np.array(pos), "pieces": np.array(pieces),
                       "node_pieces": node_pieces}
    path.write_bytes(pickle.dumps(repo.chunk_meta))
    return repo.chunk_meta


def mask(repo: Any, owner: np.ndarray, sel: str) -> np.ndarray:
    """Which of the repository's chunks the selector keeps."""
    from neuralmind.index.pairing import is_test_path

    m = meta(repo)
    pos = m["pos"]
    if sel == "all":
        return np.ones(len(owner), bool)
    if (g := re.fullmatch(r"head(\d+)", sel)):
        return pos < int(g[1])
    if (g := re.fullmatch(r"stride(\d+)", sel)):
        return pos % int(g[1]) == 0
    test = np.array([is_test_path(repo.files[o]) for o in owner])
    if sel == "tests":
        return test
    if sel == "nontests":
        return ~test
    if (g := re.fullmatch(r"sparse([\d.]+)", sel)):
        per_file: dict[int, int] = {}
        for o, p in zip(owner, m["pieces"], strict=True):
            per_file[o] = per_file.get(o, 0) + int(p)
        ratio = {o: m["node_pieces"].get(repo.files[o], 0) / max(1, n)
                 for o, n in per_file.items()}
        return np.array([ratio[o] < float(g[1]) for o in owner])
    if "+" in sel:
        out = np.zeros(len(owner), bool)
        for part in sel.split("+"):
            out |= mask(repo, owner, part)
        return out
    raise ValueError(f"unknown chunk selector {sel}")


def chunks(repo: Any) -> tuple[np.ndarray, np.ndarray]:
    if not hasattr(repo, "chunks_minilm"):
        path = rank_lab.CACHE / f"chunks-minilm-{repo.src.replace('/', '__')}.pkl"
        repo.chunks_minilm = pickle.loads(path.read_bytes())
    return repo.chunks_minilm


def chunk_files(repo: Any, q: Any, s: Any, sel: str) -> list[str]:
    """Files by their best selected chunk's cosine to the question (300 chunks deep)."""
    key = ("chunk_sel", sel)
    if key in s.extra:
        return s.extra[key]
    vecs, owner = chunks(repo)
    mk = getattr(repo, "chunk_masks", {})
    repo.chunk_masks = mk
    if sel not in mk:
        mk[sel] = np.flatnonzero(mask(repo, owner, sel))
    keep = mk[sel]
    cos = vecs[keep] @ s.extra["qv"].astype(np.float32)
    best: dict[str, float] = {}
    for i in np.argsort(-cos)[:300]:
        best.setdefault(repo.files[owner[keep[i]]], float(cos[i]))
    s.extra[key] = list(best)
    return s.extra[key]


def cost(sels: list[str]) -> None:
    """Word pieces each selector embeds over the 14 projects, against today's node texts."""
    srcs = sorted({q.src for q in rank_lab.questions(
        ["symbols", "retrieval", "hist-test", "h2-test"])})
    totals = dict.fromkeys(sels, 0)
    counts = dict.fromkeys(sels, 0)
    node_total = 0
    for src in srcs:
        repo = rank_lab.Repo(src)
        _, owner = chunks(repo)
        m = meta(repo)
        node_total += sum(m["node_pieces"].values())
        for sel in sels:
            k = mask(repo, owner, sel)
            totals[sel] += int(m["pieces"][k].sum())
            counts[sel] += int(k.sum())
    print(f"node texts: {node_total} word pieces (BENCHMARKS: {TODAY_PIECES})")
    for sel in sels:
        print(f"{sel:>14}: {counts[sel]:6d} chunks {totals[sel]:9d} pieces "
              f"= +{totals[sel] / node_total:.3f}x of node texts")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cost", nargs="+", required=True)
    cost(ap.parse_args().cost)


def member_vectors(repo: Any, variant: str) -> tuple[list[str], np.ndarray]:
    """Node vectors where members are reached through the chunk that contains them:
    "chunkmem:<which>:<sel>" drops the own vector of every member ("all") or of members
    without a docstring ("nodoc"), and gives each the vector of the selected chunk holding
    its first line (none when that chunk is not selected). Returns (ids, vectors)."""
    import ranking_variants as rv

    _, which, sel = variant.split(":")
    texts = rv._shipped_texts(repo)
    nodes = repo.graph.nodes
    dropped = {i for i in texts if rv._is_member(nodes[i])
               and (which == "all" or not nodes[i].docstring)}
    own = sorted(set(texts) - dropped)
    vecs = list(rank_lab.embed_cached([texts[i] for i in own]))
    cvecs, owner = chunks(repo)
    keep = mask(repo, owner, sel)
    first: dict[int, int] = {}
    for ci, o in enumerate(owner):
        first.setdefault(int(o), ci)
    fidx = {f: i for i, f in enumerate(repo.files)}
    nonblank: dict[str, list[int]] = {}
    ids = list(own)
    for i in sorted(dropped):
        n = nodes[i]
        fi = fidx.get(n.file)
        if fi is None or fi not in first:
            continue
        if n.file not in nonblank:   # non-blank lines before each line (file_chunks' windows)
            acc, c = [], 0
            for ln in repo.text[n.file].splitlines():
                acc.append(c)
                c += bool(ln.strip())
            nonblank[n.file] = acc
        lines = nonblank[n.file]
        at = lines[min(max(n.start_line - 1, 0), len(lines) - 1)] if lines else 0
        ci = first[fi] + at // rank_lab.CHUNK_LINES
        if ci < len(owner) and owner[ci] == fi and keep[ci]:
            ids.append(i)
            vecs.append(cvecs[ci])
    return ids, np.stack(vecs).astype(np.float32)


def file_head_vectors(repo: Any) -> tuple[list[str], np.ndarray]:
    """Node vectors where each file node's vector is its head window's (path + its first
    24 non-blank lines) instead of its "file path / defines a, b, ..." text."""
    import ranking_variants as rv

    texts = rv._shipped_texts(repo)
    ids = sorted(texts)
    vecs = rank_lab.embed_cached([texts[i] for i in ids])
    cvecs, owner = chunks(repo)
    first: dict[str, int] = {}
    for ci, o in enumerate(owner):
        first.setdefault(repo.files[int(o)], ci)
    for row, i in enumerate(ids):
        if "::" not in i and i in first:
            vecs[row] = cvecs[first[i]]
    return ids, vecs.astype(np.float32)
