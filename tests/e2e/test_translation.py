"""Messages in another language with an LLM configured, at the protocol level: the real app over HTTP talks to
an OpenAI-compatible server on 127.0.0.1 that translates, decides and answers (scripted by prompt)."""

import json

import pytest

from tests.e2e.servers import OpenAICompatibleServer

pytestmark = pytest.mark.slow
GERMAN = "Wie verbinde ich mich auf meinem Mac mit dem VPN?"
ENGLISH = "How do I connect to the VPN on my Mac?"
ANSWER = "Open Secure Client, type vpn.example.test and click Connect [1]."
GERMAN_ANSWER = "Öffnen Sie Secure Client, geben Sie vpn.example.test ein und klicken Sie auf Connect [1]."


def model(request: dict) -> str:
    """What the model says, by the prompt it was sent."""
    prompt = request["body"]["messages"][-1]["content"]
    if "into English, for searching" in prompt:
        return ENGLISH
    if prompt.startswith("Decide the next action"):
        return json.dumps({"reasoning": "the VPN article covers it", "action": "answer"})
    if "Translate deskmate's reply" in prompt:
        return GERMAN_ANSWER
    return ANSWER


def test_a_german_question_is_searched_in_english_and_answered_in_german(serve):
    with OpenAICompatibleServer() as server:
        server.default_reply = model
        with serve(llm_base_url=f"{server.url}/v1", llm_model="stub") as client:
            reply = client.post("/chat", json={"message": GERMAN}).json()
    assert reply["answer"].startswith(GERMAN_ANSWER) and reply["fallback_notice"] is None
    assert reply["sources"][0]["source"] == "kb/vpn-connect.md"
    prompts = [r["body"]["messages"][-1]["content"] for r in server.requests]
    # (the LLM's redactor may still take a German word for a name: the end of the message is checked)
    assert 'language code "de") into English' in prompts[0] and "meinem Mac mit dem VPN?" in prompts[0]
    assert any(ENGLISH in p and "<source" in p for p in prompts[1:-1])  # the answer step read the English question
    assert 'into German (language code "de")' in prompts[-1] or 'code "de")' in prompts[-1]
    assert ANSWER in prompts[-1]


def test_a_translation_the_server_refuses_ends_in_the_notice_in_the_users_language(serve):
    with OpenAICompatibleServer([500, 500, 500]) as server:
        with serve(llm_base_url=f"{server.url}/v1", llm_model="stub") as client:
            reply = client.post("/chat", json={"message": "Comment me connecter au VPN depuis chez moi ?"}).json()
    assert "anglais" in reply["answer"] and reply["fallback_notice"]
    assert reply["sources"] == []
