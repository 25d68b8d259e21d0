"""A knowledge base that documents two products side by side (tests/fixtures/two_products_kb: a file-sync app and a
chat app, three articles each), through POST /chat of the real app (MiniLM, Chroma, BM25): a question that names
one product is not answered from an article that names only the other, however alike their words; the same
question about the documented product, or naming none, is answered."""

import pytest

from tests.conftest import chat as ask
from tests.conftest import module_client

pytestmark = pytest.mark.slow

client = module_client("two_products_kb")


def test_two_factor_for_the_product_without_such_an_article_is_not_answered_from_the_other_products_page(client):
    reply = ask(client, "how do I turn on two-factor sign-in with an authenticator app for my Talkwise account?")

    assert reply["sources"] == [] and "couldn't find" in reply["answer"]


def test_the_same_question_about_the_product_that_has_the_article_is_answered(client):
    reply = ask(client, "how do I turn on two-factor sign-in with an authenticator app for my Syncbox account?")
    assert reply["sources"][0]["source"] == "kb/syncbox-two-factor.md"
    assert "Scan the QR code" in reply["answer"]


def test_a_question_naming_no_product_is_answered_from_the_page_that_fits(client):
    reply = ask(client, "how do I turn on two-factor sign-in with an authenticator app?")
    assert reply["sources"][0]["source"] == "kb/syncbox-two-factor.md"


def test_a_question_naming_both_products_is_answered(client):
    reply = ask(client, "how do I install the Talkwise desktop app on Windows, like I did for Syncbox?")
    assert reply["sources"] and reply["sources"][0]["source"] in ("kb/talkwise-desktop-app.md", "kb/syncbox-install.md")
