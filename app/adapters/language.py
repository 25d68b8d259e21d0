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
import threading

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


LOAD_WAIT_S = 300.0  # a message waits at most this long for the model (a busy machine loads it in seconds)


class Py3LangidDetector:
    """implements core.ports.LanguageDetector; the model (about 80 MB in memory) is loaded once, on a thread of its
    own (`background`, the default), so the service is ready before it is: the first message waits for it, and a
    load that failed raises there (the message is never judged without the model)."""

    def __init__(self, languages: tuple[str, ...] = LANGUAGES, *, background: bool = True) -> None:
        self._languages = languages
        self._identifier = None
        self._error: BaseException | None = None
        self._loaded = threading.Event()
        if background:
            threading.Thread(target=self._load, name="language-model-load", daemon=True).start()
        else:
            self._load()

    def _load(self) -> None:
        try:
            from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

            identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
            identifier.set_languages(list(self._languages))
            self._identifier = identifier
            log.info("language detection: py3langid over %d languages", len(self._languages))
        except BaseException as exc:  # noqa: BLE001 — raised to every caller of detect
            self._error = exc
            log.error("the language model could not be loaded: %s", exc)
        finally:
            self._loaded.set()

    def _model(self):
        if not self._loaded.wait(LOAD_WAIT_S):
            raise RuntimeError(f"the language model was not loaded within {LOAD_WAIT_S:g} s")
        if self._identifier is None:
            raise RuntimeError(f"the language model could not be loaded: {self._error}")
        return self._identifier

    def detect(self, text: str) -> tuple[str, float]:
        code, probability = self._model().classify(text)
        return str(code), float(probability)
