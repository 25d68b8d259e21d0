"""The trace writer sends a string through a narrower redactor only where the code proves it needs no more: the
memory redactor's output (the redact node's) skips the secret detectors, a text whose every name-like word is
verbatim document text skips the names model. Everything else still goes through the full trace redactor."""

import json

import pytest

from app.adapters.memory import SessionStore
from app.adapters.redactor import redactors_from_settings
from app.adapters.trace_provenance import DOCUMENTS_KEY, UPSTREAM_KEY, Provenance, TraceRedactors, support_phrases
from app.adapters.traces import RecordingTracer, TraceStore, document_values, shape
from app.adapters.tracing import NullTracer
from app.chat_service import ChatService
from app.settings import Settings
from graphs.support import build_support_graph
from nodes.support.modes import FALLBACK_STRATEGIES, ResponseMode, plan_answer
from nodes.support.replies import NOT_FOUND, NOT_FOUND_CLOSEST, NOT_FOUND_NEXT, NOT_FOUND_SEARCHED

SECRET = "Zebra!Secret77"
CHUNK = (
    "Open Settings and choose Accounts. If the sign-in still fails, ask Dana Whitfield on the service desk; "
    "she keeps the list of locked accounts.\nThen sign in again."
)


@pytest.fixture(scope="module")
def redactors():
    built = redactors_from_settings(Settings(_env_file=None), in_use=("memory", "trace"))
    built["trace"].redact("warm up for Naomi Ryan")  # waits for the names model
    return built


def _route(redactors, record: dict) -> tuple[TraceRedactors, Provenance]:
    routes = TraceRedactors.build(redactors["trace"], redactors["memory"])
    return routes, Provenance(record, routes, document_values(record))


def test_the_narrower_redactors_exist_only_for_the_services_own_redactors(redactors):
    routes = TraceRedactors.build(redactors["trace"], redactors["memory"])
    assert routes.upstream is not None and routes.no_names is not None
    assert routes.upstream.pii_kinds == redactors["trace"].pii_kinds - redactors["memory"].pii_kinds
    assert "PERSON" not in routes.no_names.pii_kinds
    assert TraceRedactors.build(redactors["trace"], redactors["trace"]).upstream is None  # not memory's
    from app.adapters.redactor import PatternRedactor

    plain = TraceRedactors.build(PatternRedactor(), redactors["memory"])
    assert plain.upstream is None and plain.no_names is None


def test_only_the_redact_nodes_output_counts_as_redacted_upstream(redactors):
    record = {UPSTREAM_KEY: ["the vpn drops for Naomi Ryan"], "output": {}}
    routes, route = _route(redactors, record)
    assert route.choose("the vpn drops for Naomi Ryan") is routes.upstream
    assert route.choose(f"the vpn drops, password {SECRET}") is routes.full
    # what the upstream redactor still removes: the names the trace adds to memory
    assert "Naomi" not in routes.upstream.redact("the vpn drops for Naomi Ryan").text


def test_a_name_quoted_from_a_document_skips_the_names_model_but_a_persons_does_not(redactors):
    record = {DOCUMENTS_KEY: [CHUNK], "retrieval": [{"candidates": [{"title": "Signing in to Brightwave"}]}]}
    routes, route = _route(redactors, record)
    quoted = (
        "From **Signing in to Brightwave** [1]:\n\nIf the sign-in still fails, ask Dana Whitfield on the service desk"
    )
    assert route.choose(quoted) is routes.no_names
    assert route.choose(quoted + "\n\nNaomi Ryan asked this.") is routes.full  # a name not in the document
    assert route.choose("ask Dana Whitfield") is routes.full  # too little context to be the document's
    # a secret in a document quote is still removed on the narrower path
    assert SECRET not in routes.no_names.redact(f"If the sign-in still fails, the password is {SECRET}").text


def _stored_turn(tmp_path, context_factory, message: str, **context) -> tuple:
    """One chat turn through the service's trace store and its redactors; the turn and its stored record."""
    redactors = redactors_from_settings(Settings(_env_file=None), in_use=("memory", "trace"))
    store = TraceStore(
        tmp_path / "traces.sqlite",
        redactor=redactors["trace"],
        document_redactor=redactors["documents"],
        upstream_redactor=redactors["memory"],
    )
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    # the redact node with the memory redactor, as in the service (the store is told it is that one)
    graph = build_support_graph(sessions.checkpointer)
    chat = ChatService(
        graph, context_factory(redactor=redactors["memory"], **context), sessions, RecordingTracer(NullTracer(), store)
    )
    try:
        turn = chat.ask(message)
        assert store.flush(timeout=300)
        return turn, store.get(turn.trace_id)
    finally:
        store.close()
        sessions.close()


def test_a_chat_turn_keeps_ids_and_removes_names_and_secrets_with_the_narrower_redactors(tmp_path, fake_kb_context):
    message = f"My colleague Naomi Ryan cannot connect to the VPN, her password is {SECRET}"
    turn, record = _stored_turn(tmp_path, fake_kb_context, message)
    assert record is not None and "VPN" in record["input"]["query"]
    text = json.dumps(record)
    assert "Naomi" not in text and "Ryan" not in text and SECRET not in text
    assert UPSTREAM_KEY not in text and DOCUMENTS_KEY not in text  # the evidence is never stored
    assert record["trace_id"] == turn.trace_id and record["session_id"] == turn.session_id  # ids unchanged
    ids = [c["chunk_id"] for c in turn.output["retrieved_chunks"]]
    if ids:
        assert [c["chunk_id"] for c in record["retrieval"][0]["candidates"]] == ids


def test_an_answer_quoting_a_section_that_was_not_retrieved_is_proven_by_the_cited_articles_text(redactors):
    read: list[str] = []

    def article(doc_id: str) -> list[str]:
        read.append(doc_id)
        return [CHUNK] if doc_id == "kb-signin" else []

    routes = TraceRedactors.build(redactors["trace"], redactors["memory"], article)
    record = {"output": {"sources": [{"doc_id": "kb-signin", "chunk_id": "c1"}]}}
    route = Provenance(record, routes, document_values(record))
    quoted = (
        "1. If the sign-in still fails, ask Dana Whitfield on the service desk; she keeps the list of locked accounts."
    )
    assert route.choose(quoted) is routes.no_names
    assert route.choose("Naomi Ryan says the sign-in still fails") is routes.full
    assert read == ["kb-signin"]  # the article read once per record, only when the retrieved chunks did not do


def _phrase_route(redactors, record: dict) -> tuple[TraceRedactors, Provenance]:
    routes = TraceRedactors.build(redactors["trace"], redactors["memory"], system_phrases=support_phrases())
    return routes, Provenance(record, routes, document_values(record))


def test_every_reasoning_the_answer_plan_writes_is_the_systems_own_wording(redactors):
    """The phrases the writer trusts are the plan's own templates: every reasoning `plan_answer` can write (every
    mode, column and LLM availability) is proven, so the names model never reads it; a name added to one is not."""
    routes, route = _phrase_route(redactors, {"output": {}})
    reasons = {
        plan_answer(
            mode,
            confidence=confidence,
            has_documents=has_documents,
            llm_available=llm,
            min_confidence=0.7,
            fallback_strategy=strategy,
        ).reason
        for mode in ResponseMode
        for confidence, has_documents in ((None, False), (None, True), (0.42, True), (0.93, True))
        for llm in (True, False)
        for strategy in FALLBACK_STRATEGIES
    }
    assert len(reasons) > 20
    for reason in reasons:
        assert route.choose(reason) is routes.no_names, reason
        assert route.choose(f"{reason} Naomi Ryan asked.") is routes.full
    # without the phrases (a store built for another graph) the same text is not proven
    plain_routes, plain = _route(redactors, {"output": {}})
    assert any(plain.choose(reason) is plain_routes.full for reason in reasons)


def test_a_not_found_reply_is_proven_only_where_its_searched_words_are(redactors):
    title = "Signing in to Brightwave"
    record = {"retrieval": [{"articles": [{"title": title}]}]}
    routes, route = _phrase_route(redactors, record)
    reply = f"{NOT_FOUND} {NOT_FOUND_SEARCHED.format(query='{query}')} {NOT_FOUND_CLOSEST.format(titles=f'“{title}”')}"
    reply = f"{reply} {NOT_FOUND_NEXT}"
    assert route.choose(reply.format(query="printer offline after update")) is routes.no_names
    # the person's words inside the template still take the names model
    assert route.choose(reply.format(query="printer of Naomi Ryan offline")) is routes.full


def test_the_recorders_cut_marker_is_not_the_texts_but_a_cut_persons_text_is_still_read(redactors):
    long_chunk = "\n".join([CHUNK] * 20)
    routes, route = _phrase_route(redactors, {DOCUMENTS_KEY: [long_chunk]})
    cut = shape(long_chunk)
    assert cut.endswith(" chars]") and len(cut) < len(long_chunk)
    assert route.choose(cut) is routes.no_names
    assert route.choose(shape("Naomi Ryan wrote: " + long_chunk)) is routes.full


def test_a_stored_not_found_turn_keeps_no_name_of_the_message(tmp_path, fake_kb_context):
    message = "my laptop keyboard types the wrong letters, Naomi Ryan says it started after the update"
    turn, record = _stored_turn(tmp_path, fake_kb_context, message)
    assert "couldn't find" in turn.output["answer"]  # the reply quotes the searched words
    text = json.dumps(record)
    assert record is not None and "Naomi" not in text and "Ryan" not in text


def test_one_walk_over_a_record_finds_its_document_values_cited_documents_and_texts_to_redact():
    from app.adapters.trace_provenance import MAX_ARTICLES, _doc_ids
    from app.adapters.traces import survey

    record = {
        "input": {"query": "vpn drops for Naomi Ryan", "session_id": "s-1", "response_mode": "HYBRID"},
        "retrieval": [
            {"candidates": [{"doc_id": f"kb-{n}", "chunk_id": f"c{n}", "title": f"Article {n}"} for n in range(9)]}
        ],
        "output": {"answer": "From **Article 1** [1]: restart it.", "query_embedding": "<384 floats>", "score": 0.5},
    }
    found = survey(record)
    assert list(found.doc_ids) == _doc_ids(record) and len(found.doc_ids) == MAX_ARTICLES
    assert {"Article 1", "HYBRID", "kb-0"} <= found.documents and "vpn drops for Naomi Ryan" not in found.documents
    leaves = {value for _, value in found.leaves}
    # a person's text, a client's id and document titles need a redactor; ids, enums and placeholders do not
    assert {"vpn drops for Naomi Ryan", "s-1", "Article 1", "From **Article 1** [1]: restart it."} <= leaves
    assert not leaves & {"kb-0", "c0", "HYBRID", "<384 floats>"}
    assert document_values(record) == found.documents
