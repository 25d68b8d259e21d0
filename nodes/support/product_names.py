"""A question that names one of the knowledge base's products, and an article about another one.

A company knowledge base documents several products side by side (a chat service and a file-sharing suite, a VPN
and a password manager). Their articles share a vocabulary — "two-factor", "desktop app", "notifications" — so a
question about one product can match an article of another word for word: "2FA for my <chat> account" finds the
<file-sharing> two-factor page. The question names its product; that article never does, and names another one.

A product name of the knowledge base is a word that is no ordinary English word (core/words.py) and that many of
its documents hold (at least MIN_SHARE of them, and MIN_DOCUMENTS). An article is about another product than the
one asked about when all of these hold:
- the question names a product name of the knowledge base that the article does not hold;
- the article holds another product name, not one the question names;
- the two are seldom in one document: of the documents holding the rarer of the two, fewer than APART also hold
  the other (two products documented side by side, not a product and a feature of it).

An article that names no product at all (many pages never repeat their product's name) is never taken for another
product's. Measured on the development sets (bench/abstention_evidence.py): it holds for 2 of 40 unanswerable
questions and for none of 160 answerable ones. The answer decision lowers such an article's evidence as it does a
question with a foreign word (nodes/support/confidence.py `foreign_penalty`). Pure functions over the index's
`term_documents` look-up.
"""

from __future__ import annotations

from typing import Callable, Collection, Iterable

from core.records import TermDocuments
from core.text import snowball
from core.words import ordinary_english
from nodes.support.foreign_terms import topic_words

MIN_SHARE = 0.05  # of the knowledge base's documents that hold a product name
MIN_DOCUMENTS = 3
APART = 0.2  # two product names are apart when fewer than this share of the rarer one's documents hold both
MAX_ARTICLE_CHARS = 20_000  # of an article read for the names it holds (a bound: names come early)
MAX_NAMES = 64  # of an article's unusual words looked up in the index, in the order written (a bound)

Lookup = Callable[[Collection[str]], TermDocuments]


def _named(words: Iterable[str]) -> dict[str, str]:
    """The index term (stem) of each word that is no ordinary English word (a product's name is one word)."""
    unusual = [w for w in words if "-" not in w and not ordinary_english(w)]
    return dict(zip(snowball()(unusual), unusual)) if unusual else {}


def _products(found: TermDocuments) -> dict[str, frozenset[str]]:
    least = max(MIN_DOCUMENTS, MIN_SHARE * found.documents)
    return {term: docs for term, docs in found.holding.items() if len(docs) >= least}


def asked_products(question: str, lookup: Lookup) -> dict[str, frozenset[str]]:
    """The knowledge base's product names the question names (index term → the documents holding it)."""
    named = _named(topic_words(question))
    return _products(lookup(sorted(named))) if named else {}


def other_products(asked: dict[str, frozenset[str]], doc_id: str, article_text: str, lookup: Lookup) -> list[str]:
    """The product names an article holds in place of the one asked about (empty: the article may answer)."""
    missing = {term: docs for term, docs in asked.items() if doc_id not in docs}
    if not missing:
        return []
    unusual = _named(topic_words(article_text[:MAX_ARTICLE_CHARS]))
    names = dict([(t, w) for t, w in unusual.items() if t not in asked][:MAX_NAMES])
    if not names:
        return []
    rivals = _products(lookup(sorted(names)))
    return sorted(
        names[term]
        for term, docs in rivals.items()
        if doc_id in docs and any(len(docs & other) < APART * min(len(docs), len(other)) for other in missing.values())
    )
