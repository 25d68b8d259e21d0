"""Which of the knowledge base's products an article names in place of the one asked about
(nodes/support/product_names.py), over a made-up index of two products documented side by side."""

from core.records import TermDocuments
from nodes.support.product_names import asked_products, other_products

# ten documents: four of one product, four of another, two general pages; "authenticator" is in one of each product
HOLDING = {
    "syncbox": frozenset({"s1", "s2", "s3", "s4"}),
    "talkwis": frozenset({"t1", "t2", "t3", "t4"}),
    "authent": frozenset({"s1", "t2"}),
    "webdav": frozenset({"s1", "s2", "s3", "t1"}),
}


def lookup(terms):
    return TermDocuments(10, {t: HOLDING[t] for t in terms if t in HOLDING})


def test_a_product_the_question_names_is_a_word_many_documents_hold_and_no_ordinary_english():
    asked = asked_products("how do I set up two-factor with an authenticator for my Talkwise account", lookup)
    assert set(asked) == {"talkwis"}  # "authenticator" is in too few documents; "account" is ordinary English


def test_an_article_naming_only_the_other_product_is_another_products_article():
    asked = asked_products("two-factor for my Talkwise account", lookup)
    assert other_products(asked, "s1", "Turn on two-factor for Syncbox with an authenticator app", lookup) == [
        "syncbox"
    ]


def test_an_article_naming_no_product_or_the_one_asked_about_or_a_feature_of_it_may_answer():
    asked = asked_products("two-factor for my Talkwise account", lookup)
    assert other_products(asked, "g1", "Turn on two-factor with an authenticator app", lookup) == []
    assert other_products(asked, "t2", "Talkwise two-factor with an authenticator", lookup) == []
    # a word both products' pages hold is no rival product: "webdav" is in one of the asked product's pages too
    assert other_products(asked, "s2", "Mount the folder over WebDAV", lookup) == []
    assert other_products({}, "s1", "Syncbox", lookup) == []
