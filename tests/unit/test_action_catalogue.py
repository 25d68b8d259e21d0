"""The action catalogue (nodes/support/actions.py) with the real MiniLM embedder: context filter → embedding top-k →
core merge, and the degradation tree (embedding fails → context filter; filter fails → every action)."""

import logging
from typing import get_args

import pytest
from pydantic import ValidationError

from app.adapters.redactor import PatternRedactor
from app.settings import Settings
from core.errors import IndexUnavailable
from graphs.support import Action, SupportContext
from nodes.support.actions import ACTIONS, BUILTIN_ACTIONS, BUILTIN_NAMES, offer_actions
from nodes.support.catalogue import DEFAULT_CORE_ACTIONS, ActionCatalogue, ActionSpec
from tests.fakes import FakeStatusChecker, InMemoryIndex, status_report

ALL = set(BUILTIN_NAMES)


class BrokenEmbedder:
    """An embedder whose model is gone: every call raises, as a crashed or unloadable model would."""

    dimension = 384

    def __init__(self) -> None:
        self.calls = 0

    def embed_documents(self, texts):
        self.calls += 1
        raise RuntimeError("model file is corrupt")

    def embed_query(self, text):
        return self.embed_documents([text])[0]

    def count_tokens(self, text):
        return len(text.split())


class CountingEmbedder:
    def __init__(self, inner) -> None:
        self.inner, self.dimension, self.queries = inner, inner.dimension, []

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        self.queries.append(text)
        return self.inner.embed_query(text)

    def count_tokens(self, text):
        return self.inner.count_tokens(text)


class UnreachableIndex(InMemoryIndex):
    def count(self) -> int:
        raise IndexUnavailable("Chroma is not reachable: connection refused")


def _best_match(selection) -> str:
    """The non-core action the message is most similar to."""
    return max((n for n in selection.scores if n not in DEFAULT_CORE_ACTIONS), key=selection.scores.get)


def _indexed() -> InMemoryIndex:
    index = InMemoryIndex()
    index.replace_document(
        {"doc_id": "d1", "version": "v1"}, [{"chunk_id": "c1", "doc_id": "d1", "version": "v1"}], [[1.0, 0.0]]
    )
    return index


@pytest.fixture(scope="module")
def catalogue(real_embedder):
    built = ActionCatalogue.build(real_embedder, BUILTIN_ACTIONS)
    assert built.embedded
    return built


@pytest.fixture
def context(real_embedder, catalogue):
    def factory(**overrides) -> SupportContext:
        values = dict(
            embedder=real_embedder,
            index=_indexed(),
            redactor=PatternRedactor(),
            status=FakeStatusChecker(status_report()),
            actions=catalogue,
        )
        return SupportContext(**(values | overrides))

    return factory


def test_the_built_in_actions_are_the_ones_decide_and_the_graph_know():
    # use_integration is the one node that carries out every configured integration (each its own action);
    # converse (greetings, closings, "are you a bot?") is chosen by the dialogue-act rules only, never by the LLM
    rule_only = {"use_integration", "converse"}
    assert set(BUILTIN_NAMES) == set(get_args(Action)) - rule_only == {row.name for row in ACTIONS} - rule_only


def test_an_outage_question_is_offered_the_status_check(catalogue, context):
    selection = catalogue.select(context(), query="is there an outage right now")
    assert selection.mode == "embedding" and selection.reason == ""
    assert "check_status" in selection.offered and "troubleshoot" not in selection.offered
    assert _best_match(selection) == "check_status"


def test_a_question_about_my_ticket_is_offered_the_ticket_search(catalogue, context):
    selection = catalogue.select(context(), query="what's the status of my ticket")
    assert "search_tickets" in selection.offered and "troubleshoot" not in selection.offered
    assert _best_match(selection) == "search_tickets"


def test_a_broken_device_is_offered_troubleshooting(catalogue, context):
    selection = catalogue.select(context(), query="my printer is jammed")
    assert "troubleshoot" in selection.offered and "search_kb" not in selection.offered
    assert _best_match(selection) == "troubleshoot"


@pytest.mark.parametrize(
    "query",
    [
        "is there an outage right now",
        "my printer is jammed",
        "hello",
        "what's the status of my ticket",
        "How do I connect to the VPN on my Mac?",
    ],
)
def test_the_core_actions_are_always_offered_beside_a_focused_few(catalogue, context, query):
    selection = catalogue.select(context(), query=query)
    assert set(DEFAULT_CORE_ACTIONS) <= set(selection.offered)
    assert len(selection.offered) == len(DEFAULT_CORE_ACTIONS) + catalogue.top_k < len(ALL)


def test_core_set_and_top_k_are_configurable(real_embedder, context):
    narrow = ActionCatalogue.build(real_embedder, BUILTIN_ACTIONS, core=("answer",), top_k=1)
    assert narrow.select(context(), query="is there an outage right now").offered == ("answer", "check_status")
    only_core = ActionCatalogue.build(real_embedder, BUILTIN_ACTIONS, core=("answer", "search_kb"), top_k=0)
    assert only_core.select(context(), query="my printer is jammed").offered == ("answer", "search_kb")


def test_an_unknown_core_action_is_refused_with_the_known_names():
    with pytest.raises(ValueError, match="unknown action.*frobnicate; known: answer, clarify"):
        ActionCatalogue(BUILTIN_ACTIONS, core=("answer", "frobnicate"))
    with pytest.raises(ValidationError, match="DESKMATE_CORE_ACTIONS: unknown action"):
        Settings(_env_file=None, core_actions="answer,frobnicate")
    assert Settings(_env_file=None, core_actions=" Answer , search_kb,answer").conversation.core_action_names == (
        "answer",
        "search_kb",
    )


def test_without_a_status_page_check_status_is_never_offered(catalogue, context):
    ctx = context(status=None)
    for query in ["is there an outage right now", "Is email down for everyone?", "any incidents today?"]:
        assert "check_status" not in catalogue.select(ctx, query=query).offered
    degraded = catalogue.select(context(status=None, embedder=BrokenEmbedder()), query="is there an outage")
    assert degraded.mode == "context_filter" and "check_status" not in degraded.offered


def test_an_empty_index_offers_neither_another_search_nor_troubleshooting(catalogue, context):
    ctx = context(index=InMemoryIndex(), embedder=BrokenEmbedder())  # the filtered set, whatever the ranking
    assert set(catalogue.select(ctx, query="my printer is jammed").offered) == ALL - {"search_kb", "troubleshoot"}


def test_an_embedder_that_fails_falls_back_to_the_context_filtered_set_and_says_why(catalogue, context, caplog):
    ctx = context(status=None, embedder=BrokenEmbedder())
    with caplog.at_level(logging.WARNING, logger="nodes.support.catalogue"):
        update = offer_actions({"turn": {"query": "is there an outage right now", "query_embedding": []}}, ctx)
    assert update["action_selection"] == "context_filter"
    assert set(update["offered_actions"]) == ALL - {"check_status"}  # everything this deployment can do
    assert "model file is corrupt" in update["action_selection_reason"]
    assert any("embedding unavailable (model file is corrupt)" in r.getMessage() for r in caplog.records)


def test_examples_that_could_not_be_embedded_at_start_up_fall_back_to_the_context_filter(context, caplog):
    with caplog.at_level(logging.ERROR, logger="nodes.support.catalogue"):
        unembedded = ActionCatalogue.build(BrokenEmbedder(), BUILTIN_ACTIONS)
    assert not unembedded.embedded and any("start-up" in r.getMessage() for r in caplog.records)
    selection = unembedded.select(context(actions=unembedded), query="is there an outage right now")
    assert selection.mode == "context_filter" and set(selection.offered) == ALL
    assert "could not be embedded at start-up (model file is corrupt)" in selection.reason


def test_a_message_embedded_by_another_model_falls_back_instead_of_comparing_nonsense(catalogue, context):
    from tests.fakes import HashingEmbedder

    selection = catalogue.select(
        context(embedder=HashingEmbedder()), query="my printer is jammed", query_embedding=[0.1] * 256
    )
    assert selection.mode == "context_filter" and "another model" in selection.reason


def test_a_context_filter_that_fails_offers_every_action(catalogue, context, caplog):
    with caplog.at_level(logging.WARNING, logger="nodes.support.catalogue"):
        update = offer_actions({"turn": {"query": "my printer is jammed"}}, context(index=UnreachableIndex()))
    assert update["action_selection"] == "all" and update["offered_actions"] == list(BUILTIN_NAMES)
    assert "Chroma is not reachable" in update["action_selection_reason"]
    assert any("context filter failed" in r.getMessage() for r in caplog.records)


def test_the_query_embedding_retrieval_made_is_reused(real_embedder, catalogue, context):
    counting = CountingEmbedder(real_embedder)
    ctx = context(embedder=counting)
    vector = real_embedder.embed_query("is there an outage right now")
    with_vector = catalogue.select(ctx, query="is there an outage right now", query_embedding=vector)
    assert counting.queries == []
    without = catalogue.select(ctx, query="is there an outage right now")  # small talk path: nothing retrieved
    assert counting.queries == ["is there an outage right now"] and without.offered == with_vector.offered


def test_a_turn_keeps_the_offer_it_made_first_and_no_catalogue_offers_nothing_new(catalogue, context):
    ctx = context()
    first = offer_actions({"turn": {"query": "is there an outage right now"}}, ctx)
    assert first["action_selection"] == "embedding"
    assert offer_actions({"turn": {"query": "my printer is jammed", **first}}, ctx) == {}  # decide's second visit
    assert offer_actions({"turn": {"query": "my printer is jammed"}}, context(actions=None)) == {}


def test_a_custom_action_with_an_unknown_requirement_is_refused():
    with pytest.raises(ValueError, match="unknown condition"):
        ActionSpec(
            "reset_password",
            "reset the employee's password",
            ("I forgot my password",),
            requires=("identity_provider",),
        )
