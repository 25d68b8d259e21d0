"""English words as a question uses them: whether a word is ordinary English, and the strings one typing slip away.

Two steps read a word the knowledge base does not hold, and they must agree on what it is:
- app/adapters/spelling.py reads a slip ("pasword") as the word the documents hold ("password");
- nodes/support/foreign_terms.py takes a word that is neither ordinary English nor a slip as the name of something
  the knowledge base does not cover ("onlyoffice").
An ordinary English word ("slack", "huddles", "laptop") is neither: it is meant as written. Frequencies come from
wordfreq (its English list, loaded on first use, ~0.4 s once).
"""

from __future__ import annotations

import functools
import string

KNOWN_ZIPF = 1.0  # wordfreq lists a word at or above this: a word of the language (often a name), no slip
ORDINARY_ZIPF = 2.5  # an English word used at least ~0.3 times per million words is an ordinary one
COMMON_ZIPF = 3.0  # the words a misspelling is checked against (wordfreq's "small" English list)
MIN_BASE = 3  # the shortest word an inflection is taken off to leave
_INFLECTIONS = ("ing", "ies", "es", "ed", "s", "d", "ly")
_LETTERS = string.ascii_lowercase


@functools.cache
def common_words() -> frozenset[str]:
    """The English words at least COMMON_ZIPF (letters only)."""
    import wordfreq

    return frozenset(
        w
        for w, f in wordfreq.get_frequency_dict("en", wordlist="small").items()
        if w.isalpha() and f >= 10 ** (COMMON_ZIPF - 9)
    )


@functools.lru_cache(maxsize=4096)
def zipf(word: str) -> float:
    """wordfreq's Zipf frequency of an English word (log10 of its uses per billion words; 0 when unknown)."""
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
    return any(zipf(form) >= ORDINARY_ZIPF for form in bases(word))


def known_word(word: str) -> bool:
    """A word English text uses, however rarely (at least KNOWN_ZIPF): most often a name — a product ("visio",
    "okta"), a brand, a place. The slips people type are almost never in wordfreq's lists ("pasword", "cowoker",
    "notifcations" are 0), so a known word is no slip, even one letter from a word the knowledge base holds
    ("visio" is not "visit")."""
    return zipf(word) >= KNOWN_ZIPF


def one_edit_away(word: str) -> dict[str, int]:
    """Every string one edit of a lower-case letter from `word` → how likely that slip is, most likely 0: a letter
    the typist left out (added back here), two swapped, one hit for another, one typed twice or stray (taken out
    here) — the order in which hurried typing makes them."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    kinds = (
        {a + c + b for a, b in splits for c in _LETTERS},
        {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1},
        {a + c + b[1:] for a, b in splits if b for c in _LETTERS},
        {a + b[1:] for a, b in splits if b},
    )
    edits: dict[str, int] = {}
    for kind, strings in reversed(list(enumerate(kinds))):
        edits.update(dict.fromkeys(strings, kind))
    edits.pop(word, None)
    return edits
