"""Language detection (py3langid, the real model) and the fixed notices: only clear, long enough messages in
another language are acted on; English with foreign names and short replies never are."""

import json

import pytest

from app.adapters.language import Py3LangidDetector
from nodes.support.language import MIN_WORDS, language_notice, message_language, ticket_offer_notice
from tests.conftest import FIXTURES

SENTENCES = json.loads((FIXTURES / "dialogue" / "languages.json").read_text())
NOTICE_LANGUAGES = ("de", "fr", "es", "it", "pt", "nl", "pl", "sv")


@pytest.fixture(scope="module")
def detector():
    return Py3LangidDetector()


@pytest.mark.parametrize("code", NOTICE_LANGUAGES)
def test_short_it_sentences_in_each_covered_language_are_recognised(detector, code):
    found = [message_language(text, detector) for text in SENTENCES[code]]
    assert sum(f == code for f in found) >= len(found) - 1  # at most one of 15 left undecided
    assert set(found) <= {code, ""}  # never taken for another language


def test_english_with_foreign_names_and_quoted_errors_stays_english(detector):
    assert {
        text: message_language(text, detector) for text in SENTENCES["en"] if message_language(text, detector)
    } == {}


def test_short_messages_are_never_judged(detector):
    assert all(len(text.split()) < MIN_WORDS or message_language(text, detector) == "" for text in SENTENCES["short"])
    assert message_language("danke", detector) == "" and message_language("VPN?", detector) == ""


def test_without_a_detector_every_message_is_read_as_english():
    assert message_language("Mein Drucker druckt nicht mehr", None) == ""


def test_each_covered_language_has_its_own_notice_and_others_get_english():
    english = language_notice("en")
    notices = {code: language_notice(code) for code in NOTICE_LANGUAGES}
    assert len(set(notices.values())) == len(NOTICE_LANGUAGES) and english not in notices.values()
    assert "Englisch" in notices["de"] and "anglais" in notices["fr"]
    assert language_notice("fi") == english


def test_each_covered_language_has_its_own_ticket_offer_and_others_get_english():
    offers = {code: ticket_offer_notice(code) for code in NOTICE_LANGUAGES}
    assert len(set(offers.values())) == len(NOTICE_LANGUAGES) and ticket_offer_notice("en") not in offers.values()
    assert (
        "Ticket" in offers["de"] and "ticket" in offers["fr"] and ticket_offer_notice("fi") == ticket_offer_notice("en")
    )


class BrokenDetector:
    def detect(self, text):
        raise RuntimeError("model file missing")


def test_a_failing_detector_reads_the_message_as_english():
    assert message_language("Mein Drucker druckt nicht mehr", BrokenDetector()) == ""


def test_the_model_loads_in_the_background_and_a_message_waits_for_it():
    detector = Py3LangidDetector()  # returns before the model is read
    assert detector.detect("Mein Drucker druckt nicht mehr, was kann ich tun?")[0] == "de"
    assert Py3LangidDetector(background=False).detect("my printer stopped printing")[0] == "en"


def test_a_model_that_could_not_load_fails_the_message_instead_of_guessing():
    detector = Py3LangidDetector(languages=("xx-not-a-language",))
    with pytest.raises(RuntimeError, match="could not be loaded"):
        detector.detect("my printer stopped printing")
