"""A question about a phone, and an article written for computers only (or a question about a computer, and an
article for phones only).

A knowledge base often documents a task for Windows, macOS and Linux and never for a phone or tablet. "How do I map
the shared drive on my iPhone?" then finds that article, and its Windows steps were given as the answer, closed by
"These are the Windows steps. If you're on Linux or macOS, tell me." — for an employee who said iPhone. The
knowledge base does not answer the question for their device; saying so, with the closest articles and a ticket,
is the honest reply.

The question asks about a mobile device when it names iOS or Android (or a device of theirs: iPhone, iPad), a
smartphone or tablet, or "my phone" (not "my phone number"), and names no computer (a desktop OS, "laptop",
"PC", …): "on my phone and my laptop" is asked for both. An article is for computers only when its steps are
marked for a desktop OS (indexing marks each chunk's OS) or its title says "desktop", "computer", "PC" or "laptop",
and nothing in it speaks of a phone, a tablet, mobile or a mobile OS (its list of related articles aside).
The reverse holds too: a question about a computer (it names a laptop, a PC or a desktop OS, and no phone or
tablet) is not answered from an article whose title names a phone, a tablet or a mobile OS and whose text names no
computer ("read work mail on my laptop" and "Work mail on your phone"). Measured on the development sets
(`bench/dev_sets.py`): it turns 1 of their 40 unanswerable questions into an honest "not found" and costs none of
the 160 answerable ones. The answer decision lowers such an article's evidence as it does a question with a
foreign word (nodes/support/confidence.py `foreign_penalty`, by `DEVICE_PENALTY`).
Pure functions.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from core.lexicon import platforms

MOBILE_PLATFORMS = frozenset({"ios", "android"})
COMPUTER_PLATFORMS = frozenset({"windows", "macos", "linux"})
MAX_ARTICLE_CHARS = 20_000  # of an article read for a word of a phone or tablet (a bound)

_MOBILE_DEVICE = re.compile(
    r"\b(?:smartphones?|tablets?|mobile\s+(?:phone|device)s?|(?:my|a|the|their|her|his)\s+(?:work\s+)?phone"
    r"(?!\s*(?:numbers?|calls?|lines?|extensions?|no\b)))\b",
    re.I,
)
_COMPUTER = re.compile(r"\b(?:computers?|laptops?|desktops?|pcs?|notebooks?|workstations?|chromebooks?)\b", re.I)
_MOBILE_TEXT = re.compile(r"\b(?:phones?|smartphones?|tablets?|mobile|iphones?|ipads?|android|ios|ipados)\b", re.I)
# a page's list of other pages ("Related articles", "See also") names them; it does not speak of what they cover
_REFERENCES = re.compile(
    r"^\W*(?:related(?:\s+\w+)?|see\s+also|further\s+reading|learn\s+more|more\s+information)\W*$", re.I
)


def asks_for_mobile(message: str) -> bool:
    """The message asks about a phone or tablet, and about no computer."""
    named = platforms(message)
    if named & COMPUTER_PLATFORMS or _COMPUTER.search(message):
        return False
    return bool(named & MOBILE_PLATFORMS) or bool(_MOBILE_DEVICE.search(message))


def asks_for_computer(message: str) -> bool:
    """The message asks about a computer (a laptop, a PC, a desktop OS), and about no phone or tablet."""
    named = platforms(message)
    if named & MOBILE_PLATFORMS or _MOBILE_TEXT.search(message):
        return False
    return bool(named & COMPUTER_PLATFORMS) or bool(_COMPUTER.search(message))


def _read(title: str, chunks: Iterable[Mapping[str, object]]) -> tuple[str, bool]:
    """The article's text as far as MAX_ARTICLE_CHARS (its list of related articles aside), and whether any of its
    chunks is marked for a desktop OS."""
    texts, marked, size = [title], False, len(title)
    for chunk in chunks:
        if _REFERENCES.match(str(chunk.get("section") or "").rsplit(" > ", 1)[-1]):
            continue
        marked = marked or chunk.get("os") in COMPUTER_PLATFORMS
        text = str(chunk.get("text") or "")
        texts.append(text[: max(0, MAX_ARTICLE_CHARS - size)])
        size += len(text)
        if size >= MAX_ARTICLE_CHARS:
            break
    return "\n".join(texts), marked


def for_computers_only(title: str, chunks: Iterable[Mapping[str, object]]) -> bool:
    """The article is written for computers and says nothing of a phone or tablet."""
    text, marked = _read(title, chunks)
    if _MOBILE_TEXT.search(text):
        return False
    return marked or bool(_COMPUTER.search(title))


def for_mobile_only(title: str, chunks: Iterable[Mapping[str, object]]) -> bool:
    """The article is written for phones or tablets (its title says so) and says nothing of a computer."""
    if not _MOBILE_TEXT.search(title):
        return False
    text, marked = _read(title, chunks)
    return not marked and not _COMPUTER.search(text) and not platforms(text) & COMPUTER_PLATFORMS


def for_another_device(message: str, title: str, chunks: Iterable[Mapping[str, object]]) -> bool:
    """The message asks about a phone and the article is for computers only, or the reverse."""
    if asks_for_mobile(message):
        return for_computers_only(title, chunks)
    return asks_for_computer(message) and for_mobile_only(title, chunks)


def asked_device(message: str) -> str:
    """ "mobile" or "computer" when the message asks about one kind of device only, else ""."""
    return "mobile" if asks_for_mobile(message) else "computer" if asks_for_computer(message) else ""


def heading_device(heading: str) -> str:
    """ "mobile" or "computer" when a section's heading names one kind of device only ("Phone (iPhone or Android)",
    "Windows", "On your laptop"), else ""."""
    mobile = bool(_MOBILE_TEXT.search(heading))
    computer = bool(_COMPUTER.search(heading) or platforms(heading) & COMPUTER_PLATFORMS)
    return "mobile" if mobile and not computer else "computer" if computer and not mobile else ""
