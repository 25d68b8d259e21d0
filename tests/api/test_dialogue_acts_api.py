"""Dialogue acts through POST /chat: the real app, real MiniLM, real Chroma, the real language model and SQLite
tickets, over the fixture knowledge base (one app for the module)."""

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from tests.conftest import FIXTURE_KB

pytestmark = pytest.mark.slow
CONTACT = "call +1 555 0100 or open https://it.example.test/portal"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("data"), kb_dir=FIXTURE_KB,
                        handoff_contact=CONTACT)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


class Chat:
    def __init__(self, client):
        self.client, self.session = client, None

    def say(self, message):
        body = {"message": message} | ({"session_id": self.session} if self.session else {})
        response = self.client.post("/chat", json=body)
        assert response.status_code == 200, response.text
        reply = response.json()
        self.session = reply["session_id"]
        return reply


def test_asking_for_a_person_gets_the_contact_and_a_ticket_that_a_free_yes_creates(client):
    chat = Chat(client)
    chat.say("the kiosk printer keeps jamming")
    offer = chat.say("can you transfer me to a human?")
    assert offer["action"] == "create_ticket" and offer["ticket_event"] == "offered" and offer["sources"] == []
    assert CONTACT in offer["answer"]
    created = chat.say("Yes, please create a ticket")
    assert created["ticket_event"] == "created" and created["ticket"]["status"] == "open"
    status = chat.say("any update on my issue?")
    assert status["action"] == "search_tickets" and created["ticket"]["id"] in status["answer"]
    closed = chat.say("it works now, thanks")
    assert closed["ticket_event"] == "closed" and closed["action"] == "converse"


def test_a_request_for_something_new_is_offered_as_a_request(client):
    reply = Chat(client).say("I'd like a second monitor")
    assert reply["action"] == "create_ticket" and "open a request" in reply["answer"]
    assert reply["ticket_offer"]["summary"] == "Request: I'd like a second monitor"


def test_off_topic_bot_and_capability_questions_get_their_replies(client):
    assert "IT help desk" in Chat(client).say("tell me a joke")["answer"]
    bot = Chat(client).say("are you a bot?")
    assert "automated assistant" in bot["answer"] and CONTACT in bot["answer"]
    assert "What do you need help with?" in Chat(client).say("what can you do?")["answer"]


def test_a_question_in_german_gets_the_notice_in_german_and_english_is_untouched(client):
    german = Chat(client).say("Wie verbinde ich mich von zu Hause mit dem VPN?")
    assert german["action"] == "converse" and "Englisch" in german["answer"]
    english = Chat(client).say("How do I connect to the VPN on my Mac?")
    assert english["action"] == "answer" and english["sources"]
