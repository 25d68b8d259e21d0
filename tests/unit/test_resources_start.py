"""How build_resources loads what it needs: the independent parts at once, torch never while it is hidden."""

import threading

import pytest

import app.resources as resources_module
from app.adapters.redactor import PatternRedactor
from app.resources import build_resources
from tests.fakes import HashingEmbedder


def test_the_embedder_chroma_and_the_redactors_load_at_the_same_time(make_settings, monkeypatch):
    # each of the three waits here for the other two: loaded one after another, the first would wait in vain
    all_loading = threading.Barrier(3, timeout=30)
    make_client, redactors_from_settings = resources_module.make_client, resources_module.redactors_from_settings

    def build_embedder(*args, **kwargs):
        all_loading.wait()
        return HashingEmbedder()

    def open_chroma(*args, **kwargs):
        all_loading.wait()
        return make_client(*args, **kwargs)

    def build_redactors(*args, **kwargs):
        all_loading.wait()
        return redactors_from_settings(*args, **kwargs)

    monkeypatch.setattr(resources_module, "build_embedder", build_embedder)
    monkeypatch.setattr(resources_module, "make_client", open_chroma)
    monkeypatch.setattr(resources_module, "redactors_from_settings", build_redactors)
    resources = build_resources(make_settings(), redactor=PatternRedactor())
    try:
        assert resources.index.count() == 0
        assert "Tr0ub4dor-x9q" not in resources.redactor.redact("my password is Tr0ub4dor-x9q").text
    finally:
        resources.close()


def test_the_torch_embedder_is_loaded_before_the_redactors_hide_torch_from_their_imports(make_settings, monkeypatch):
    events: list[str] = []
    redactors_from_settings = resources_module.redactors_from_settings

    def build_embedder(backend, *args, **kwargs):
        events.append(f"{backend} embedder loading")
        events.append(f"{backend} embedder loaded")
        return HashingEmbedder()

    def build_redactors(*args, **kwargs):
        events.append("redactors loading")
        return redactors_from_settings(*args, **kwargs)

    monkeypatch.setattr(resources_module, "build_embedder", build_embedder)
    monkeypatch.setattr(resources_module, "redactors_from_settings", build_redactors)
    resources = build_resources(make_settings(embedding_backend="torch"), redactor=PatternRedactor())
    resources.close()
    assert events == ["torch embedder loading", "torch embedder loaded", "redactors loading"]


def test_a_start_whose_chroma_cannot_be_opened_fails_naming_it_and_closes_the_database_it_opened(
    make_settings, monkeypatch
):
    from app.storage import Database
    from core.errors import IndexUnavailable

    closed: list[bool] = []
    close = Database.close

    def recording_close(self):
        closed.append(True)
        return close(self)

    def broken_chroma(*args, **kwargs):
        raise IndexUnavailable("cannot open Chroma collection store at /nowhere: disk on fire")

    monkeypatch.setattr(Database, "close", recording_close)
    monkeypatch.setattr(resources_module, "make_client", broken_chroma)
    monkeypatch.setattr(resources_module, "build_embedder", lambda *args, **kwargs: HashingEmbedder())
    with pytest.raises(IndexUnavailable, match="disk on fire"):
        build_resources(make_settings(), redactor=PatternRedactor())
    assert closed == [True]
