"""What a server process loads before it serves, so that serving never stalls on it."""

from __future__ import annotations

from neuralmind.index import embedder


def preload_runtime() -> None:
    """onnxruntime, tokenizers and the tokenizer vocabulary: loading them holds the GIL
    20-30 ms at a time; ~0.15 s before serving instead of a stall while serving."""
    embedder.preload_runtime()
