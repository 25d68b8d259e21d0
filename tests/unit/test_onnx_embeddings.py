"""The ONNX Runtime embedder: the torch encoder's vectors without torch, exported once and cached by checksum."""

from __future__ import annotations

import numpy as np

from app.adapters.embeddings import packaged_model_path
from app.adapters.onnx_embeddings import ensure_onnx_model

QUESTIONS = [
    "How do I connect to the VPN on my Mac?",
    "printer offline again",
    "Mi contraseña caducó, ¿cómo la cambio?",
    "x",
]
# longer than the model reads (256 word pieces): both encoders must cut it at the same place
LONG_CHUNK = "Open Settings > Network and choose the company profile. " * 60


def test_onnx_vectors_are_the_torch_encoders_vectors(onnx_embedder, real_embedder):
    texts = [*QUESTIONS, LONG_CHUNK]
    onnx = np.asarray(onnx_embedder.embed_documents(texts))
    torch = np.asarray(real_embedder.embed_documents(texts))
    assert onnx.shape == torch.shape == (len(texts), 384)
    cosines = (onnx * torch).sum(axis=1)
    assert cosines.min() > 0.9999
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)


def test_a_batch_gives_each_text_the_vector_it_gets_alone(onnx_embedder):
    texts = [LONG_CHUNK, *QUESTIONS]  # very different lengths: nothing may depend on the others in the batch
    batch = onnx_embedder.embed_documents(texts)
    alone = [onnx_embedder.embed_query(t) for t in texts]
    assert np.allclose(batch, alone, atol=1e-6)
    assert len({tuple(np.round(v, 4)) for v in batch}) == len(texts)


def test_onnx_counts_tokens_as_the_torch_tokenizer_does(onnx_embedder, real_embedder):
    for text in [*QUESTIONS, LONG_CHUNK]:
        assert onnx_embedder.count_tokens(text) == real_embedder.count_tokens(text)
    assert onnx_embedder.count_tokens(LONG_CHUNK) > onnx_embedder.max_tokens == 256


def test_the_exported_model_is_reused_while_its_checksum_matches_and_exported_again_when_not(onnx_model_cache):
    model = ensure_onnx_model(packaged_model_path(), onnx_model_cache, "fp32")
    written = model.stat().st_mtime_ns
    assert ensure_onnx_model(packaged_model_path(), onnx_model_cache, "fp32") == model
    assert model.stat().st_mtime_ns == written  # not exported again
    checksum = model.with_name("model.onnx.sha256")
    good = checksum.read_text()
    checksum.write_text("0" * 64 + "\n")  # a damaged or half-written cache entry
    again = ensure_onnx_model(packaged_model_path(), onnx_model_cache, "fp32")
    assert again == model and checksum.read_text() == good


def test_a_model_copy_that_would_fill_the_data_disk_is_refused_before_a_byte_is_written(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    import pytest

    from app.adapters import onnx_embeddings

    source = tmp_path / "shared"
    source.mkdir()
    (source / "model.onnx").write_bytes(b"\0" * 4096)
    (source / "model.onnx.sha256").write_text("x\n")
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(1 << 30, 0, onnx_embeddings.COPY_HEADROOM))
    with pytest.raises(OSError, match="MB needed"):
        onnx_embeddings._copy_entry(source, tmp_path / "data" / "entry")
    assert not list((tmp_path / "data" / "entry").iterdir())
