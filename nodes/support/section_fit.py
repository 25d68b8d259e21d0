"""How well each section of one article covers a question, by its heading path and its body.

The search scores the passages it returned; a manual page with twenty sections has most of them unscored, and the
passage most *like* the question is often not the one that answers it. So the sections of the chosen article are
compared with the question word by word (stems), each word weighted by how rare it is *within the article*: a word
every section uses ("notifications" on the notifications page) tells the sections apart no better than "the".
The section's own heading is the strongest evidence (an author names a section after what it answers), the headings
above it less, the body least. Pure functions over text; compose.py combines the fit with what the search found.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from core.text import COMPLAINT_WORDS, STOP_WORDS, topic_terms

_HYPHENATED = re.compile(r"\b\w+(?:-\w+)+\b")
# "what do I need to do", "I want to…", "I got a mail that looks like…": the asking, not the topic ("before you
# need it", "a look-alike domain" answer none of it)
_IGNORED = frozenset(
    STOP_WORDS
    | COMPLAINT_WORDS
    | {"whether", "need", "needs", "needed", "want", "wants", "like", "look", "looks", "seem", "seems", "got"}
)
# irregular past forms a stemmer leaves apart from their verb: "lost my phone" is the situation of a heading
# "If you lose your device", "forgot my password" of "If you've forgotten your password"
_IRREGULAR = {
    "lost": "lose",
    "forgot": "forget",
    "forgotten": "forget",
    "stole": "steal",
    "stolen": "steal",
    "hid": "hide",
    "hidden": "hide",
    "sent": "send",
    "took": "take",
    "taken": "take",
    "wrote": "write",
    "written": "write",
    "chose": "choose",
    "chosen": "choose",
    "froze": "freeze",
    "frozen": "freeze",
    "overwrote": "overwrite",
    "overwritten": "overwrite",
}
_IRREGULAR_WORD = re.compile(r"\b(" + "|".join(_IRREGULAR) + r")\b", re.I)
# a part of a day is that day too: "my first day" is the situation of a heading "Your first morning"
_PART_OF_DAY = re.compile(r"\b(morning|afternoon|evening|lunchtime)\b", re.I)
# the actions employees ask for in their own words, each with the words help pages head the same action with: "stop
# it nagging" is what a section headed "Preventing automatic updates" does, "can it be undone?" what "Restoring
# deleted messages" does. A group counts when the question names one of its words or phrases; its other words then
# count as the question's (a word no section of the article uses weighs nothing, as any other).
_SAME_ACTION: tuple[tuple[str, ...], ...] = (
    ("stop", "prevent", "disable", "suppress", "turn off", "switch off"),
    ("undo", "undone", "restore", "recover", "undelete", "get back", "bring back"),
    ("delete", "remove", "erase", "get rid"),
)
_UNDO, _DELETE = 1, 2  # the groups of undoing an action and of deleting
# words counted only as written: "it stopped syncing" is a fault, not a wish to stop it; "deleted files" are what a
# question is about, not a wish to delete them
_AS_WRITTEN = frozenset({"stop", "delete", "remove", "erase"})


def _inflected(word: str) -> str:
    """A verb and its inflections: remove, removes, removed, removing; prevent, prevented; stop only as written."""
    if word in _AS_WRITTEN:
        return re.escape(word)
    if word.endswith("e"):
        return re.escape(word[:-1]) + r"(?:e|es|ed|ing)"
    return re.escape(word) + r"(?:s|ed|ing)?"


def _phrase(words: str) -> str:
    """A word with its inflections, or a verb and its particle with up to two words between ("get it back")."""
    first, *rest = words.split()
    if not rest:
        return _inflected(first)
    return _inflected(first) + r"(?:\s+\w+){0,2}?\s+" + r"\s+".join(map(re.escape, rest))


_ACTION_GROUPS = [
    (re.compile(r"\b(?:" + "|".join(_phrase(w) for w in group) + r")\b", re.I), group) for group in _SAME_ACTION
]
OWN_HEADING_WEIGHT = 1.0  # a question word in the section's own heading
PATH_WEIGHT = 0.5  # in a heading above it
BODY_WEIGHT = 0.45  # only in its body
BODY_CHARS = 4000  # of a section's body compared (a bound; the start of a section says what it is about)
SECTION_TERMS_CACHED = 512  # headings and bodies whose terms are kept (at most BODY_CHARS each)


@dataclass(frozen=True)
class SectionText:
    """What `fit` reads of a section: its heading path below the title, and its body."""

    path: Sequence[str]
    body: str


def text_terms(text: str, *, numbers: bool = True) -> frozenset[str]:
    """The stems of a text's topic words (no stop or complaint words), an irregular past form as its verb, and "day"
    for a part of one."""
    terms = topic_terms(_IRREGULAR_WORD.sub(lambda m: _IRREGULAR[m.group(0).lower()], text), _IGNORED, numbers=numbers)
    return terms | topic_terms("day", _IGNORED) if _PART_OF_DAY.search(text) else terms


@lru_cache(maxsize=SECTION_TERMS_CACHED)
def section_terms(text: str) -> frozenset[str]:
    """`text_terms` of a heading or a section's body: the same sections are read turn after turn (the knowledge
    base's text, never a person's), so each is read once while it stays among the most recently used."""
    return text_terms(text)


def question_terms(question: str) -> frozenset[str]:
    """The stems of the question's topic words (no stop or complaint words, no numbers). A hyphenated word counts
    once, joined ("wi-fi" → wifi, which a section's "Wi-Fi" also gives): its parts would count one thing thrice."""
    joined = _HYPHENATED.sub(lambda m: m.group(0).replace("-", ""), question)
    return text_terms(joined, numbers=False)


def fit(sections: Sequence[SectionText], question: str) -> list[float]:
    """For each section, 0–1: the share of the question's article-informative words it covers, a word in its own
    heading counting fully, in a heading above it half, in its body a little less than that. An action the question names brings the words pages head it with
    (`_SAME_ACTION`)."""
    terms = _without_undone(question_terms(question), question) | _same_action_terms(question)
    if not sections or not terms:
        return [0.0] * len(sections)
    own = [section_terms(s.path[-1] if s.path else "") for s in sections]
    above = [section_terms(" ".join(s.path[:-1])) for s in sections]
    body = [section_terms(s.body[:BODY_CHARS]) for s in sections]
    n = len(sections)
    weight: dict[str, float] = {}
    for term in terms:
        df = sum(1 for i in range(n) if term in own[i] or term in above[i] or term in body[i])
        if df:  # a word the article never uses says nothing about which of its sections answers
            weight[term] = math.log((n + 1) / df)
    total = sum(weight.values())
    if total <= 0:
        return [0.0] * n
    scores = []
    for i in range(n):
        got = 0.0
        for term, w in weight.items():
            if term in own[i]:
                got += OWN_HEADING_WEIGHT * w
            elif term in above[i]:
                got += PATH_WEIGHT * w
            elif term in body[i]:
                got += BODY_WEIGHT * w
        scores.append(round(got / total, 4))
    return scores


def _without_undone(terms: frozenset[str], question: str) -> frozenset[str]:
    """A wish to undo an action ("I deleted the series, can I get it back?") is answered by the section that
    reverses it, not by the one that does it: the action words undone count for no section."""
    if not _ACTION_GROUPS[_UNDO][0].search(question):
        return terms
    return terms - text_terms(" ".join(w for w in _SAME_ACTION[_DELETE] if " " not in w))


def _same_action_terms(question: str) -> frozenset[str]:
    """The stems of the one-word members of each action group the question names a word or phrase of."""
    named = [group for pattern, group in _ACTION_GROUPS if pattern.search(question)]
    return frozenset().union(*(text_terms(" ".join(w for w in group if " " not in w)) for group in named))
