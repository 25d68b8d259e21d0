"""ONNX Runtime embedder: the packaged MiniLM exported once, run without torch.

The same vectors as `SentenceTransformerEmbedder` (the reference): the text tokenised with `tokenizers` from
the model folder's tokenizer.json, cut at the model's max_seq_length, the transformer run, its last hidden
state mean-pooled over the attention mask and L2-normalised — the three modules of the model's modules.json.
Every text runs alone, so no padding enters a sequence: a vector does not depend on the batch it came in,
and it matches torch's to float precision (tests/unit/test_onnx_embeddings.py).

A batch (indexing) is spread over every core: one single-threaded ONNX Runtime session, called from a pool
of threads (ONNX Runtime releases the GIL while it computes).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

import numpy as np

from core.errors import EmbeddingError

log = logging.getLogger(__name__)

_EXPORT_TIMEOUT_S = 900


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_key(model_dir: Path, variant: str) -> str:
    """What an exported model is derived from: the weights, config and tokenizer files, the variant, the recipe."""
    from app.adapters.onnx_export import RECIPE

    digest = hashlib.sha256(f"{RECIPE}\0{variant}".encode())
    for name in ("config.json", "model.safetensors", "tokenizer.json", "sentence_bert_config.json"):
        path = model_dir / name
        digest.update(name.encode() + b"\0" + (_sha256(path).encode() if path.is_file() else b"-"))
    return digest.hexdigest()[:20]


def _valid(entry: Path) -> bool:
    model, checksum = entry / "model.onnx", entry / "model.onnx.sha256"
    return model.is_file() and checksum.is_file() and checksum.read_text().strip() == _sha256(model)


COPY_HEADROOM = 64 * 1024 * 1024  # free space a copy must leave on the target's disk (the databases live there)


def _copy_entry(source: Path, target: Path) -> None:
    """Copy a cache entry (model, then checksum: a half-copied entry never validates). A disk without room for
    it and COPY_HEADROOM more is not filled up trying (OSError at once): the database opening beside the copy at
    start-up would find it full."""
    target.mkdir(parents=True, exist_ok=True)
    needed = (source / "model.onnx").stat().st_size + COPY_HEADROOM
    if shutil.disk_usage(target).free < needed:
        raise OSError(f"{needed // (1024 * 1024)} MB needed, less free on its disk")
    partial = target / "model.onnx.partial"
    shutil.copyfile(source / "model.onnx", partial)
    partial.replace(target / "model.onnx")
    shutil.copyfile(source / "model.onnx.sha256", target / "model.onnx.sha256")


def shared_cache_dir() -> Path:
    """This machine's cache of exported models ($XDG_CACHE_HOME/deskmate/onnx): a second data dir copies its
    model from here instead of exporting it again."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "deskmate" / "onnx"


def ensure_onnx_model(model_dir: Path, cache_dir: Path, variant: str, shared_dir: Path | None = None) -> Path:
    """The cached ONNX file of `model_dir`'s `variant` under `cache_dir`, checksum verified. Missing (or damaged),
    it is copied from `shared_dir` when a valid one is there, else exported — by a child process, so torch never
    enters this process — and then also left in `shared_dir` for the next data dir."""
    name = f"{variant}-{source_key(model_dir, variant)}"
    entry = cache_dir / name
    if _valid(entry):
        return entry / "model.onnx"
    if (entry / "model.onnx").exists():
        log.warning("cached ONNX model %s does not match its checksum: replacing it", entry)
    if shared_dir is not None and shared_dir != cache_dir and _valid(shared_dir / name):
        try:
            _copy_entry(shared_dir / name, entry)
        except OSError as exc:  # a full or read-only data dir: the machine's verified copy is used where it is
            (entry / "model.onnx.partial").unlink(missing_ok=True)
            log.warning("could not copy the ONNX model into %s (%s): using %s", entry, exc, shared_dir / name)
            return shared_dir / name / "model.onnx"
        if _valid(entry):
            return entry / "model.onnx"
    _export(model_dir, entry, variant)
    if shared_dir is not None and shared_dir != cache_dir:
        try:
            _copy_entry(entry, shared_dir / name)
        except OSError as exc:  # a read-only home: the data dir's copy is enough
            log.info("could not keep the exported model in %s: %s", shared_dir, exc)
    return entry / "model.onnx"


def _export(model_dir: Path, entry: Path, variant: str) -> None:
    model, checksum = entry / "model.onnx", entry / "model.onnx.sha256"
    log.info("exporting the embedding model to ONNX (%s) into %s, once", variant, entry)
    command = [sys.executable, "-m", "app.adapters.onnx_export", str(model_dir), str(model), "--variant", variant]
    repo_root = Path(__file__).resolve().parents[2]
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, (str(repo_root), os.environ.get("PYTHONPATH"))))}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_EXPORT_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired as exc:
        raise EmbeddingError(f"exporting the embedding model to ONNX took over {_EXPORT_TIMEOUT_S} s") from exc
    if done.returncode != 0 or not model.is_file():
        raise EmbeddingError(f"exporting the embedding model to ONNX failed: {done.stderr.strip()[-1000:]}")
    checksum.write_text(_sha256(model) + "\n")


def _max_seq_length(model_dir: Path) -> int:
    config = model_dir / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text()).get("max_seq_length", 256))
    return 256


class OnnxEmbedder:
    """Normalised MiniLM embeddings from ONNX Runtime; `encoder` names what made them (recorded by a collection)."""

    def __init__(
        self,
        model_dir: str | Path,
        onnx_path: str | Path,
        *,
        variant: str = "fp32",
        threads: int = 1,
        batch_threads: int = 0,
        query_cache_size: int = 1024,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from app.adapters.embeddings import available_cores

        model_dir = Path(model_dir)
        if not (model_dir / "tokenizer.json").is_file():
            raise EmbeddingError(f"no tokenizer.json in the embedding model folder {model_dir}")
        self.model_path = str(model_dir)
        self.variant = variant
        self.encoder = f"onnx-{variant}"
        self.max_tokens = _max_seq_length(model_dir)
        self._counter = Tokenizer.from_file(str(model_dir / "tokenizer.json"))  # whole texts, for count_tokens
        self._counter.no_truncation()
        self._counter.no_padding()
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        self._tokenizer.no_padding()

        def session(intra_threads: int):
            options = ort.SessionOptions()
            options.intra_op_num_threads = intra_threads
            options.inter_op_num_threads = 1
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            return ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])

        # a question on `threads`; a batch on a pool of single-threaded calls, one per core
        self._session = session(threads)
        self._batch_workers = batch_threads if batch_threads > 0 else available_cores()
        self._batch_session = self._session if threads == 1 else session(1)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._input_names = {i.name for i in self._session.get_inputs()}
        self.dimension = int(self._embed_one("dimension").shape[0])
        self._query_cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._query_cache_size = max(0, query_cache_size)
        self._cache_lock = threading.Lock()

    def _embed_one(self, text: str, session=None) -> np.ndarray:
        encoding = self._tokenizer.encode(text)
        ids = np.asarray([encoding.ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        hidden = (session or self._session).run(None, {k: v for k, v in feeds.items() if k in self._input_names})[0]
        pooled = hidden[0].astype(np.float32).mean(axis=0)  # every token is attended: the mask is all ones
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)

    def _batch_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._batch_workers, thread_name_prefix="onnx-embed")
            return self._pool

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        if len(texts) == 1 or self._batch_workers == 1:
            return [self._embed_one(t, self._batch_session).tolist() for t in texts]
        # longest first, so the last texts left for a worker are short ones
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors = self._batch_pool().map(lambda i: self._embed_one(texts[i], self._batch_session), order)
        result: list[list[float]] = [[] for _ in texts]
        for i, vector in zip(order, vectors):
            result[i] = vector.tolist()
        return result

    def embed_query(self, text: str) -> list[float]:
        if not self._query_cache_size:
            return self._embed_one(text).tolist()
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()
        with self._cache_lock:
            vector = self._query_cache.get(key)
            if vector is not None:
                self._query_cache.move_to_end(key)
        if vector is None:
            vector = self._embed_one(text)
            with self._cache_lock:
                self._query_cache[key] = vector
                while len(self._query_cache) > self._query_cache_size:
                    self._query_cache.popitem(last=False)
        return vector.tolist()

    def count_tokens(self, text: str) -> int:
        return len(self._counter.encode(text, add_special_tokens=True).ids)

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
