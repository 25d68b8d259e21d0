"""The page for the platform in hand, through POST /chat and GET /search of the real app (MiniLM, Chroma, BM25) on a
knowledge base with one calendar page per phone platform (tests/fixtures/platforms_kb): a question that names only
the device ("my iphone") gets the iOS page, though the Android page shares more of its words."""

import pytest

from tests.conftest import chat as ask
from tests.conftest import module_client

pytestmark = pytest.mark.slow
QUESTION = "my work calendar keeps throwing an SSL error on my {device}"

client = module_client("platforms_kb")


@pytest.mark.parametrize(
    ("device", "page"), [("iphone", "calendar-on-ios.md"), ("android phone", "calendar-on-android.md")]
)
def test_the_page_for_the_device_in_hand_is_cited(client, device, page):
    reply = ask(client, QUESTION.format(device=device))
    assert reply["sources"] and reply["sources"][0]["source"] == f"kb/{page}"


def test_search_ranks_the_platforms_page_first_too(client):
    hits = client.get("/search", params={"q": QUESTION.format(device="ipad")}).json()["results"]
    assert hits[0]["source"] == "kb/calendar-on-ios.md"
