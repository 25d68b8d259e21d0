"""The text toolkit: characters that must not come in, and the words, stems and stop words every comparison of
words uses (the lexical index, ticket de-duplication, the status check, the lexicon).

Control characters, and characters that change how text reads without being seen, have one definition for
every place text comes in (chat messages, uploaded documents, the status page).

Bidi overrides and isolates make a name read differently from what it is ("guide \u202egnp.exe" shows as
"…exe.png"); zero-width spaces, word joiners, byte-order marks, soft hyphens and fillers hide inside words;
Unicode tag characters (U+E0000–E007F) spell ASCII nobody can see, the classic way to hide "ignore previous
instructions" from a reader but not from a model. Joiners (U+200C, U+200D) stay: emoji and several scripts
need them.
"""

from __future__ import annotations

import functools
import re
import threading

# control characters but tab, newline and carriage return; C1 controls; lone surrogates (JSON "\ud800" decodes
# to one, and nothing downstream can encode it); non-characters
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
INVISIBLE = re.compile(
    r"[\u202a-\u202e\u2066-\u2069\u200b\u2060\ufeff\u00ad\u034f\u115f\u1160\u17b4\u17b5"
    r"\u180b-\u180f\u3164\uffa0\U000e0000-\U000e007f]"
)


# --- words, stems and the words that say nothing ----------------------------------------------------------------
# One toolkit for every place that compares words: the lexical (BM25) index, ticket de-duplication, the status
# check and the lexicon. Each consumer takes the word lists it needs; the lists are split by what their words say
# nothing about, so one list is never edited for one consumer's sake.

# a word as written: letters and digits, joined inside by hyphens ("wi-fi") or apostrophes ("don't", "user’s")
WORD = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")
WORD_ANY_CASE = re.compile(WORD.pattern, re.I)
_APOSTROPHE = re.compile(r"['’]")

# Function words: articles, pronouns, auxiliaries, conjunctions, their contractions without apostrophes. The
# lexical index drops exactly these (measured on tv-dev; a stored index holds terms made with this list, so a
# change here means re-indexing).
STOP_WORDS = frozenset(
    """
a an the and or but if then than so to of in on at by for with from into onto about as is are was were be
been being am i me my mine we our us you your it its this that these those there here do does did doing
done have has had having can could should would will shall may might must not no nor yes ok okay please
what how why when where which who whom whose im ive dont doesnt cant wont just also very really any some
each more most again up out off over under
""".split()
)
# The words of a conversation rather than of a topic: greetings, pronouns and contractions the index keeps,
# wants and needs, vague nouns ("thing", "stuff"), time ("now", "today").
CONVERSATION_WORDS = frozenset(
    """
hi hello hey pls thanks thank he she they them their too while cannot isnt arent wasnt didnt whats theres won
all anything something everything nothing anyone everyone someone else other others only get got getting need
want like know tell help thing things stuff way use using used now today still down one two new
""".split()
)
# Words that say something is wrong, but not *what* ("it's not working again" names no topic).
COMPLAINT_WORDS = frozenset(
    """
working work works worked broken broke break problem problems issue issues error errors fix fixed wrong
trouble stopped stop failing failed fail fails failure failures happening happen going weird strange anymore
sure keep keeps right
""".split()
)
# The vocabulary (and the symptoms) every outage report shares: it says nothing about *which* service is affected.
OUTAGE_WORDS = frozenset(
    """
outage outages incident incidents system systems status page pages service services disruption disruptions
disrupted degraded degradation performance investigating investigation identified monitoring resolved update
updates report reports reported user users affected affecting impact impacted experiencing experience elevated
increased intermittent partial major minor maintenance scheduled ongoing utc whole current currently known seem
seems say saying says said telling show showing look looking check checking unable able slow
""".split()
)


def fold(word: str) -> str:
    """A word for comparison: lower case, apostrophes dropped ("Don’t" → "dont")."""
    return _APOSTROPHE.sub("", word.lower())


def pieces(word: str) -> list[str]:
    """A hyphenated word as its parts and joined ("wi-fi" → wi, fi, wifi), so "wifi" finds "Wi-Fi"; others as is."""
    if "-" not in word:
        return [word]
    return [*word.split("-"), word.replace("-", "")]


class Snowball:
    """English Snowball (Porter 2) stems, "connecting" ~ "connection" (PyStemmer: C, with a built-in cache)."""

    def __init__(self) -> None:
        import Stemmer

        self._stemmer = Stemmer.Stemmer("english")
        self._lock = threading.Lock()  # the stemmer's cache is not thread-safe

    def __call__(self, words: list[str]) -> list[str]:
        with self._lock:
            return self._stemmer.stemWords(words)


@functools.cache
def snowball() -> Snowball:
    """The process's one stemmer, made on first use."""
    return Snowball()


# the particle of a phrasal compound ("sign in", "set up", "check out", "pop up", "add on", "log off")
PARTICLES = frozenset({"in", "up", "out", "on", "off", "over", "down", "back"})


def _piece(word: str) -> bool:
    """A piece of one or two letters that is no function word ("wi" and "fi" of Wi-Fi, the "e" of e-mail); two
    such pieces, or a single letter and the word after it, are joined ("pc" beside a word stays a word)."""
    return len(word) <= 2 and word not in STOP_WORDS and not word.isdigit()


class Tokenizer:
    """What the lexical index indexes and searches: lower-case words split at apostrophes ("don't" → don, t),
    hyphenated words also joined, single letters and STOP_WORDS dropped, Snowball stems.

    Indexes stored by earlier versions hold terms made this way, so the splitting here stays as it is."""

    def __init__(self) -> None:
        self._stem = snowball()

    def __call__(self, text: str) -> list[str]:
        words = [
            piece for word in WORD.findall(text.lower()) for part in _APOSTROPHE.split(word) for piece in pieces(part)
        ]
        return self._stem([w for w in words if len(w) > 1 and w not in STOP_WORDS])

    def compounds(self, text: str) -> list[str]:
        """Words a query writes apart that a document may write as one word or hyphenated: their joined forms,
        stemmed as indexed terms are (a hyphenated word is indexed joined too). Three shapes, the ones English
        compounds take: a word and its particle ("sign in", "set up", "pop up" ~ sign-in, setup, pop-up), a word
        split into short pieces ("wi fi", "e mail" ~ Wi-Fi, e-mail), and three words around a function word ("out
        of office", "end to end", "do not disturb"). Any other pair of words is found by its own terms already,
        and joined could make a word the question never meant ("a way" is not "away", "folder sync" not the app
        FolderSync). Candidates only: an index searches those it holds, so a run that is no word anywhere in the
        documents changes nothing."""
        # a word's apostrophe ending ("customer's", "can't") is no piece of a compound
        words = [piece for word in WORD.findall(text.lower()) for piece in _APOSTROPHE.split(word)[0].split("-")]
        joined = set()
        for i in range(len(words) - 1):
            first, second = words[i], words[i + 1]
            if first.isdigit() or second.isdigit():
                continue
            if first not in STOP_WORDS and len(first) > 2 and second in PARTICLES:
                joined.add(first + second)
            elif _piece(first) and (len(first) == 1 or _piece(second)):
                joined.add(first + second)
            if i + 2 < len(words):
                third = words[i + 2]
                if second in STOP_WORDS and third not in STOP_WORDS and len(third) > 2 and not third.isdigit():
                    joined.add(first + second + third)
        return self._stem(sorted(w for w in joined if w not in STOP_WORDS))


def topic_terms(text: str, ignored: frozenset[str], *, numbers: bool = True) -> frozenset[str]:
    """The stems of the words of a text that can name a topic: words folded ("isn't" → isnt), hyphenated words as
    parts and joined, single letters and `ignored` words dropped (and numbers, unless `numbers`)."""
    words = [
        piece
        for word in WORD.findall(text.lower())
        for piece in pieces(fold(word))
        if len(piece) > 1 and piece not in ignored and (numbers or not piece.isdigit())
    ]
    return frozenset(snowball()(words))
