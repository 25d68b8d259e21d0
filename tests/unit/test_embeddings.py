"""The MiniLM embedder: a repeated question is embedded once, and torch computes on the configured threads."""

from __future__ import annotations

import pytest

from app.adapters.embeddings import SentenceTransformerEmbedder, limit_torch_threads


class CountingModel:
    """The real model, counting the texts it encodes."""

    def __init__(self, model) -> None:
        self._model = model
        self.encoded: list[str] = []

    def encode(self, texts, **kwargs):
        self.encoded.extend(texts)
        return self._model.encode(texts, **kwargs)

    def __getattr__(self, name):
        return getattr(self._model, name)


@pytest.fixture
def counting_embedder():
    embedder = SentenceTransformerEmbedder(query_cache_size=2)
    embedder._model = CountingModel(embedder._model)
    return embedder


def test_a_repeated_question_is_embedded_once_and_gets_the_vector_the_model_computes(counting_embedder):
    question = "How do I connect to the VPN on my Mac?"
    first = counting_embedder.embed_query(question)
    again = counting_embedder.embed_query(question)
    assert again == first
    assert counting_embedder._model.encoded == [question]
    assert counting_embedder.embed_documents([question])[0] == first  # what the model gives without the cache


def test_changing_a_returned_vector_does_not_change_the_next_answer(counting_embedder):
    vector = counting_embedder.embed_query("my printer won't print")
    expected = list(vector)
    vector[0] = 42.0
    assert counting_embedder.embed_query("my printer won't print") == expected


def test_the_query_cache_forgets_the_least_recently_used_question_beyond_its_size(counting_embedder):
    for question in ("reset my password", "outlook is stuck", "reset my password", "laptop is slow"):
        counting_embedder.embed_query(question)
    counting_embedder.embed_query("reset my password")  # still kept: used more recently than "outlook is stuck"
    counting_embedder.embed_query("outlook is stuck")  # dropped when "laptop is slow" came: embedded again
    assert counting_embedder._model.encoded == [
        "reset my password",
        "outlook is stuck",
        "laptop is slow",
        "outlook is stuck",
    ]


def test_without_a_cache_every_question_runs_the_model():
    embedder = SentenceTransformerEmbedder(query_cache_size=0)
    embedder._model = CountingModel(embedder._model)
    embedder.embed_query("thanks!")
    embedder.embed_query("thanks!")
    assert embedder._model.encoded == ["thanks!", "thanks!"]


def test_torch_computes_on_the_configured_number_of_threads():
    import torch

    before = torch.get_num_threads()
    try:
        limit_torch_threads(1)
        assert torch.get_num_threads() == 1
        with pytest.raises(ValueError, match="at least 1"):
            limit_torch_threads(0)
    finally:
        torch.set_num_threads(before)


def test_a_batch_of_chunks_runs_on_the_batch_threads_and_a_question_on_one():
    import torch

    before = torch.get_num_threads()
    seen: list[tuple[int, int]] = []
    try:
        embedder = SentenceTransformerEmbedder(threads=1, batch_threads=2, query_cache_size=0)
        model = embedder._model

        class ThreadsSeen:
            def encode(self, texts, **kwargs):
                seen.append((len(texts), torch.get_num_threads()))
                return model.encode(texts, **kwargs)

        embedder._model = ThreadsSeen()
        embedder.embed_documents(["first chunk", "second chunk"])
        embedder.embed_query("vpn drops")
        assert seen == [(2, 2), (1, 1)]
        assert torch.get_num_threads() == 1  # back to the question's setting after the batch
    finally:
        torch.set_num_threads(before)
