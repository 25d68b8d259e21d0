"""A knowledge base records the encoder of its vectors; starting with another re-embeds every chunk, on real
Chroma with the real torch and ONNX encoders."""

from __future__ import annotations

import numpy as np
import pytest

from app.adapters.vector_index import ChromaVectorIndex, make_client
from app.encoder_switch import match_encoder
from tests.conftest import index_fixture_kb


class RecordingEncoder:
    """A real encoder, keeping every text it embeds (what indexing embedded, what a switch embeds again)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.encoder = inner.encoder
        self.dimension = inner.dimension
        self.texts: list[str] = []

    def embed_documents(self, texts):
        self.texts.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)

    def count_tokens(self, text):
        return self.inner.count_tokens(text)


@pytest.fixture
def torch_indexed(tmp_path, real_embedder):
    """The fixture KB indexed by the torch encoder into a real embedded Chroma, the encoder recorded."""
    index = ChromaVectorIndex(make_client("persistent", path=str(tmp_path / "chroma")), "kb_chunks")
    assert match_encoder(index, real_embedder, "kb_chunks") == 0  # empty: just recorded
    recorder = RecordingEncoder(real_embedder)
    index_fixture_kb(recorder, index)
    return index, recorder.texts


def stored(index: ChromaVectorIndex) -> dict[str, np.ndarray]:
    page = index._chunks.get(include=["embeddings"])
    return dict(zip(page["ids"], np.asarray(page["embeddings"])))


def test_a_new_collection_records_the_encoder_that_fills_it(torch_indexed):
    index, _ = torch_indexed
    assert index.recorded_encoder() == "torch"
    assert index.count() > 0


def test_starting_with_another_encoder_re_embeds_every_chunk_from_the_text_indexing_embedded(
    torch_indexed, onnx_embedder
):
    index, indexed_texts = torch_indexed
    before = stored(index)
    switcher = RecordingEncoder(onnx_embedder)
    assert match_encoder(index, switcher, "kb_chunks") == len(before)
    assert index.recorded_encoder() == "onnx-fp32"
    assert sorted(switcher.texts) == sorted(indexed_texts)  # heading prefix + body, as chunking built them
    after = stored(index)
    assert after.keys() == before.keys()
    page = index._chunks.get(include=["documents", "metadatas"])
    from app.adapters.vector_index import embedded_text

    for chunk_id, text, meta in zip(page["ids"], page["documents"], page["metadatas"]):
        expected = onnx_embedder.embed_documents([embedded_text(meta, text)])[0]
        assert np.allclose(after[chunk_id], expected, atol=1e-5)
    # the same encoder again changes nothing
    assert match_encoder(index, switcher, "kb_chunks") == 0


def test_a_collection_written_before_encoders_were_recorded_counts_as_torch(tmp_path, real_embedder):
    index = ChromaVectorIndex(make_client("persistent", path=str(tmp_path / "chroma")), "old_chunks")
    index_fixture_kb(real_embedder, index)  # no record: how every existing data dir looks
    assert index.recorded_encoder() == "torch"
    assert match_encoder(index, real_embedder, "old_chunks") == 0
