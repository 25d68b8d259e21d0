"""Which language a message is in, and what deskmate says when it cannot read that language.

Only act when it is clear: a message of fewer than MIN_WORDS words ("ok", "VPN?", "merci") is never judged,
and a language other than English must reach MIN_PROBABILITY — an English message with a foreign name or
quoted error text stays English. Both thresholds were set on deskmate's own sentences
(tests/fixtures/dialogue/languages.json, `python bench/language.py`).
"""

from __future__ import annotations

import json
import logging
import re
from functools import lru_cache
from importlib import resources

from core.lexicon import strip_placeholders
from core.ports import LanguageDetector

log = logging.getLogger(__name__)
MIN_WORDS = 3
MIN_PROBABILITY = 0.7
ENGLISH = "en"
LANGUAGE_NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "pl": "Polish",
    "sv": "Swedish",
    "da": "Danish",
    "no": "Norwegian",
    "fi": "Finnish",
    "cs": "Czech",
    "sk": "Slovak",
    "tr": "Turkish",
    "ro": "Romanian",
    "hu": "Hungarian",
    "ru": "Russian",
    "uk": "Ukrainian",
    "el": "Greek",
    "ja": "Japanese",
    "zh": "Chinese",
    "ko": "Korean",
    "ar": "Arabic",
    "he": "Hebrew",
    "hi": "Hindi",
}
_NOT_PROSE = re.compile(r"https?://\S+|\S+@\S+|`[^`]*`|\b[A-Z]{2,}[-_]?\d+\b")
_LETTER_WORD = re.compile(r"[^\W\d_]{2,}")


def message_language(text: str, detector: LanguageDetector | None) -> str:
    """The ISO 639-1 code of a message clearly written in another language than English; '' otherwise."""
    if detector is None:
        return ""
    prose = _NOT_PROSE.sub(" ", strip_placeholders(text))
    if len(_LETTER_WORD.findall(prose)) < MIN_WORDS:
        return ""
    try:
        code, probability = detector.detect(prose)
    except Exception as exc:  # a detector failure must not stop the turn: the message is read as English
        log.warning("language detection failed, reading the message as English: %s", exc)
        return ""
    return code if code != ENGLISH and probability >= MIN_PROBABILITY else ""


def language_name(code: str) -> str:
    """ "de" → "German" (the code itself for a language the table does not name)."""
    return LANGUAGE_NAMES.get(code, code)


@lru_cache(maxsize=2)
def _notices(file: str = "language_notices.json") -> dict[str, str]:
    text = resources.files("prompts").joinpath(file).read_text(encoding="utf-8")
    return {code: notice for code, notice in json.loads(text).items() if not code.startswith("_")}


def language_notice(code: str) -> str:
    """What deskmate says, offline, to a message in `code`: in that language when it has the sentence, else English."""
    notices = _notices()
    return notices.get(code, notices[ENGLISH])


def ticket_offer_notice(code: str) -> str:
    """The offer, in `code` (English for a language without the sentence), to pass the untranslated message on to the
    service desk as a ticket, with how to say yes or no."""
    offers = _notices("language_ticket_offers.json")
    return offers.get(code, offers[ENGLISH])
