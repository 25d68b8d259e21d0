"""Words of a question that are foreign to the knowledge base: a likely sign that it asks about something the
knowledge base does not cover (another product, a feature or a service it never names).

A word is foreign when all of these hold:
- no chunk of the collection holds it in any form the lexical index knows (its stem; a hyphenated word's
  parts or its joined form; "wi-fi" ~ "wifi");
- it is no ordinary English word: its frequency in English (wordfreq's Zipf scale, log10 of uses per billion
  words), or that of its form without an inflection ("reinstalling" ~ "reinstall"), is below ORDINARY_ZIPF.
  Employees' everyday words ("laptop", "wifi", "colleague", "annoying") are ordinary English, so a knowledge base
  that never uses them does not make them foreign;
- it is no misspelling: not one edit (a letter dropped, added, changed or two swapped) from a common English word
  ("pasword") or from a word of the collection (a product name it documents, misspelt);
- it names a topic: letters only, at least MIN_CHARS of them (a shorter word may as well be an abbreviation or a
  typo of a short word: "sso", "tne"), no function or conversation word, and not part of a file name, path or
  address ("report.xlsx", "C:/Users") — those say what the employee has, not what the question is about.

Measured on the development sets (bench/abstention_evidence.py): such words are product and service names the
knowledge base does not document; an answerable question very rarely has one. The answer decision
(nodes/support/confidence.py `foreign_penalty`) lowers the evidence of a question that has one rather than
declining outright: a question that names another product in passing can still be answered by strong evidence.
Pure functions over a `held` look-up of the collection's index terms.
"""

from __future__ import annotations

import functools
import re
import string
from typing import Callable, Collection, Iterable

from core.text import CONVERSATION_WORDS, STOP_WORDS, WORD, fold, snowball

ORDINARY_ZIPF = 2.5  # an English word used at least ~0.3 times per million words is an ordinary one
COMMON_ZIPF = 3.0  # the words a misspelling is checked against (wordfreq's "small" English list)
MIN_CHARS = 5  # a shorter word may as well be an abbreviation ("sso", "mdm") or a typo ("tne", "hpw")
MIN_BASE = 3  # the shortest word an inflection is taken off to leave
_INFLECTIONS = ("ing", "ies", "es", "ed", "s", "d", "ly")
# a word inside a file name, path or address: one of . / \ _ @ : between a character and a letter or digit
_EMBEDDED = re.compile(r"\S[./\\_@:]\w")
_LETTERS = string.ascii_lowercase

Held = Callable[[Collection[str]], set[str]]  # which of these index terms (stems) some chunk holds


@functools.cache
def _common_words() -> frozenset[str]:
    import wordfreq

    return frozenset(
        w
        for w, f in wordfreq.get_frequency_dict("en", wordlist="small").items()
        if w.isalpha() and f >= 10 ** (COMMON_ZIPF - 9)
    )


@functools.lru_cache(maxsize=4096)
def _zipf(word: str) -> float:
    import wordfreq

    return float(wordfreq.zipf_frequency(word, "en"))


def bases(word: str) -> list[str]:
    """The word and its forms without a regular inflection ("huddles" → huddle; "dropping" → drop, dropp)."""
    forms = [word]
    for suffix in _INFLECTIONS:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_BASE:
            base = word[: -len(suffix)]
            forms += [base, base + "e"] if suffix in ("ing", "ed", "es") else [base]
            if suffix == "ies":
                forms.append(base + "y")
            if suffix in ("ing", "ed") and len(base) > MIN_BASE and base[-1] == base[-2]:
                forms.append(base[:-1])
    return forms


def ordinary_english(word: str) -> bool:
    """A word, or its form without an inflection, at least ORDINARY_ZIPF in English."""
    return any(_zipf(form) >= ORDINARY_ZIPF for form in bases(word))


def one_edit(word: str) -> set[str]:
    """Every string one edit away: a letter dropped, swapped with the next, changed or added."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return (
        {a + b[1:] for a, b in splits if b}
        | {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
        | {a + c + b[1:] for a, b in splits if b for c in _LETTERS}
        | {a + c + b for a, b in splits for c in _LETTERS}
    ) - {word}


def topic_words(text: str) -> list[str]:
    """The question's words that could name a topic: lower case, apostrophe endings dropped, letters only, hyphens
    kept (a hyphenated word is one name), none inside a file name, path or address."""
    words = []
    for token in text.split():
        if _EMBEDDED.search(token):
            continue
        for word in WORD.findall(token.lower()):
            word = fold(re.split(r"['’]", word)[0])
            joined = word.replace("-", "")
            if (
                len(joined) >= MIN_CHARS
                and joined.isalpha()
                and word not in STOP_WORDS
                and word not in CONVERSATION_WORDS
                and word not in words
            ):
                words.append(word)
    return words


def _forms(word: str) -> list[str]:
    """What the index may hold a word as: its joined form and, hyphenated, its parts."""
    parts = [p for p in word.split("-") if p]
    return [word.replace("-", "")] + (parts if len(parts) > 1 else [])


def _stems(words: Iterable[str]) -> set[str]:
    return set(snowball()(list(words)))


def foreign_terms(text: str, held: Held) -> list[str]:
    """The question's words foreign to the collection (see the module docstring), in the order written."""
    candidates = [w for w in topic_words(text) if not any(ordinary_english(f) for f in _forms(w))]
    if not candidates:
        return []
    found = held(sorted(_stems(f for w in candidates for f in _forms(w))))
    candidates = [w for w in candidates if not _stems(_forms(w)) & found]
    foreign = []
    for word in candidates:
        joined = word.replace("-", "")
        near = one_edit(joined)
        if near & _common_words() or held(sorted(_stems(near))):
            continue
        foreign.append(word)
    return foreign
