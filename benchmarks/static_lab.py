"""Static (lookup-table) embedders for rank_lab experiments: a file/chunk vector list
that costs a tokenizer pass, not a transformer pass.

    wl256   WordLlama l2_supercat 256-d (MIT; weights shipped in the `wordllama` wheel:
            `pip download --no-deps wordllama==0.4.0.post1`, unzip, and copy the wheel's
            weights/l2_supercat_256.safetensors and
            tokenizers/l2_supercat_tokenizer_config.json into one folder, NM_WORDLLAMA_DIR)

Each model tag maps to `embed(texts) -> unit vectors`; chunk vectors of a repository
are cached like rank_lab's MiniLM chunks (`chunks-<tag>-<repo>.pkl`).
"""

from __future__ import annotations

import json
import os
import struct
from functools import cache
from pathlib import Path

import numpy as np

WL_DIR = Path(os.environ.get("NM_WORDLLAMA_DIR", "/tmp/retr2/pkgs"))


@cache
def _wordllama() -> tuple[object, np.ndarray]:
    from tokenizers import Tokenizer

    raw = (WL_DIR / "l2_supercat_256.safetensors").read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])["embedding.weight"]
    a, b = head["data_offsets"]
    table = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.float16).reshape(head["shape"])
    tok = Tokenizer.from_file(str(WL_DIR / "l2_supercat_tokenizer_config.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok, table.astype(np.float32)


def embed_wl(texts: list[str], max_tokens: int = 512) -> np.ndarray:
    """Mean of the token vectors (WordLlama's own pooling), L2-normalised."""
    tok, table = _wordllama()
    out = np.zeros((len(texts), table.shape[1]), np.float32)
    for i, enc in enumerate(tok.encode_batch(list(texts))):
        ids = enc.ids[:max_tokens]
        if ids:
            v = table[ids].mean(axis=0)
            out[i] = v / max(np.linalg.norm(v), 1e-12)
    return out


EMBEDDERS = {"wl256": embed_wl}
