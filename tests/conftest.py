"""Shared fixtures. Tests never need the network or ../shared: fixtures live in tests/fixtures/."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import app  # noqa: F401  (sets the offline environment defaults before any model library loads)
from app.adapters.parsers import FileParser
from app.adapters.redactor import PatternRedactor
from app.settings import Settings
from graphs.indexing import IndexingContext, build_indexing_graph
from graphs.support import SupportContext
from tests.fakes import HashingEmbedder, InMemoryIndex

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_KB = FIXTURES / "kb"
REPO = Path(__file__).resolve().parent.parent
_CONFIG_PREFIXES = ("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_", "OPENAI_", "JIRA_")


@pytest.fixture(autouse=True)
def _isolated_config(monkeypatch):
    """A developer's or CI's own configuration must not leak into tests."""
    for name in list(os.environ):
        if name.startswith(_CONFIG_PREFIXES):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def make_settings(tmp_path):
    def factory(**overrides) -> Settings:
        values = {"data_dir": tmp_path / "data", "kb_dir": FIXTURE_KB}
        values.update(overrides)
        return Settings(_env_file=None, **values)

    return factory


@pytest.fixture(scope="session")
def real_embedder():
    from app.adapters.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def index_fixture_kb(embedder, index, kb_dir: Path = FIXTURE_KB) -> None:
    graph = build_indexing_graph()
    context = IndexingContext(embedder=embedder, index=index, parser=FileParser(), chunk_max_tokens=120)
    for path in sorted(kb_dir.iterdir()):
        graph.invoke({"source": f"kb/{path.name}", "data": path.read_bytes()}, context=context)


@pytest.fixture
def fake_kb_context():
    """A SupportContext over the fixture KB with fake embedder and in-memory index (fast, deterministic)."""
    embedder, index = HashingEmbedder(), InMemoryIndex()
    index_fixture_kb(embedder, index)

    def factory(**overrides) -> SupportContext:
        values = dict(embedder=embedder, index=index, redactor=PatternRedactor(), min_score=0.25)
        values.update(overrides)
        return SupportContext(**values)

    return factory


@pytest.fixture
def serve(make_settings):
    """`with serve(**settings) as client:` runs the real app (lifespan included) on real adapters."""
    from app.main import create_app

    @contextmanager
    def run(settings=None, **overrides):
        application = create_app(settings or make_settings(**overrides))
        with TestClient(application, base_url="http://localhost") as client:
            yield client

    return run


def module_client(folder: str):
    """A module-scoped `client` fixture: the real app over tests/fixtures/<folder> (`client = module_client("x")`)."""

    @pytest.fixture(scope="module")
    def client(tmp_path_factory):
        from app.main import create_app

        settings = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("data"), kb_dir=FIXTURES / folder)
        with TestClient(create_app(settings), base_url="http://localhost") as test_client:
            yield test_client

    return client


def chat(client: TestClient, message: str, session_id: str | None = None) -> dict:
    """POST /chat (in a session when given one); the reply, after checking it is a 200."""
    body = {"message": message} | ({"session_id": session_id} if session_id else {})
    response = client.post("/chat", json=body)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def postgres_url():
    """A fresh Postgres database for this test (tests/postgres.py), dropped afterwards."""
    from tests.postgres import scratch_database

    with scratch_database() as url:
        yield url


@pytest.fixture(scope="session")
def onnx_model_cache(tmp_path_factory):
    """The packaged MiniLM exported to ONNX (fp32, and the default precision) in a cache folder of this session,
    copied from this machine's export cache when it holds them (a derived, checksummed copy, never an input)."""
    from app.adapters.embeddings import packaged_model_path
    from app.adapters.onnx_embeddings import ensure_onnx_model, shared_cache_dir

    cache = tmp_path_factory.mktemp("onnx-cache")
    for variant in ("fp32", Settings(_env_file=None).embeddings.embedding_onnx_variant):
        ensure_onnx_model(packaged_model_path(), cache, variant, shared_cache_dir())
    return cache


@pytest.fixture(scope="session")
def onnx_embedder(onnx_model_cache):
    """The fp32 ONNX encoder: the one whose vectors equal torch's."""
    from app.adapters.encoders import build_embedder

    return build_embedder("onnx", cache_dir=onnx_model_cache, onnx_variant="fp32", query_cache_size=0, batch_threads=2)
