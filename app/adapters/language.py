"""Language detection with py3langid: a naive-Bayes model over byte n-grams that ships inside the package.

Chosen over lingua-language-detector and pycld2 on short IT-support messages written for this purpose
(tests/fixtures/dialogue/languages.json; `python bench/language.py` repeats the comparison): restricted to the
languages below it recognised 119-120 of 120 messages in eight languages with no English message (names such
as "Jürgen" or "Zürich" included) taken for another language, in about 0.3 ms per message. lingua's
high-accuracy mode needs over 500 MB and 15 s to load, its low-accuracy mode took 6-9 of 30 English messages
for another language; pycld2 is tiny but left 13 of 120 undecided.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

# the languages deskmate tells apart: English, the eight it has fixed sentences for, and others common in
# European offices (their speakers get the English notice) — a closed set keeps English from being mistaken
# for a rare language that happens to share a word
LANGUAGES: tuple[str, ...] = ("en", "de", "fr", "es", "it", "pt", "nl", "pl", "sv", "da", "no", "fi", "cs", "sk",
                              "tr", "ro", "hu", "ru", "uk", "el", "ja", "zh", "ko", "ar", "he", "hi")


class Py3LangidDetector:
    """implements graphs.ports.LanguageDetector; the model (about 80 MB in memory) is loaded here, once."""

    def __init__(self, languages: tuple[str, ...] = LANGUAGES) -> None:
        from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

        self._identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
        self._identifier.set_languages(list(languages))
        log.info("language detection: py3langid over %d languages", len(languages))

    def detect(self, text: str) -> tuple[str, float]:
        code, probability = self._identifier.classify(text)
        return str(code), float(probability)
