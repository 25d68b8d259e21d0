"""The official `openai` client against deskmate's /v1 API, on a live uvicorn server (real HTTP, real stack)."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import httpx
import openai
import pytest
import uvicorn

from app.identity import make_user_token
from app.main import create_app
from tests.e2e.servers import free_port

pytestmark = pytest.mark.slow
SECRET = "portal-" + "Hq4Wd8Mz2Rk6Tn1Yb5Xc9Vf3Lg7Pj0Sa"


@contextmanager
def live(settings):
    """The real app served by uvicorn on 127.0.0.1, until the block ends."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 120
    while not server.started and thread.is_alive() and time.time() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from app.settings import Settings
    from tests.conftest import FIXTURE_KB

    settings = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("data"), kb_dir=FIXTURE_KB)
    with live(settings) as base_url:
        yield openai.OpenAI(base_url=base_url, api_key="not-needed", max_retries=0, timeout=120)


def test_the_openai_client_lists_deskmate_as_a_model_and_gets_a_cited_answer(client):
    assert [m.id for m in client.models.list().data] == ["deskmate"]
    completion = client.chat.completions.create(
        model="deskmate",
        messages=[
            {"role": "system", "content": "You are our help desk."},
            {"role": "user", "content": "how do I connect to the vpn on linux"},
        ],
    )
    answer = completion.choices[0].message.content
    assert completion.object == "chat.completion" and completion.choices[0].finish_reason == "stop"
    assert "[1]" in answer and "vpn" in answer.lower()
    extra = completion.model_extra["deskmate"]
    assert extra["action"] == "answer" and extra["sources"][0]["source"] == "kb/vpn-connect.md"
    assert completion.usage.completion_tokens > 0


def test_a_front_end_that_resends_the_history_continues_the_same_troubleshooting_session(client):
    messages = [{"role": "user", "content": "my vpn keeps disconnecting"}]
    first = client.chat.completions.create(model="deskmate", messages=messages)
    first_extra = first.model_extra["deskmate"]
    assert first_extra["action"] == "troubleshoot" and first_extra["troubleshooting"]["step"] == 1
    messages += [
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "still broken"},
    ]
    second = client.chat.completions.create(model="deskmate", messages=messages)
    second_extra = second.model_extra["deskmate"]
    assert second_extra["session_id"] == first_extra["session_id"]  # recognised by the resent history
    assert second_extra["troubleshooting"]["step"] == 2

    # an explicit conversation id works as well, and a fresh history starts a new session
    third = client.chat.completions.create(
        model="deskmate",
        messages=[{"role": "user", "content": "no luck"}],
        extra_body={"conversation_id": first_extra["session_id"]},
    )
    assert third.model_extra["deskmate"]["troubleshooting"]["step"] == 3
    other = client.chat.completions.create(model="deskmate", messages=[{"role": "user", "content": "hello"}])
    assert other.model_extra["deskmate"]["session_id"] != first_extra["session_id"]


def _continue(client, question: str, first, follow_up: str):
    return client.chat.completions.create(
        model="deskmate",
        messages=[
            {"role": "user", "content": question},
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": follow_up},
        ],
    ).model_extra["deskmate"]["session_id"]


def test_two_people_who_open_with_the_same_question_never_land_in_each_others_session(client):
    question = "my printer is jammed and shows error 13"
    alice = client.chat.completions.create(model="deskmate", messages=[{"role": "user", "content": question}])
    bob = client.chat.completions.create(model="deskmate", messages=[{"role": "user", "content": question}])
    alice_id, bob_id = (c.model_extra["deskmate"]["session_id"] for c in (alice, bob))
    assert alice_id != bob_id and alice.choices[0].message.content == bob.choices[0].message.content
    # the same resent history belongs to both: it continues neither, so nobody's next turn reaches the other
    assert _continue(client, question, alice, "I am Alice, employee 4711") not in (alice_id, bob_id)
    assert _continue(client, question, bob, "still jammed") not in (alice_id, bob_id)


def test_replaying_someones_first_exchange_does_not_reach_the_conversation_they_went_on_to_have(client):
    question = "outlook keeps asking for my password on the mac"
    first = client.chat.completions.create(model="deskmate", messages=[{"role": "user", "content": question}])
    session = first.model_extra["deskmate"]["session_id"]
    # the owner carries on (through /v1 with the conversation id, the web UI or /chat alike)
    client.chat.completions.create(
        model="deskmate",
        messages=[{"role": "user", "content": "my phone is 555-0142"}],
        extra_body={"conversation_id": session},
    )
    # someone who knows (or guesses) the first question and its answer replays them
    assert _continue(client, question, first, "what did I tell you before?") != session


def test_streaming_sends_chunks_that_add_up_to_the_answer(client):
    question = [{"role": "user", "content": "how do I connect to the vpn on linux"}]
    whole = client.chat.completions.create(model="deskmate", messages=question).choices[0].message.content
    chunks = list(client.chat.completions.create(model="deskmate", messages=question, stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == whole
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].model_extra["deskmate"]["sources"]


def test_bad_requests_get_openai_shaped_errors(client):
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.BadRequestError, match="last message must be the user"):
        client.chat.completions.create(model="deskmate", messages=[{"role": "assistant", "content": "hi"}])
    with pytest.raises(openai.BadRequestError, match="empty"):
        client.chat.completions.create(model="deskmate", messages=[{"role": "user", "content": "   "}])
    # a body that does not validate: the same {"error": {…}} shape, naming the field
    invalid = httpx.post(f"{client.base_url}chat/completions", json={"model": "deskmate"}, timeout=60)
    assert invalid.status_code == 422 and "detail" not in invalid.json()
    assert invalid.json()["error"]["message"] == "'messages' is required."
    assert invalid.json()["error"]["type"] == "invalid_request_error"
    # a body over the size limit, declared up front: refused before it is read, still in OpenAI's shape
    with pytest.raises(openai.APIStatusError, match="uploads are limited to") as too_large:
        client.chat.completions.create(model="deskmate", messages=[{"role": "user", "content": "x" * 21_100_000}])
    assert too_large.value.status_code == 413


def test_with_sign_in_the_user_field_carries_the_signed_caller(make_settings):
    with live(make_settings(kb_dir=None, user_token_secret=SECRET)) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="not-needed", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(model="deskmate", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.AuthenticationError, match="not a valid HS256"):
            client.chat.completions.create(
                model="deskmate",
                messages=[{"role": "user", "content": "hi"}],
                user=make_user_token("wrong-" + "x1" * 20, "alice"),
            )
        alice = client.chat.completions.create(
            model="deskmate", messages=[{"role": "user", "content": "hi"}], user=make_user_token(SECRET, "alice")
        )
        session = alice.model_extra["deskmate"]["session_id"]
        with pytest.raises(openai.NotFoundError) as refused:  # bob cannot continue alice's conversation
            client.chat.completions.create(
                model="deskmate",
                messages=[{"role": "user", "content": "and?"}],
                user=make_user_token(SECRET, "bob"),
                extra_body={"conversation_id": session},
            )
        assert "belongs to you" in refused.value.body["message"]  # OpenAI's error shape, read by its client
