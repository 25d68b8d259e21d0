"""A slip of the keyboard in a question, read as the word the knowledge base uses.

Employees type in a hurry: "pasword", "cowoker", "notifcations". No chunk holds such a word, so the word that names
the topic is lost: the lexical search misses it, the embedding model reads a different word (a slip moves a short
question's vector far), and the confidence reads the question as half about something the knowledge base never
mentions, and declines. The search boxes people know (Elasticsearch's fuzzy match, Algolia's typo tolerance) read
one slip in a longer word as that word.

Here a word of a question is read as another when all of these hold:
- its stem (as the lexical index keeps terms) is in no chunk of the collection;
- it is at least `MIN_LETTERS` letters, all of them letters ("ipv4" or "0x80070005" are no words, and a short word
  is one slip from many others);
- it is no ordinary English word (core/words.py, the same test that tells another product's name from a slip):
  "slack", "deck", "huddles" are words the employee meant, even when the knowledge base never uses them;
- it is no word English text uses at all, however rarely (core/words.py `known_word`): "visio" or "okta" is the name
  of a product the knowledge base does not cover, not a slip for "visit" or "outa";
- a word one edit away (a letter left out, added or changed, or two letters swapped) has a stem the collection
  holds; of several, the one whose stem the most chunks hold, an ordinary word first.
The search then runs on the question with the slip replaced — by meaning and by words alike — and "I searched for …"
shows the word read. The conversation keeps what the employee wrote.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping

from core.text import WORD, snowball
from core.words import known_word, one_edit_away, ordinary_english

MIN_LETTERS = 5
MAX_SLIPS = 8  # words of one query looked at (each is ~400 strings one edit away: a pasted log stays cheap)


class SlipReader:
    """Reads the slips of a text against one collection's terms (`df`: in how many chunks a stem is; one call
    with every stem to look up, so a shared index answers in one read)."""

    def __init__(self, stem: Callable[[list[str]], list[str]] | None = None) -> None:
        self._stem = stem or snowball()

    def candidates(self, text: str) -> dict[str, dict[str, str]]:
        """The words of `text` that may be slips → {a word one edit away: its stem}, most likely slips first, with
        the word's own stem under the word itself (look all the stems up, then call `read`)."""
        words = [w for w in dict.fromkeys(WORD.findall(text.lower())) if len(w) >= MIN_LETTERS and w.isascii()]
        found: dict[str, dict[str, str]] = {}
        for word in words:
            if not word.isalpha() or ordinary_english(word) or known_word(word):
                continue
            (own,) = self._stem([word])
            edits = sorted(one_edit_away(word).items(), key=lambda e: (e[1], e[0]))
            found[word] = {word: own} | dict(zip((e for e, _ in edits), self._stem([e for e, _ in edits])))
            if len(found) == MAX_SLIPS:
                break
        return found

    @staticmethod
    def stems(candidates: Mapping[str, Mapping[str, str]]) -> list[str]:
        return sorted({stem for edits in candidates.values() for stem in edits.values()})

    @staticmethod
    def read(text: str, candidates: Mapping[str, Mapping[str, str]], df: Mapping[str, int]) -> str:
        """`text` with each slip replaced by the word it was meant as (unchanged when there is none)."""
        chosen: dict[str, str] = {}
        for word, edits in candidates.items():
            if df.get(edits[word], 0):
                continue  # the collection holds the word as written
            # the stem the most chunks hold, an ordinary word first, then the likeliest slip (the candidates' order)
            held = sorted(
                (-df.get(stem, 0), not ordinary_english(edit), order, edit)
                for order, (edit, stem) in enumerate(edits.items())
                if edit != word and df.get(stem, 0)
            )
            if held:
                chosen[word] = held[0][-1]
        if not chosen:
            return text
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, chosen)) + r")\b", re.IGNORECASE)
        return pattern.sub(lambda m: chosen[m.group(0).lower()], text)
