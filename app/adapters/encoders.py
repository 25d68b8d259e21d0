"""The embedder DESKMATE_EMBEDDING_BACKEND names: ONNX Runtime (app/adapters/onnx_embeddings.py) or
sentence-transformers on torch (app/adapters/embeddings.py, the reference). Each is imported only when chosen."""

from __future__ import annotations

from pathlib import Path

from app.adapters.embeddings import packaged_model_path
from core.errors import EmbeddingError

EMBEDDING_BACKENDS = ("onnx", "torch")


def build_embedder(
    backend: str = "torch",
    model_path: str | Path | None = None,
    *,
    threads: int = 1,
    batch_threads: int = 0,
    query_cache_size: int = 1024,
    cache_dir: str | Path | None = None,
    onnx_variant: str = "int8-ffn-fp32",
):
    """The embedder of `backend` (DESKMATE_EMBEDDING_BACKEND) over the model folder (default: the packaged one).
    onnx: the model exported once into `cache_dir` (the data dir's models/onnx; default: this machine's cache,
    which also keeps a copy for the next data dir) in a child process;
    torch is imported only by the torch backend and by that export."""
    if backend == "torch":
        from app.adapters.embeddings import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(
            model_path, threads=threads, batch_threads=batch_threads, query_cache_size=query_cache_size
        )
    if backend == "onnx":
        from app.adapters.onnx_embeddings import OnnxEmbedder, ensure_onnx_model, shared_cache_dir

        model_dir = Path(model_path or packaged_model_path())
        if not model_dir.is_dir():
            raise EmbeddingError(f"embedding model folder not found: {model_dir}")
        shared = shared_cache_dir()
        onnx_path = ensure_onnx_model(model_dir, Path(cache_dir) if cache_dir else shared, onnx_variant, shared)
        return OnnxEmbedder(
            model_dir,
            onnx_path,
            variant=onnx_variant,
            threads=threads,
            batch_threads=batch_threads,
            query_cache_size=query_cache_size,
        )
    raise ValueError(f"unknown embedding backend {backend!r}: one of {', '.join(EMBEDDING_BACKENDS)}")
