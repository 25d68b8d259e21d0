"""deskmate in Microsoft Teams, through the real app (fixture KB, real MiniLM, Chroma, SQLite) and real HTTP to a
Bot Framework on 127.0.0.1 (tests/e2e/teams_server.py): signed activities in, Adaptive Cards out through the
Bot Connector with deskmate's own bearer token."""

from __future__ import annotations

import itertools
import json
import time

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.channels.conversation import ChannelUser
from app.channels.teams import TeamsThread
from app.main import create_app
from app.settings import Settings
from app.storage.schema import channel_deliveries
from tests.conftest import REPO
from tests.e2e.teams_server import BotFrameworkServer, message_activity

pytestmark = pytest.mark.slow

APP_ID = "00000000-1111-2222-3333-444444444444"
PASSWORD = "bot-secret-for-tests-only"
PUBLIC_URL = "https://deskmate.example.test"
MEMBERS = {
    "29:alice": {
        "id": "29:alice",
        "name": "Alice",
        "aadObjectId": "aad-alice",
        "userPrincipalName": "alice@example.test",
    },
    "29:bob": {"id": "29:bob", "name": "Bob", "aadObjectId": "aad-bob", "userPrincipalName": "bob@example.test"},
}
CHANNEL = "19:helpdesk@thread.tacv2"


@pytest.fixture(scope="module")
def bot_framework():
    with BotFrameworkServer(app_id=APP_ID, app_password=PASSWORD, members=MEMBERS) as server:
        yield server


@pytest.fixture(scope="module")
def client(tmp_path_factory, bot_framework):
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path_factory.mktemp("data"),
        kb_dir=REPO / "tests/fixtures/kb",
        teams_app_id=APP_ID,
        teams_app_password=PASSWORD,
        teams_openid_metadata_url=f"{bot_framework.url}/openid",
        teams_token_url=f"{bot_framework.url}/token",
        public_url=PUBLIC_URL,
        channel_ticket_poll_s=0.2,
    )
    with TestClient(create_app(settings), base_url="http://localhost") as test_client:
        yield test_client


_ids = itertools.count(1_700_000_000_100)


def send(client, server: BotFrameworkServer, activity: dict, **token):
    headers = server.signed_headers(**({"service_url": activity["serviceUrl"]} | token))
    return client.post("/api/messages", content=json.dumps(activity), headers=headers)


def ask_in_channel(client, server, text: str, *, user: str = "29:alice", aad: str = "aad-alice") -> str:
    """A new channel post mentioning deskmate; the reply chain's conversation id."""
    root = str(next(_ids))
    conversation = f"{CHANNEL};messageid={root}"
    activity = message_activity(
        activity_id=root,
        conversation=conversation,
        text=text,
        user=user,
        aad=aad,
        name=MEMBERS.get(user, {}).get("name", "Someone"),
        conversation_type="channel",
        service_url=server.url,
        mention_bot=True,
    )
    assert send(client, server, activity).status_code == 200
    return conversation


def card_of(post: dict) -> dict:
    [attachment] = post["body"]["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    return attachment["content"]


def buttons(card: dict) -> list[str]:
    return [a["data"]["deskmate"] for a in card.get("actions") or []]


def text_of(card: dict) -> str:
    return "\n".join(b.get("text", "") for b in card.get("body") or [])


def press(client, server, conversation: str, post: dict, key: str, *, user="29:alice", aad="aad-alice"):
    """Click `key` on a card deskmate posted: Teams sends the Action.Submit data as the activity's value."""
    [action] = [a for a in card_of(post)["actions"] if a["data"]["deskmate"] == key]
    activity = message_activity(
        activity_id=str(next(_ids)),
        conversation=conversation,
        user=user,
        aad=aad,
        name=MEMBERS.get(user, {}).get("name", "Someone"),
        conversation_type="channel",
        service_url=server.url,
        value=action["data"],
        reply_to=post["_id"],
    )
    return send(client, server, activity)


def test_a_channel_mention_is_answered_walked_through_escalated_and_the_ticket_change_is_posted_there(
    client, bot_framework
):
    resources = client.app.state.resources
    conversation = ask_in_channel(client, bot_framework, "my vpn is not working on my windows laptop")
    [first] = bot_framework.wait_for(1, conversation=conversation)  # in the reply chain, never a new post
    card = card_of(first)
    assert {"works", "broken", "next"} <= set(buttons(card))
    assert f"]({PUBLIC_URL}/view/" in text_of(card) and "Sources:" in text_of(card)
    assert "Step 1 of" in text_of(card)

    latest = first
    for attempt in range(1, 4):
        assert press(client, bot_framework, conversation, latest, "broken").status_code == 200
        posts = bot_framework.wait_for(attempt + 1, conversation=conversation)
        updates = bot_framework.wait_for(attempt, method="PUT")
        assert updates[-1]["activity_id"] == latest["_id"]  # the pressed card itself is updated …
        redrawn = card_of(updates[-1])
        assert "broken" not in buttons(redrawn) and "Still broken (Alice)" in text_of(redrawn)
        latest = posts[-1]  # … and the next step is a new card
    assert {"ticket_yes", "ticket_no"} <= set(buttons(card_of(latest))), text_of(card_of(latest))

    assert press(client, bot_framework, conversation, latest, "ticket_yes").status_code == 200
    created = bot_framework.wait_for(5, conversation=conversation)[-1]
    [ticket] = resources.tickets.list_for(user_id="alice@example.test")  # the Teams user, by their UPN
    assert ticket["user_id"] == "alice@example.test" and ticket["id"] in text_of(card_of(created))

    resources.tickets.store.close(ticket["id"], "Replaced the VPN profile on the laptop.")
    update = bot_framework.wait_for(6, conversation=conversation)[-1]["body"]
    assert ticket["id"] in update["text"] and "closed" in update["text"] and "VPN profile" in update["text"]


def test_a_double_click_and_a_retried_activity_are_each_answered_once(client, bot_framework):
    conversation = f"{CHANNEL};messageid=1700000009001"
    question = message_activity(
        activity_id="1700000009001",
        conversation=conversation,
        text="my vpn is not working on windows",
        conversation_type="channel",
        service_url=bot_framework.url,
        mention_bot=True,
    )
    assert send(client, bot_framework, question).status_code == 200
    assert send(client, bot_framework, question).status_code == 200  # Teams' retry: acknowledged, not answered
    [answer] = bot_framework.wait_for(1, conversation=conversation)
    assert press(client, bot_framework, conversation, answer, "broken").status_code == 200
    assert press(client, bot_framework, conversation, answer, "broken").status_code == 200  # the same card again
    bot_framework.wait_for(2, conversation=conversation)
    later = ask_in_channel(client, bot_framework, "how do I connect to the vpn")
    bot_framework.wait_for(1, conversation=later)  # a later question is answered: the earlier ones are done
    assert len(bot_framework.posts(conversation)) == 2


def test_a_vote_reaches_the_feedback_store_and_someone_elses_click_changes_nothing(client, bot_framework):
    feedback = client.app.state.resources.feedback
    conversation = ask_in_channel(client, bot_framework, "how do I connect to the vpn", user="29:bob", aad="aad-bob")
    [answer] = bot_framework.wait_for(1, conversation=conversation)
    updates = len(bot_framework.updates())
    press(client, bot_framework, conversation, answer, "not_helpful")  # Alice, on Bob's answer
    [note] = bot_framework.wait_for(2, conversation=conversation)[1:]
    assert "another person's question" in note["body"]["text"] and len(bot_framework.updates()) == updates
    before = feedback.stats()["votes"]["down"]
    press(client, bot_framework, conversation, answer, "not_helpful", user="29:bob", aad="aad-bob")
    redrawn = bot_framework.wait_for(updates + 1, method="PUT")[-1]
    assert redrawn["activity_id"] == answer["_id"] and "Marked not helpful" in text_of(card_of(redrawn))
    assert "helpful" not in buttons(card_of(redrawn)) and "not_helpful" not in buttons(card_of(redrawn))
    deadline = time.monotonic() + 60
    while feedback.stats()["votes"]["down"] == before:
        assert time.monotonic() < deadline, "the vote never reached the feedback store"
        time.sleep(0.1)


def _deliveries(client) -> int:
    database = client.app.state.resources.database
    with database.connect() as conn:
        return conn.execute(select(func.count()).select_from(channel_deliveries)).scalar_one()


@pytest.mark.parametrize(
    "token",
    [
        {"key": rsa.generate_private_key(public_exponent=65537, key_size=2048)},  # forged: not the service's key
        {"key_id": "a-key-the-service-never-published"},
        {"expires_in": -3600},  # expired an hour ago (beyond the clock-skew allowance)
        {"audience": "another-bot-app-id"},  # for another bot
        {"issuer": "https://evil.example.test"},  # not the Bot Framework
        {"service_url": "https://other-service.example.test/"},  # issued for another service
    ],
    ids=["forged", "unknown-key", "expired", "wrong-audience", "wrong-issuer", "other-service-url"],
)
def test_an_activity_with_a_bad_token_is_refused_and_nothing_is_stored_or_answered(client, bot_framework, token):
    conversation = f"a:personal-{next(_ids)}"
    activity = message_activity(
        activity_id=str(next(_ids)), conversation=conversation, text="my vpn is broken", service_url=bot_framework.url
    )
    deliveries = _deliveries(client)
    assert send(client, bot_framework, activity, **token).status_code == 401
    unsigned = client.post("/api/messages", content=json.dumps(activity), headers={"Content-Type": "application/json"})
    assert unsigned.status_code == 401
    assert _deliveries(client) == deliveries
    # the same activity, properly signed, is answered: the refused one left no trace that would swallow it
    assert send(client, bot_framework, activity).status_code == 200
    [reply] = bot_framework.wait_for(1, conversation=conversation)
    assert card_of(reply)["body"]


def test_bots_and_channel_messages_without_a_mention_get_no_reply(client, bot_framework):
    before = len(bot_framework.posts())
    chatter = message_activity(
        activity_id=str(next(_ids)),
        conversation=f"{CHANNEL};messageid=1700000009500",
        text="lunch?",
        conversation_type="channel",
        service_url=bot_framework.url,
    )
    other_bot = message_activity(
        activity_id=str(next(_ids)),
        conversation="a:personal-bot",
        text="deploy done",
        user="28:other-bot",
        role="bot",
        service_url=bot_framework.url,
    )
    direct = message_activity(
        activity_id=str(next(_ids)),
        conversation="a:personal-bob",
        text="how do I connect to the vpn",
        user="29:bob",
        aad="aad-bob",
        service_url=bot_framework.url,
    )
    for activity in (chatter, other_bot, direct):
        assert send(client, bot_framework, activity).status_code == 200
    bot_framework.wait_for(1, conversation="a:personal-bob")  # the personal chat is answered …
    assert len(bot_framework.posts()) == before + 1  # … and nothing else


def test_a_follow_up_in_the_reply_chain_continues_the_same_session(client, bot_framework):
    conversation = ask_in_channel(client, bot_framework, "my vpn is not working on my windows laptop")
    [first] = bot_framework.wait_for(1, conversation=conversation)
    follow_up = message_activity(
        activity_id=str(next(_ids)),
        conversation=conversation,
        text="still not working",
        conversation_type="channel",
        service_url=bot_framework.url,
        reply_to=first["_id"],
    )
    assert send(client, bot_framework, follow_up).status_code == 200  # no mention: deskmate already helps here
    [_, second] = bot_framework.wait_for(2, conversation=conversation)
    assert "Step 2 of" in text_of(card_of(second)), text_of(card_of(second))


def test_a_secret_pasted_in_a_channel_is_not_kept_and_the_person_is_told_to_change_it(client, bot_framework):
    text = "my vpn password is Winter2026!xyz and it stopped working"
    conversation = ask_in_channel(client, bot_framework, text, user="29:bob", aad="aad-bob")
    [reply] = bot_framework.wait_for(1, conversation=conversation)
    assert "Everyone in this channel has seen" in text_of(card_of(reply))
    assert "Winter2026!xyz" not in json.dumps(reply["body"])
    thread = TeamsThread(bot_framework.url, CHANNEL, conversation.partition(";messageid=")[2])
    session = thread.key("tenant-1").session_id(ChannelUser("teams", "aad-bob", "bob@example.test"))
    history = client.app.state.resources.chat.history(session)
    assert len(history) == 2 and all("Winter2026" not in m["content"] for m in history)


def test_a_throttled_reply_is_sent_again_after_retry_after(client, bot_framework):
    bot_framework.rate_limit_next = 1
    activity = message_activity(
        activity_id=str(next(_ids)),
        conversation="a:personal-throttled",
        text="how do I set up the printer",
        service_url=bot_framework.url,
    )
    assert send(client, bot_framework, activity).status_code == 200
    [reply] = bot_framework.wait_for(1, conversation="a:personal-throttled")
    assert bot_framework.rate_limit_next == 0 and card_of(reply)["body"]


def test_without_teams_settings_the_endpoint_says_how_to_turn_it_on(tmp_path):
    with TestClient(
        create_app(Settings(_env_file=None, data_dir=tmp_path / "d", kb_dir=REPO / "tests/fixtures/kb")),
        base_url="http://localhost",
    ) as c:
        response = c.post("/api/messages", content="{}", headers={"Content-Type": "application/json"})
    assert response.status_code == 404 and "DESKMATE_TEAMS_APP_ID" in response.json()["detail"]
