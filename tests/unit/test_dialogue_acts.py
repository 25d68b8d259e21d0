"""The dialogue-act table (nodes/support/dialogue_acts.py): every row's examples and counter-examples are its tests,
and deskmate's own tuning utterances (tests/fixtures/dialogue/dev_utterances.json) are recognised."""

import json

import pytest

from core.lexicon import eager_yes, reply_kind
from nodes.support.dialogue_acts import ACTS, dialogue_act, normalise
from tests.conftest import FIXTURES

DEV = json.loads((FIXTURES / "dialogue" / "dev_utterances.json").read_text())["tune"]
ACT_OF = {
    "handoff": ("handoff",),
    "ticket_status": ("ticket_status",),
    "service_request": ("service_request",),
    "closing": ("thanks", "farewell", "resolved"),
    "out_of_scope": ("out_of_scope",),
    "bot_challenge": ("bot_challenge",),
    "capabilities": ("capabilities",),
    "greeting": ("greeting",),
    "howto": ("",),
    "problem": ("",),
    "general_knowledge": ("",),
}


@pytest.mark.parametrize("rule", ACTS, ids=lambda rule: rule.act)
def test_every_rule_recognises_its_examples_and_none_of_its_counter_examples(rule):
    assert [e for e in rule.examples if dialogue_act(e) != rule.act] == []
    assert [e for e in rule.counter_examples if rule.holds(e)] == []


@pytest.mark.parametrize("behaviour", sorted(ACT_OF))
def test_the_tuning_utterances_are_recognised_as_their_act(behaviour):
    wrong = {text: dialogue_act(text) for text in DEV[behaviour] if dialogue_act(text) not in ACT_OF[behaviour]}
    assert wrong == {}


def test_asking_whether_deskmate_is_human_is_not_asking_for_a_human():
    assert dialogue_act("am I talking to a human?") == "bot_challenge"
    assert dialogue_act("can I talk to a human?") == "handoff"


def test_a_request_is_told_apart_from_the_how_to_question_about_requesting():
    assert dialogue_act("I need a new laptop") == "service_request"
    assert dialogue_act("how do I request a new laptop?") == ""
    assert dialogue_act("I need a new password") == ""  # a credential is reset by the user, from the KB


def test_a_ticket_status_question_is_told_apart_from_an_outage_question():
    assert dialogue_act("any update on my issue?") == "ticket_status"
    assert dialogue_act("is outlook down for everyone?") == ""


def test_a_pleasantry_with_a_problem_in_it_is_no_pleasantry():
    assert dialogue_act("thanks") == "thanks"
    assert dialogue_act("thanks, but my VPN still drops every hour") == ""
    assert dialogue_act("thank you, that worked!") == "resolved"
    assert dialogue_act("it works now but Outlook doesn't open") == ""
    assert dialogue_act("has my incident been resolved?") == "ticket_status"


def test_common_misspellings_of_the_key_words_are_read_as_the_words():
    assert normalise("Thnks, byeee") == "thanks, bye"
    assert normalise("open an incedent") == "open an incident"
    assert normalise("my passwords and requests") == "my passwords and requests"  # plurals stay
    assert normalise("the water cooler") == "the water cooler"  # short words are never corrected


@pytest.mark.parametrize(
    "text",
    [
        "yes",
        "Yes, please create a ticket",
        "sure, go ahead and file it",
        "do it",
        "please do",
        "ok open one",
        "yes please create it",
        "yeah, that would be great",
    ],
)
def test_a_yes_in_more_words_is_a_yes(text):
    assert reply_kind(text) == "affirm"


@pytest.mark.parametrize(
    "text", ["nah leave it", "no thanks, I'll wait", "don't bother", "not now", "absolutely not", "I'd rather not"]
)
def test_a_no_in_more_words_is_a_no(text):
    assert reply_kind(text) in ("deny", "exit")


def test_a_yes_followed_by_something_else_is_not_a_yes():
    assert reply_kind("ok, I'll try that") == ""
    assert reply_kind("yes but it still crashes") == "failed"


@pytest.mark.parametrize(
    "text",
    [
        "Great, please do, it's urgent!",
        "perfect, go ahead asap, we're all blocked",
        "excellent, open it right away!!",
        "YES!! as soon as possible please",
        "sure, it is urgent",
    ],
)
def test_a_yes_with_urgency_in_it_stays_a_yes(text):
    assert eager_yes(text)


@pytest.mark.parametrize(
    "text",
    ["great, thanks", "great, it works now", "no, not urgent", "ok, I'll try that now", "right now it is broken"],
)
def test_urgency_does_not_make_a_yes_of_what_is_none(text):
    assert not eager_yes(text)
