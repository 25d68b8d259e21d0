"""Which words the names model may call a person, judged by what each word is.

The names model (spaCy's small English NER) calls many capitalised words a person: presence states
("Away", "Busy", "Available"), UI words, and in other languages ordinary nouns and whole phrases
("Der Drucker", "Bitte Kennwort zurücksetzen" — German capitalises every noun). A span it finds is
kept only where one of its words is name-like, and it starts at the first of them
("Grüße Hans Müller" -> "Hans Müller"):

- a known given name or surname (Faker's name lists for 80+ locales), unless it is one of the most
  frequent words of the message's language ("Der", "La", "Sie" are somebody's surname somewhere);
- in an English message, a word that is not among the common English words (wordfreq, Zipf >= 3):
  "Szöllössy", "Natarajan" are names the lists do not know; "Away" (Zipf 5.6) is a word.

In a message in another language the English model is not trusted on its own: only the name lists
vouch for a word there. The message's language is the one whose frequent words it uses most
(function words decide: "der", "im", "nicht"). Presence states are never names (`PRESENCE_STATES`).
Both word lists ship inside PyPI packages; nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import math
import pkgutil
import re
from dataclasses import dataclass, field
from functools import lru_cache

log = logging.getLogger(__name__)

# the languages whose words deskmate's users type (as values.SECRET_WORD's password words)
LANGUAGES = ("en", "de", "fr", "es", "it", "nl", "pt", "sv", "da", "nb", "fi", "pl", "cs", "hu")
COMMON_ZIPF = 3.0  # a word this frequent in English is a word, unless the name lists know it
FUNCTION_ZIPF = 6.0  # a word this frequent in its language is never a name ("der", "la", "sie")
LANGUAGE_MARGIN = 0.5  # mean Zipf a language must beat English by to count as the message's language
_TOP_WORDS = 3000  # per other language: enough for its function words and its most frequent nouns
_RECENT_TEXTS = 512  # texts whose language is remembered (by hash) before the memo starts again

# Presence and status words of chat and meeting apps (Teams, Slack, Zoom, Webex, Skype, Google Chat):
# shown capitalised in the UI, typed capitalised by users, never a person.
PRESENCE_STATES = frozenset(
    """
available away busy offline online idle inactive active invisible presenting appear dnd brb ooo
""".split()
)
PRESENCE_PHRASES = re.compile(
    r"\b(?:do\s+not\s+disturb|be\s+right\s+back|out\s+of\s+(?:the\s+)?office|in\s+a\s+(?:meeting|call)|"
    r"on\s+a\s+call|appear\s+(?:away|offline)|focusing|on\s+holiday)\b",
    re.I,
)

_WORD = re.compile(r"[^\W\d_][^\W\d_'’\-]*")
_POSSESSIVE = re.compile(r"['’]s?$")


def _name_parts(values) -> set[str]:
    """Lower-cased words of Faker's names ("Mary-Jane" -> mary, jane); particles written in lower case
    ("de" of "de Vries") are not names on their own."""
    if isinstance(values, dict):
        values = values.keys()
    parts = set()
    for value in values:
        for word in re.split(r"[\s\-]+", str(value)):
            if len(word) >= 2 and word[:1].isupper():
                parts.add(word.lower())
    return parts


def _faker_names() -> tuple[frozenset[str], frozenset[str]]:
    import faker.providers.person as person

    given: set[str] = set()
    family: set[str] = set()
    for module in pkgutil.iter_modules(person.__path__):
        try:
            provider = importlib.import_module(f"{person.__name__}.{module.name}").Provider
        except (ImportError, AttributeError) as exc:  # a locale that cannot load is one list fewer
            log.warning("name list for %s not loaded: %s", module.name, exc)
            continue
        for attribute, target in (
            ("first_names", given),
            ("first_names_male", given),
            ("first_names_female", given),
            ("first_names_nonbinary", given),
            ("last_names", family),
            ("last_names_male", family),
            ("last_names_female", family),
        ):
            values = next(
                (klass.__dict__[attribute] for klass in provider.__mro__ if attribute in klass.__dict__), None
            )
            if values is not None and not isinstance(values, property):
                target |= _name_parts(values)
    return frozenset(given), frozenset(family)


def _zipf_table(language: str, limit: int | None = None) -> dict[str, float]:
    """word -> Zipf frequency (log10 per billion words) of the `limit` most frequent words (all: None).

    wordfreq keeps every list it reads for the life of the process; a table of the top `limit` words is built from
    a list read past that cache (the fourteen languages' whole lists held some 50 MB of resident memory for the
    3,000 words a language's table keeps). The whole English list stays in wordfreq's cache: core/words.py reads
    it too."""
    import wordfreq

    if limit is None:
        frequencies = wordfreq.get_frequency_dict(language, wordlist="small")
    else:  # as get_frequency_dict builds it, from the list read without keeping it
        frequencies = {}
        for index, bucket in enumerate(wordfreq.get_frequency_list.__wrapped__(language, "small")):
            frequency = wordfreq.cB_to_freq(-index)
            for word in bucket:
                frequencies[word] = frequency
    ranked = sorted(frequencies.items(), key=lambda item: -item[1])[:limit]
    return {word: round(math.log10(frequency) + 9, 2) for word, frequency in ranked}


@dataclass(frozen=True)
class NameWords:
    given: frozenset[str]
    family: frozenset[str]
    english: dict[str, float]  # every common English word -> Zipf
    frequent: dict[str, dict[str, float]]  # language -> its most frequent words -> Zipf
    # the languages of the last texts asked about, by a hash of the text (no text is kept): the trace writer's
    # provenance check, `may_hold_name` and the names detector ask about the same text in turn
    _recent: dict[bytes, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_recent", {})

    def language(self, text: str) -> str:
        """The message's language: the one whose frequent words it uses most; English unless another
        beats it clearly (a German message with "Outlook" and "VPN" in it is still German)."""
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        found = self._recent.get(key)
        if found is None:
            found = self._language(text)
            if len(self._recent) >= _RECENT_TEXTS:
                self._recent.clear()
            self._recent[key] = found
        return found

    def _language(self, text: str) -> str:
        words = [w.lower() for w in _WORD.findall(text)]
        if not words:
            return "en"
        scores = {lang: sum(table.get(w, 0.0) for w in words) / len(words) for lang, table in self.frequent.items()}
        best = max(scores, key=scores.__getitem__)
        return best if scores[best] >= scores["en"] + LANGUAGE_MARGIN else "en"

    def name_like(self, word: str, language: str) -> bool:
        low = _POSSESSIVE.sub("", word.lower())
        if low in PRESENCE_STATES or not low:
            return False
        frequency = (self.english if language == "en" else self.frequent[language]).get(low, 0.0)
        if (low in self.given or low in self.family) and frequency < FUNCTION_ZIPF:
            return True
        return language == "en" and frequency < COMMON_ZIPF

    def may_hold_name(self, text: str) -> bool:
        """A capitalised word that could be a name (the model's spans need one to survive): when there is none,
        the model need not run ("how do I reset my password", "Outlook keeps crashing on my Mac")."""
        language = None
        for m in _WORD.finditer(text):
            if m.group(0)[0].isupper():
                language = language or self.language(text)
                if self.name_like(m.group(0), language):
                    return True
        return False

    def trim(self, text: str, start: int, end: int, language: str) -> tuple[int, int] | None:
        """`text[start:end]` from its first name-like word on ("Grüße Hans Müller" -> "Hans Müller"), or None
        when no word in it is name-like. What follows the first one stays: "Gregory Kudryashov" is one name
        even where the lists know only "Gregory"."""
        if PRESENCE_PHRASES.fullmatch(text[start:end].strip()):
            return None
        first = next((m for m in _WORD.finditer(text, start, end) if self.name_like(m.group(0), language)), None)
        return None if first is None else (first.start(), end)

    def full_names(self, text: str) -> list[tuple[int, int]]:
        """A given name and a surname written as a pair ("Thelma Mitchell", "Ryan P Costa"), which the model
        misses in lists and address blocks: the given name a known one that is not also a common English word
        ("Mark", "Grace" are left to the model), the surname a known one or an unknown word."""
        found = []
        for m in _FULL_NAME.finditer(text):
            given, family = m.group("given"), m.group("family")
            low_given, low_family = given.lower(), _POSSESSIVE.sub("", family.lower())
            if (
                low_given in self.given
                and self.english.get(low_given, 0.0) < _GIVEN_NAME_AS_WORD_ZIPF
                and low_family not in PRESENCE_STATES
                and (low_family in self.family or self.english.get(low_family, 0.0) < COMMON_ZIPF)
                and self.english.get(low_family, 0.0) < FUNCTION_ZIPF
            ):
                found.append((m.start(), m.end("family")))
        return found


_GIVEN_NAME_AS_WORD_ZIPF = 4.0
_CAPITALISED = r"[^\W\d_a-z][^\W\d_A-Z]+"  # an upper-case letter, then lower-case letters (any script)
_FULL_NAME = re.compile(
    rf"(?<![\w.@/\\-])(?P<given>{_CAPITALISED})[ \t]+(?:[A-Z]\.?[ \t]+)?"
    rf"(?P<family>{_CAPITALISED}(?:-{_CAPITALISED})?(?:['’]s)?)(?![\w@/\\-])"
)


@lru_cache(maxsize=1)
def load_name_words() -> NameWords:
    """The name and word lists, read once per process (about 3 s: Faker's name lists are Python modules)."""
    given, family = _faker_names()
    english = _zipf_table("en")
    frequent = {lang: _zipf_table(lang, _TOP_WORDS) for lang in LANGUAGES}
    log.info(
        "name lists: %d given names, %d surnames; word lists for %s", len(given), len(family), ", ".join(LANGUAGES)
    )
    return NameWords(given, family, english, frequent)
