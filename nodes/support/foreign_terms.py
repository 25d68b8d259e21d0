"""Words of a question that are foreign to the knowledge base: a likely sign that it asks about something the
knowledge base does not cover (another product, a feature or a service it never names).

A word is foreign when all of these hold:
- no chunk of the collection holds it in any form the lexical index knows (its stem; a hyphenated word's
  parts or its joined form; "wi-fi" ~ "wifi");
- it is no ordinary English word (core/words.py): its frequency in English (wordfreq's Zipf scale, log10 of uses
  per billion words), or that of its form without an inflection ("reinstalling" ~ "reinstall"), is below
  ORDINARY_ZIPF.
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

import re
from typing import Callable, Collection, Iterable

from core.text import CONVERSATION_WORDS, STOP_WORDS, WORD, fold, snowball
from core.words import common_words, one_edit_away, ordinary_english

MIN_CHARS = 5  # a shorter word may as well be an abbreviation ("sso", "mdm") or a typo ("tne", "hpw")
# a word inside a file name, path or address: one of . / \\ _ @ : between a character and a letter or digit
_EMBEDDED = re.compile(r"\S[./\\_@:]\w")

Held = Callable[[Collection[str]], set[str]]  # which of these index terms (stems) some chunk holds


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
        near = set(one_edit_away(joined))
        if near & common_words() or held(sorted(_stems(near))):
            continue
        foreign.append(word)
    return foreign
