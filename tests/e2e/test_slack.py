"""deskmate in Slack, through the real app (fixture KB, real MiniLM, Chroma, SQLite) and real HTTP to a Slack Web
API on 127.0.0.1 (tests/e2e/slack_server.py): signed events and button presses in, Block Kit replies out."""

from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from app.channels.conversation import ChannelUser, ThreadKey
from app.main import create_app
from app.settings import Settings
from tests.conftest import REPO
from tests.e2e.slack_server import BOT_USER, SlackApiServer, event_body, press_body, signed_headers

pytestmark = pytest.mark.slow

TOKEN = "xoxb-test-0000-deskmate"
SECRET = "8f14e45fceea167a5a36dedd4bea2543"
PUBLIC_URL = "https://deskmate.example.test"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


@pytest.fixture(scope="module")
def slack():
    with SlackApiServer(token=TOKEN, emails={"UALICE": "alice@example.test", "UBOB": "bob@example.test"}) as server:
        yield server


@pytest.fixture(scope="module")
def client(tmp_path_factory, slack):
    settings = Settings(
        _env_file=None,
        data_dir=tmp_path_factory.mktemp("data"),
        kb_dir=REPO / "tests/fixtures/kb",
        slack_bot_token=TOKEN,
        slack_signing_secret=SECRET,
        slack_api_url=slack.url,
        public_url=PUBLIC_URL,
        channel_ticket_poll_s=0.2,
    )
    with TestClient(create_app(settings), base_url="http://localhost") as test_client:
        yield test_client


_ids = iter(range(1, 10_000))


def send_event(client, event: dict, *, retry: int | None = None, event_id: str | None = None, secret: str = SECRET):
    body = event_body(event, event_id=event_id or f"Ev{next(_ids):05d}")
    headers = signed_headers(secret, body, content_type=JSON)
    if retry is not None:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    return client.post("/slack/events", content=body, headers=headers)


def press(client, reply: dict, key: str, user: str = "UALICE"):
    """Click the button `key` on a reply deskmate posted."""
    [button] = [
        e
        for b in reply["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == f"deskmate:{key}"
    ]
    message = {"ts": reply["_ts"], "thread_ts": reply["thread_ts"], "text": reply["text"], "blocks": reply["blocks"]}
    body = press_body(
        user=user, channel=reply["channel"], message=message, action_id=button["action_id"], value=button["value"]
    )
    return client.post("/slack/events", content=body, headers=signed_headers(SECRET, body, content_type=FORM))


def buttons(reply: dict) -> list[str]:
    return [
        e["action_id"].removeprefix("deskmate:")
        for b in reply["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
    ]


def text_of(reply: dict) -> str:
    return (
        "\n".join(
            b["text"]["text"] if b["type"] == "section" else " ".join(e.get("text", "") for e in b.get("elements", []))
            for b in reply.get("blocks") or []
            if b["type"] in ("section", "context")
        )
        or reply["text"]
    )


def mention(channel: str, ts: str, text: str, user: str = "UALICE", thread_ts: str | None = None) -> dict:
    event = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER}> {text}", "channel": channel, "ts": ts}
    return event | ({"thread_ts": thread_ts} if thread_ts else {})


def replies_in(slack, channel: str, thread_ts: str, count: int) -> list[dict]:
    deadline = time.monotonic() + 180
    while True:
        mine = [p for p in slack.posts() if p.get("channel") == channel and p.get("thread_ts") == thread_ts]
        if len(mine) >= count:
            return mine
        assert time.monotonic() < deadline, f"{len(mine)} of {count} replies in {channel}/{thread_ts}"
        slack.wait_for("chat.postMessage", len(slack.posts()) + 1, timeout_s=180)


def test_a_mention_is_answered_in_its_thread_walked_through_and_escalated_to_a_ticket_the_thread_hears_about(
    client, slack
):
    resources = client.app.state.resources
    response = send_event(client, mention("CHELP", "1700000000.000100", "my vpn is not working on my windows laptop"))
    assert response.status_code == 200
    [first] = replies_in(slack, "CHELP", "1700000000.000100", 1)
    assert first["thread_ts"] == "1700000000.000100"  # in the thread, never in the channel
    assert {"works", "broken", "next"} <= set(buttons(first))
    sources = [b for b in first["blocks"] if b["type"] == "context" and "Sources:" in b["elements"][0]["text"]]
    assert sources and f"<{PUBLIC_URL}/view/" in sources[0]["elements"][0]["text"]
    assert "Step 1 of" in text_of(first)

    reply = first
    for attempt in range(1, 4):
        assert press(client, reply, "broken").status_code == 200
        reply = replies_in(slack, "CHELP", "1700000000.000100", attempt + 1)[-1]
        updates = slack.wait_for("chat.update", attempt)
        assert updates[-1]["ts"] == replies_in(slack, "CHELP", "1700000000.000100", attempt)[attempt - 1]["_ts"]
        assert "broken" not in buttons(updates[-1]) and "Still broken" in text_of(updates[-1])
    assert {"ticket_yes", "ticket_no"} <= set(buttons(reply)), text_of(reply)

    assert press(client, reply, "ticket_yes").status_code == 200
    created = replies_in(slack, "CHELP", "1700000000.000100", 5)[-1]
    [ticket] = resources.tickets.list_for(user_id="alice@example.test")
    assert ticket["id"] in text_of(created) and ticket["user_id"] == "alice@example.test"  # the Slack user

    resources.tickets.store.close(ticket["id"], "Replaced the VPN profile on the laptop.")
    update = replies_in(slack, "CHELP", "1700000000.000100", 6)[-1]
    assert ticket["id"] in update["text"] and "closed" in update["text"] and "VPN profile" in update["text"]


def test_a_double_click_and_a_retried_delivery_are_each_answered_once(client, slack):
    question = mention("CHELP", "1700000001.000100", "my vpn is not working on windows")
    send_event(client, question, event_id="EvOnce1")
    assert send_event(client, question, event_id="EvOnce1", retry=1).status_code == 200  # Slack's retry: acknowledged
    [answer] = replies_in(slack, "CHELP", "1700000001.000100", 1)
    assert press(client, answer, "broken").status_code == 200
    assert press(client, answer, "broken").status_code == 200  # the same message's button, clicked again
    replies_in(slack, "CHELP", "1700000001.000100", 2)
    send_event(client, mention("CHELP", "1700000002.000100", "how do I connect to the vpn"))
    replies_in(slack, "CHELP", "1700000002.000100", 1)  # a later event is answered: the earlier ones are done
    assert len([p for p in slack.posts() if p.get("thread_ts") == "1700000001.000100"]) == 2


def test_helpful_is_a_vote_in_the_feedback_store_and_someone_elses_click_changes_nothing(client, slack):
    feedback = client.app.state.resources.feedback
    send_event(client, mention("CHELP", "1700000008.000100", "how do I connect to the vpn", user="UBOB"))
    [answer] = replies_in(slack, "CHELP", "1700000008.000100", 1)
    updates = len(slack.posts("chat.update"))
    press(client, answer, "not_helpful", user="UALICE")  # not Alice's answer
    [note] = slack.wait_for("chat.postEphemeral", 1)
    assert note["user"] == "UALICE" and "<@UBOB>" in note["text"]
    before = feedback.stats()["votes"]["down"]
    press(client, answer, "not_helpful", user="UBOB")
    updated = slack.wait_for("chat.update", updates + 1)[-1]
    assert updated["ts"] == answer["_ts"] and "Marked not helpful" in text_of(updated)
    assert "helpful" not in buttons(updated) and "not_helpful" not in buttons(updated)
    deadline = time.monotonic() + 60
    while feedback.stats()["votes"]["down"] == before:
        assert time.monotonic() < deadline, "the vote never reached the feedback store"
        time.sleep(0.1)


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": JSON},  # unsigned
        {
            "X-Slack-Request-Timestamp": str(int(time.time())),
            "X-Slack-Signature": "v0=" + "0" * 64,
            "Content-Type": JSON,
        },
    ],
    ids=["unsigned", "forged"],
)
def test_an_unsigned_or_forged_event_is_refused_and_nothing_is_answered(client, slack, headers):
    before = len(slack.calls)
    body = event_body(mention("CHELP", "1700000003.000100", "my vpn is broken"), event_id="EvForged")
    response = client.post("/slack/events", content=body, headers=headers)
    assert response.status_code == 401
    time.sleep(0.5)
    assert len(slack.calls) == before


def test_a_replayed_event_outside_the_time_window_is_refused(client, slack):
    body = event_body(mention("CHELP", "1700000004.000100", "my vpn is broken"), event_id="EvOld")
    old = signed_headers(SECRET, body, timestamp=int(time.time()) - 600, content_type=JSON)
    assert client.post("/slack/events", content=body, headers=old).status_code == 401
    forged = signed_headers("another-secret-of-some-length-000", body, content_type=JSON)
    assert client.post("/slack/events", content=body, headers=forged).status_code == 401


def test_bots_its_own_messages_and_channel_chatter_get_no_reply(client, slack):
    before = len(slack.posts())
    send_event(
        client,
        {
            "type": "message",
            "user": "UALICE",
            "text": "lunch?",
            "channel": "CHELP",
            "channel_type": "channel",
            "ts": "1700000005.000100",
        },
    )
    send_event(
        client,
        {
            "type": "message",
            "bot_id": "BOTHER",
            "text": "deploy done",
            "channel": "DALICE",
            "channel_type": "im",
            "ts": "1700000005.000200",
        },
    )
    send_event(
        client,
        {
            "type": "message",
            "subtype": "bot_message",
            "text": "hi",
            "channel": "DALICE",
            "channel_type": "im",
            "ts": "1700000005.000300",
        },
    )
    send_event(
        client,
        {
            "type": "message",
            "user": "UBOB",
            "text": "how do I connect to the vpn",
            "channel": "DBOB",
            "channel_type": "im",
            "ts": "1700000005.000400",
        },
    )
    replies_in(slack, "DBOB", "1700000005.000400", 1)  # the direct message is answered …
    assert len(slack.posts()) == before + 1  # … and nothing else


def test_a_secret_pasted_in_a_channel_is_not_kept_and_the_person_is_told_to_change_it(client, slack):
    text = "my vpn password is Winter2026!xyz and it stopped working"
    send_event(client, mention("CHELP", "1700000006.000100", text, user="UBOB"))
    [reply] = replies_in(slack, "CHELP", "1700000006.000100", 1)
    assert "Everyone in this channel has seen" in text_of(reply) and "Winter2026!xyz" not in json.dumps(reply)
    thread = ThreadKey("slack", ("T0001", "CHELP", "1700000006.000100"))
    session = thread.session_id(ChannelUser("slack", "UBOB", "bob@example.test"))
    history = client.app.state.resources.chat.history(session)
    assert len(history) == 2 and all("Winter2026" not in m["content"] for m in history)


def test_a_rate_limited_post_is_sent_again_after_retry_after(client, slack):
    slack.rate_limit_next.add("chat.postMessage")
    send_event(
        client,
        {
            "type": "message",
            "user": "UBOB",
            "text": "how do I set up the printer",
            "channel": "DBOB",
            "channel_type": "im",
            "ts": "1700000007.000100",
        },
    )
    [reply] = replies_in(slack, "DBOB", "1700000007.000100", 1)
    assert "chat.postMessage" in slack.rate_limited and reply["text"]


def test_without_slack_settings_the_endpoint_says_how_to_turn_it_on(tmp_path):
    with TestClient(
        create_app(Settings(_env_file=None, data_dir=tmp_path / "d", kb_dir=REPO / "tests/fixtures/kb")),
        base_url="http://localhost",
    ) as c:
        response = c.post("/slack/events", content="{}", headers={"Content-Type": JSON})
    assert response.status_code == 404 and "DESKMATE_SLACK_BOT_TOKEN" in response.json()["detail"]
