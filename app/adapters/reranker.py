"""Optional cross-encoder reranker (sentence-transformers `CrossEncoder`), off by default.

No cross-encoder can be installed offline from PyPI (see MODELS.md), so deskmate's default
pipeline does without one; an administrator who has a model folder (or a model already in the
local Hugging Face cache) sets DESKMATE_RERANKER_MODEL and every search is reranked by it.
Implements core.ports.Reranker: scores are probabilities (sigmoid of the logit) in 0..1.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Sequence

log = logging.getLogger(__name__)
MAX_PASSAGE_TOKENS = 256


class RerankerUnavailable(RuntimeError):
    """The configured reranker model could not be loaded (start-up refuses to run without it)."""


class CrossEncoderReranker:
    def __init__(self, model: str, *, max_length: int = MAX_PASSAGE_TOKENS, batch_size: int = 32) -> None:
        # imported here: torch costs seconds and most installations never configure a reranker
        import torch
        from sentence_transformers import CrossEncoder

        self.name = model
        self.batch_size = batch_size
        try:
            self._model = CrossEncoder(
                str(Path(model)) if Path(model).is_dir() else model,
                device="cpu",
                local_files_only=True,
                max_length=max_length,
                activation_fn=torch.nn.Sigmoid(),
            )
        except Exception as exc:  # not a folder, not in the local cache, not a cross-encoder …
            raise RerankerUnavailable(
                f"DESKMATE_RERANKER_MODEL={model!r} could not be loaded ({exc}). Point it at a local "
                "sentence-transformers cross-encoder folder, or unset it to run without a reranker."
            ) from exc
        self._lock = threading.Lock()  # one forward pass at a time keeps latency predictable on 2 cores
        log.info("reranker loaded: %s", model)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        with self._lock:
            scores = self._model.predict(
                [(query, p) for p in passages],
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        return [float(s) for s in scores]
