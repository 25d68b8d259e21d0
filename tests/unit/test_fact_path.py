"""The fact path (nodes/support/fact.py): fact-question intent, answer-shaped span extraction, the confidence gate,
and the answer node's one block that uses it (with and without an LLM)."""

import pytest
from langgraph.runtime import Runtime

from app.adapters.redactor import PatternRedactor
from graphs.support import SupportContext, turn_result
from nodes.support.answer import answer
from nodes.support.fact import expected_shape, extract_span, fact_reply, is_fact_question, sentences
from tests.fakes import HashingEmbedder, InMemoryIndex, ScriptedChatModel, chunk, support_state

# realistic knowledge-base text, written for these tests
VPN_LEAD = (
    "The company VPN gives you a secure connection to the office network when you work from home.\n"
    "Our VPN gateway is vpn.acme-corp.example. Company laptops use Cisco Secure Client; Linux laptops use "
    "openconnect, which talks to the same gateway.\n"
    "You do not need the VPN for Outlook or Teams, which work over the internet."
)
VPN_STEPS = (
    "To connect on a Mac:\n1. Open Cisco Secure Client from the menu bar.\n"
    "2. Type vpn.acme-corp.example and click Connect.\n3. Approve the sign-in on your phone.\n"
    "4. Check that the menu-bar icon shows a padlock."
)
PASSWORD_EXPIRY = (
    "Your password is used for your laptop, e-mail and the VPN.\n"
    "Passwords expire every 60 days. You get reminder e-mails 10, 5 and 1 day before expiry, and "
    "you can change it early at https://password.acme-corp.example at any time.\n"
    "A new password must be at least 14 characters long."
)
CONTACT = (
    "- Self-service portal (preferred): https://help.acme-corp.example - raise a ticket and follow it.\n"
    "- Phone: ext. 5100 (from outside the office, +44 20 7946 0321).\n"
    "- E-mail: helpdesk@acme-corp.example - a ticket is created from your message.\n"
    "- In person: the Tech Corner on the second floor."
)
HOURS = (
    "- Monday to Friday, 08:00 to 18:00: full service by phone, portal and e-mail.\n"
    "- Weekends: an on-call engineer handles outages only."
)


def _ctx(**overrides):
    values = dict(
        embedder=HashingEmbedder(),
        index=InMemoryIndex(),
        redactor=PatternRedactor(),
        min_score=0.4,
        fact_path=True,
        fact_min_confidence=0.6,
    )
    values.update(overrides)
    return SupportContext(**values)


# --- intent -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "question",
    [
        "what is the VPN address",
        "What is the VPN server address?",
        "how many days until my password expires",
        "which port does remote desktop use?",
        "when does the service desk open?",
        "who do I call if my laptop is stolen?",
        "what's the phone number of the service desk",
        "service desk phone number?",
        "what are the service desk hours?",
        "how long is a new password valid?",
        "what is MFA?",
    ],
)
def test_fact_questions_are_recognised(question):
    assert is_fact_question(question)


@pytest.mark.parametrize(
    "question",
    [
        "how do I connect to the VPN on my Mac",
        "how to reset my password",
        "how can I map a shared drive?",
        "my printer doesn't work",
        "my VPN keeps disconnecting",
        "what is wrong with my laptop",
        "why is Outlook so slow?",
        "can I install software myself?",
        "what are the steps to set up MFA",
        "what are the password rules",
        "what is the difference between P1 and P2",
        "what is MFA and how do I set it up?",
        "is the VPN down?",
        "hi",
        "hello there",
        "thanks!",
        "what's up",
        "what is it?",
        "When I try to print, nothing happens",
        "",
    ],
)
def test_procedures_problems_and_small_talk_are_not_fact_questions(question):
    assert not is_fact_question(question)


@pytest.mark.parametrize(
    "question, shape",
    [
        ("what is the VPN server address", "address"),
        ("how many days until my password expires", "quantity"),
        ("what's the phone number of the service desk", "phone"),
        ("who do I call for a lost badge", "phone"),
        ("which port does remote desktop use", "port"),
        ("when does the service desk open", "time"),
        ("what is MFA", "definition"),
    ],
)
def test_the_question_word_sets_the_expected_answer_shape(question, shape):
    assert expected_shape(question) == shape


# --- extraction ---------------------------------------------------------------------------------------------
def test_sentences_keep_abbreviations_and_list_items_whole():
    assert sentences(CONTACT)[1] == "Phone: ext. 5100 (from outside the office, +44 20 7946 0321)."
    assert sentences("Use a passphrase, e.g. Teapot-Glacier. Never reuse it.") == [
        "Use a passphrase, e.g. Teapot-Glacier.",
        "Never reuse it.",
    ]


def test_extracts_the_hostname_for_an_address_question():
    found = extract_span(
        "What is the VPN server address?",
        [
            chunk(VPN_STEPS, title="VPN", section="macOS", score=0.6, chunk_index=2),
            chunk(VPN_LEAD, title="Connecting to the VPN", score=0.55),
        ],
    )
    assert found is not None
    assert found.span == "Our VPN gateway is vpn.acme-corp.example."
    assert found.chunk["chunk_index"] == 0  # quoted from the chunk that holds it, not the best-scored one
    assert found.confidence >= 0.6


def test_extracts_the_number_of_days_for_a_how_many_question():
    found = extract_span(
        "how many days until my password expires?",
        [chunk(PASSWORD_EXPIRY, title="Changing your password", section="Expiry", score=0.5)],
    )
    assert found is not None and found.span == "Passwords expire every 60 days."
    assert found.shape == "quantity" and found.confidence >= 0.6


def test_extracts_the_phone_number_from_a_contact_list():
    found = extract_span(
        "what's the phone number of the service desk?",
        [
            chunk(HOURS, title="Contacting the service desk", section="Hours", score=0.55),
            chunk(
                CONTACT,
                title="Contacting the service desk",
                section="How to reach the service desk",
                score=0.5,
                chunk_index=1,
            ),
        ],
    )
    assert found is not None
    assert "ext. 5100" in found.span and found.shape == "phone"
    assert found.confidence >= 0.6


def test_the_span_is_bounded_to_a_clause_of_a_very_long_sentence():
    long_sentence = (
        "The office network has many parts, " * 12
        + "and the print server is print.acme-corp.example, "
        + "which every floor uses, " * 6
        + "so there is one queue."
    )
    found = extract_span("what is the print server address?", [chunk(long_sentence, score=0.6)])
    assert found is not None and len(found.span) <= 300
    assert "print.acme-corp.example" in found.span


def test_a_passage_without_the_asked_for_shape_gives_low_confidence():
    # the VPN text holds no port number: there is no confident answer to "which port"
    found = extract_span("which port does the VPN use?", [chunk(VPN_LEAD, title="Connecting to the VPN", score=0.5)])
    assert found is None or found.confidence < 0.6


def test_a_heading_that_restates_the_question_is_not_an_answer():
    found = extract_span("What is Remote Support?", [chunk("What is Remote Support?\nSee the next page.", score=0.7)])
    assert found is None or found.confidence < 0.6


def test_no_chunks_give_no_answer():
    assert extract_span("what is the VPN address", []) is None


# --- the gate -----------------------------------------------------------------------------------------------
def _state(query, *chunks_):
    return {"query": query, "retrieved_chunks": list(chunks_), "action": "answer"}


def test_a_confident_fact_answer_is_one_cited_sentence():
    reply = fact_reply(
        support_state(
            _state(
                "what is the VPN server address",
                chunk(VPN_LEAD, title="Connecting to the VPN", source="kb/vpn.md", score=0.6),
            )
        ),
        _ctx(),
    )
    assert reply is not None and reply["answer_path"] == "fact"
    assert reply["answer"].startswith("Our VPN gateway is vpn.acme-corp.example. [1]")
    assert reply["answer"].endswith("[1] Connecting to the VPN — kb/vpn.md")
    assert [s["source"] for s in reply["sources"]] == ["kb/vpn.md"]


def test_below_the_threshold_or_switched_off_the_normal_path_runs():
    state = _state("what is the VPN server address", chunk(VPN_LEAD, title="Connecting to the VPN", score=0.6))
    assert fact_reply(support_state(state), _ctx(fact_min_confidence=0.99)) is None
    assert fact_reply(support_state(state), _ctx(fact_path=False)) is None
    # the chunk is below the answer threshold: nothing is quoted from it
    assert fact_reply(support_state(state), _ctx(min_score=0.7)) is None


def test_procedures_and_llm_only_requests_never_take_the_fact_path():
    lead = chunk(VPN_LEAD, title="Connecting to the VPN", score=0.6)
    assert fact_reply(support_state(_state("how do I connect to the VPN on my Mac", lead)), _ctx()) is None
    assert (
        fact_reply(
            support_state(_state("what is the VPN server address", lead) | {"response_mode": "LLM_ONLY"}), _ctx()
        )
        is None
    )
    assert (
        fact_reply(support_state(_state("what is the VPN server address", lead) | {"small_talk": "greeting"}), _ctx())
        is None
    )


# --- the answer node ----------------------------------------------------------------------------------------
def test_answer_node_gives_the_short_answer_without_calling_the_llm():
    llm = ScriptedChatModel(["A long LLM answer [1]"])
    state = _state("What is the VPN server address?", chunk(VPN_LEAD, title="Connecting to the VPN", score=0.6))
    out = turn_result(answer(support_state(state), Runtime(context=_ctx(llm=llm)), {}))
    assert out["answer_path"] == "fact"
    assert out["answer"].startswith("Our VPN gateway is vpn.acme-corp.example. [1]")
    assert out["needs_input"] is False and out["is_clarifying"] is False and len(out["sources"]) == 1
    assert llm.history == []  # the LLM call was saved


def test_answer_node_keeps_the_normal_answer_for_a_procedure():
    state = _state("how do I connect to the VPN on my Mac", chunk(VPN_STEPS, title="VPN", section="macOS", score=0.7))
    out = turn_result(answer(support_state(state), Runtime(context=_ctx()), {}))
    assert out.get("answer_path", "") != "fact"
    assert "1. Open Cisco Secure Client" in out["answer"]  # the steps, quoted whole
