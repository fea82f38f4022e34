"""Search: the ONNX embedder, vectors, BM25 and their fusion."""
