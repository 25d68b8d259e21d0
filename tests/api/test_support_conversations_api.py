"""The product brief's example conversations and the escalation paths, through POST /chat on the bundled KB.

Real MiniLM, real Chroma, real SQLite tickets and sessions; the status page is a Statuspage-speaking
server on 127.0.0.1. One app for the module: indexing the bundled knowledge base takes a while.
"""

import time

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from bench.conversations import status_summary
from tests.api.conversation import Chat
from tests.conftest import REPO
from tests.e2e.servers import StatusPageServer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def status_page():
    with StatusPageServer(status_summary(outage=False)) as server:
        yield server


@pytest.fixture(scope="module")
def client(tmp_path_factory, status_page):
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path_factory.mktemp("data"),
        kb_dir=REPO / "kb",
        status_page_url=status_page.url,
        status_ttl_s=1,
    )
    with TestClient(create_app(settings), base_url="http://localhost") as test_client:
        yield test_client


def test_example_1_factual_vpn_question_gets_cited_steps(client):
    reply = Chat(client).say("How do I connect to the VPN on my Mac?")
    assert reply["action"] == "answer" and "vpn.brightwave.example" in reply["answer"]
    assert reply["sources"][0]["source"] == "kb/vpn-setup.md"


def test_example_2_printer_troubleshooting_to_resolution(client):
    chat = Chat(client)
    first = chat.say("My printer won't print")
    assert first["action"] == "troubleshoot" and first["needs_input"]
    assert first["troubleshooting"]["step"] == 1 and first["troubleshooting"]["total"] >= 3
    assert first["sources"][0]["source"] == "kb/printer-troubleshooting.html"
    second = chat.say("still not printing")
    assert second["troubleshooting"]["step"] == 2
    done = chat.say("It works!")
    assert done["troubleshooting"]["status"] == "resolved" and not done["needs_input"]


def test_example_3_status_check_during_an_outage(client, status_page):
    status_page.serve(status_summary(outage=True))
    time.sleep(1.2)  # the status cache's TTL (1 s here)
    try:
        outage = Chat(client).say("Is there an outage?")
        assert outage["action"] == "answer"
        assert "VPN" in outage["answer"] and "SharePoint" in outage["answer"]
        assert outage["incidents"][0]["name"] == "VPN connectivity issues"
        problem = Chat(client).say("my VPN keeps disconnecting")
        assert problem["action"] == "answer" and "VPN connectivity issues" in problem["answer"]
        assert client.get("/status").json()["incidents"][0]["name"] == "VPN connectivity issues"
    finally:
        status_page.serve(status_summary(outage=False))
        time.sleep(1.2)


def test_example_4_vague_message_gets_a_clarifying_question(client):
    reply = Chat(client).say("It's not working")
    assert reply["action"] == "clarify" and reply["is_clarifying"] and reply["answer"].endswith("?")


def test_example_5_password_is_redacted_and_the_user_told(client):
    reply = Chat(client).say("My password abc123 doesn't work for VPN")
    assert reply["redaction_notice"] and "abc123" not in reply["answer"]
    assert reply["answer"].startswith("⚠️")


def test_three_failed_steps_escalate_to_one_confirmed_ticket_that_closes_when_it_works(client):
    chat = Chat(client)
    chat.say("my vpn keeps disconnecting", user_os="windows")
    chat.say("still broken")
    chat.say("no luck")
    offer = chat.say("still the same")
    assert offer["ticket_event"] == "offered" and offer["ticket_offer"]["steps_tried"] == 3
    assert client.get("/tickets", params={"session_id": chat.session}).json()["tickets"] == []  # not yet
    created = chat.say("yes")
    ticket_id = created["ticket"]["id"]
    assert created["ticket_event"] == "created" and ticket_id in created["answer"]

    again = chat.say("please open a ticket for the vpn")  # the same escalation twice
    assert again["ticket_event"] == "existing" and again["ticket"]["id"] == ticket_id
    assert len(client.get("/tickets", params={"session_id": chat.session}).json()["tickets"]) == 1

    stored = client.get(f"/tickets/{ticket_id}").json()
    assert stored["os"] == "Windows" and [s["outcome"] for s in stored["steps_tried"]] == ["failed"] * 3

    closed = chat.say("it works now")
    assert closed["ticket_event"] == "closed"
    assert client.get(f"/tickets/{ticket_id}").json()["status"] == "closed"


def test_ticket_status_question_finds_the_conversations_ticket(client):
    chat = Chat(client)
    chat.say("please open a ticket, teams screen sharing is greyed out")
    created = chat.say("yes")
    listing = chat.say("what's the status of my ticket?")
    assert listing["action"] == "search_tickets" and created["ticket"]["id"] in listing["answer"]
