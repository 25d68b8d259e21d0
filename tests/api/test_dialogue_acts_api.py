"""Dialogue acts through POST /chat: the real app, real MiniLM, real Chroma, the real language model and SQLite
tickets, over the fixture knowledge base (one app for the module)."""

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from tests.api.conversation import Chat
from tests.conftest import FIXTURE_KB

pytestmark = pytest.mark.slow
CONTACT = "call +1 555 0100 or open https://it.example.test/portal"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(
        _env_file=None, data_dir=tmp_path_factory.mktemp("data"), kb_dir=FIXTURE_KB, handoff_contact=CONTACT
    )
    with TestClient(create_app(settings), base_url="http://localhost") as test_client:
        yield test_client


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
    assert german["action"] == "create_ticket" and "Englisch" in german["answer"] and "Ticket" in german["answer"]
    english = Chat(client).say("How do I connect to the VPN on my Mac?")
    assert english["action"] == "answer" and english["sources"]


def test_a_yes_with_urgency_creates_the_ticket_at_high_priority(client):
    chat = Chat(client)
    chat.say("please open a ticket, the kiosk printer jams every morning")
    created = chat.say("Great, please do, it's urgent!")
    assert created["ticket_event"] == "created" and "priority high" in created["answer"]


def test_shouting_for_a_person_mid_walkthrough_or_asking_for_someone_at_the_desk_is_a_handoff(client):
    chat = Chat(client)
    assert chat.say("My VPN keeps disconnecting")["action"] == "troubleshoot"
    shouted = chat.say("STOP WASTING MY TIME AND GIVE ME A HUMAN")
    assert shouted["action"] == "create_ticket" and CONTACT in shouted["answer"]
    desk = Chat(client).say("send someone from IT to my desk")
    assert desk["action"] == "create_ticket" and CONTACT in desk["answer"] and desk["ticket_event"] == "offered"


def test_access_for_oneself_and_a_colleague_is_a_request_and_a_canteen_question_is_out_of_scope(client):
    access = Chat(client).say("please give me and Sam access to the Falcon project site")
    assert access["action"] == "create_ticket" and "open a request" in access["answer"]
    canteen = Chat(client).say("what's on the canteen menu today?")
    assert canteen["action"] == "converse" and not canteen["ticket_offer"] and "IT help desk" in canteen["answer"]


def test_a_mac_named_after_a_walkthrough_restarts_it_for_the_mac(client):
    chat = Chat(client)
    chat.say("My VPN keeps disconnecting")
    reply = chat.say("and on my mac?")
    assert reply["action"] == "troubleshoot" and reply["user_os"] == "macos"
    assert reply["sources"][0]["source"] == "kb/vpn-connect.md" and reply["troubleshooting"]["step"] == 1


def test_a_german_question_gets_a_ticket_offer_in_german_that_ja_creates(client):
    chat = Chat(client)
    offer = chat.say("Mein Drucker im zweiten Stock druckt nicht mehr")
    assert offer["ticket_event"] == "offered" and "als Ticket an den IT-Servicedesk" in offer["answer"]
    assert chat.say("ja")["ticket_event"] == "created"
