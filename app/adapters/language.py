"""Language detection with py3langid: a naive-Bayes model over byte n-grams that ships inside the package.

Chosen over lingua-language-detector and pycld2 on short IT-support messages written for this purpose
(tests/fixtures/dialogue/languages.json; `python bench/language.py --compare` repeats the comparison): restricted
to the languages below and at deskmate's threshold it recognised 119 of 120 messages in eight languages and took
none of 30 English messages (names such as "Jürgen" or "Zürich" included) for another language, in about 0.4 ms a
message, for about 80 MB of memory and 2-3 s of loading at start-up. lingua's high-accuracy mode needs about
500 MB, 20 s to load and 4 ms a message, and recognised fewer (105/120, 4 English misread); its low-accuracy mode
misread 9 of the 30 English messages; pycld2 is tiny and fast but left 13 of 120 undecided.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

# the languages deskmate tells apart: English, the eight it has fixed sentences for, and others common in
# European offices (their speakers get the English notice) — a closed set keeps English from being mistaken
# for a rare language that happens to share a word
LANGUAGES: tuple[str, ...] = (
    "en",
    "de",
    "fr",
    "es",
    "it",
    "pt",
    "nl",
    "pl",
    "sv",
    "da",
    "no",
    "fi",
    "cs",
    "sk",
    "tr",
    "ro",
    "hu",
    "ru",
    "uk",
    "el",
    "ja",
    "zh",
    "ko",
    "ar",
    "he",
    "hi",
)


class Py3LangidDetector:
    """implements core.ports.LanguageDetector; the model (about 80 MB in memory) is loaded here, once."""

    def __init__(self, languages: tuple[str, ...] = LANGUAGES) -> None:
        from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

        self._identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
        self._identifier.set_languages(list(languages))
        log.info("language detection: py3langid over %d languages", len(languages))

    def detect(self, text: str) -> tuple[str, float]:
        code, probability = self._identifier.classify(text)
        return str(code), float(probability)
